package app_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/zkp"
)

// TestPrescriptionZKVerifiedOnlyWhenCovered: a prescription's
// zk_proof_verified ("eligibility verified cryptographically") is true for a
// verified proof that the plan covers the drug, and false for a proof,
// verified on chain just the same, that it does not (a lapsed policy). The
// prescription stays valid either way: validity is the clinical checks'.
func TestPrescriptionZKVerifiedOnlyWhenCovered(t *testing.T) {
	a := shared(t)
	for name, tc := range map[string]struct {
		coverage func(*record.Coverage)
		covered  bool
	}{
		"ok/active policy":                  {func(*record.Coverage) {}, true},
		"fail/lapsed policy (window ended)": {func(c *record.Coverage) { c.Start, c.End = "2020-01-01", "2020-12-31" }, false},
		"fail/inactive policy":              {func(c *record.Coverage) { c.Status = record.StatusInactive }, false},
		"fail/drug excluded by the plan":    {func(c *record.Coverage) { c.ExcludedProcedures = []string{"6809"} }, false},
	} {
		t.Run(name, func(t *testing.T) {
			env := sealed(t, a, func(r *record.Record) {
				r.Medications = nil
				tc.coverage(r.Coverage)
			})
			res, err := a.Service.ValidatePrescription(t.Context(), env, "6809")
			require.NoError(t, err)
			assert.True(t, res.Valid, "validity follows the clinical checks")
			assert.Equal(t, tc.covered, res.ZKProofVerified)

			// Either way the statement was proven and verified on chain; the
			// proof's Covered output is what differs.
			require.NotNil(t, res.Proof)
			assert.True(t, res.Proof.Verified)
			assert.NotEmpty(t, res.Proof.TxHash)
			proof, err := zkp.ParseProof(res.Proof.Circuit, res.Proof.ProofData, res.Proof.PublicInputs)
			require.NoError(t, err)
			covered, err := proof.Prescription()
			require.NoError(t, err)
			assert.Equal(t, tc.covered, covered)
			last := res.Proof.PublicInputs[len(res.Proof.PublicInputs)-1]
			assert.True(t, strings.HasSuffix(last, map[bool]string{true: "1", false: "0"}[tc.covered]), last)
		})
	}
}
