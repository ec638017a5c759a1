package zkp

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConstraintCeilings fails when a circuit grows past what issue 30
// brought it to (docs/benchmarks.md, "Fewer constraints"), so a change
// that adds constraints is a decision, not an accident. The ceilings leave
// a little room; the domains (the next powers of two: 8 192 and 16 384)
// are what proving time follows.
func TestConstraintCeilings(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		circuit frontend.Circuit
		ceiling int
	}{
		// eligibility-v2 was 8 146, prescription-v3 16 080.
		{CircuitEligibilityV3, &EligibilityV3Circuit{}, 5700},
		{CircuitPrescriptionV4, &PrescriptionV4Circuit{}, 13650},
	} {
		ccs, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, c.circuit)
		require.NoError(t, err)
		t.Logf("%s: %d constraints (ceiling %d)", c.name, ccs.GetNbConstraints(), c.ceiling)
		assert.LessOrEqual(t, ccs.GetNbConstraints(), c.ceiling, c.name)
	}
}
