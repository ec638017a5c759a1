package zkp

import (
	"math/big"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/consensys/gnark/test"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/credential"
	"github.com/healthagents/healthagents/zkp/statement"
)

func solveRx(t *testing.T, a frontend.Circuit) error {
	t.Helper()
	return test.IsSolved(&PrescriptionV2Circuit{}, a, ecc.BN254.ScalarField())
}

func TestPrescriptionV2(t *testing.T) {
	t.Parallel()
	terms := testTerms()
	terms.Excluded = []string{"6809"} // metformin excluded by this plan
	c := signed(t, terms)
	drugs := []string{"11289", "6809", "1191", "36567", "4493"}
	a, op, outs, err := prescriptionV2Statement(PrescriptionV2Input{Credential: c, Drugs: drugs, ServiceDate: june}, big.NewInt(9))
	require.NoError(t, err)
	require.NoError(t, solveRx(t, a))
	require.Len(t, outs, len(drugs))
	assert.True(t, outs[0].Covered)
	assert.False(t, outs[1].Covered, "excluded")
	sc, err := Schema(CircuitPrescriptionV2)
	require.NoError(t, err)
	assert.Equal(t, sc.Names(), names(op.Fields))
	_, err = newStatement(op) // names, texts and nonce follow the schema
	require.NoError(t, err)
	cat, err := formulary()
	require.NoError(t, err)
	for i, o := range outs {
		assert.Equal(t, cat.tier[drugs[i]], o.Tier)
	}

	// Lapsed: not covered, still provable.
	lapsed, _, outs, err := prescriptionV2Statement(PrescriptionV2Input{Credential: c, Drugs: drugs[:1], ServiceDate: time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)}, big.NewInt(9))
	require.NoError(t, err)
	require.NoError(t, solveRx(t, lapsed))
	assert.False(t, outs[0].Covered)

	for name, m := range map[string]func(a *PrescriptionV2Circuit){
		"false covered":           func(a *PrescriptionV2Circuit) { a.Covered[1] = 1 },
		"false tier":              func(a *PrescriptionV2Circuit) { a.Tier[0] = 4 },
		"uncatalogued drug":       func(a *PrescriptionV2Circuit) { a.Drugs[0] = big.NewInt(424242) },
		"empty slot claimed":      func(a *PrescriptionV2Circuit) { a.Covered[7] = 1 },
		"altered credential":      func(a *PrescriptionV2Circuit) { a.Credential.Fields[fExcluded] = big.NewInt(0) },
		"day outside window":      func(a *PrescriptionV2Circuit) { a.ServiceDay = 20000 },
		"wrong digest":            func(a *PrescriptionV2Circuit) { a.Digest = big.NewInt(5) },
		"another circuit's id":    func(a *PrescriptionV2Circuit) { a.CircuitID = CircuitID(CircuitEligibilityV2) },
		"another issuer key hash": func(a *PrescriptionV2Circuit) { a.IssuerKeyHash = big.NewInt(77) },
	} {
		b := *a
		m(&b)
		assert.Error(t, solveRx(t, &b), name)
	}

	_, _, _, err = prescriptionV2Statement(PrescriptionV2Input{Credential: c, Drugs: make([]string, MaxDrugs+1), ServiceDate: june}, big.NewInt(9))
	assert.ErrorIs(t, err, ErrRecordTooLarge)
	_, _, _, err = prescriptionV2Statement(PrescriptionV2Input{Credential: tampered(c), Drugs: drugs, ServiceDate: june}, big.NewInt(9))
	assert.ErrorIs(t, err, ErrUnsatisfied)
}

func names(fs []statement.Field) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Name
	}
	return out
}

func TestProvePrescriptionV2(t *testing.T) {
	t.Parallel()
	p, err := NewProver(testSys, WithTimeout(time.Minute))
	require.NoError(t, err)
	v, err := NewVerifier(testSys)
	require.NoError(t, err)
	c := signed(t, testTerms())
	proof, st, outs, err := p.ProvePrescriptionV2(t.Context(), PrescriptionV2Input{Credential: c, Drugs: []string{"11289", "6809"}, ServiceDate: june})
	require.NoError(t, err)
	require.NoError(t, v.Verify(t.Context(), proof))
	require.Len(t, outs, 2)
	_, digest, cid, ok := proof.Statement()
	require.True(t, ok)
	assert.Equal(t, st.Digest, digest)
	assert.Equal(t, CircuitID(CircuitPrescriptionV2), cid)
	require.NoError(t, st.Check())
}

func TestPrescriptionV2Constraints(t *testing.T) {
	t.Parallel()
	ccs, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, &PrescriptionV2Circuit{})
	require.NoError(t, err)
	t.Logf("prescription-v2: %d constraints", ccs.GetNbConstraints())
	cat, err := formulary()
	require.NoError(t, err)
	cl := cat.clinical
	t.Logf("clinical table: %d sides, %d partners, %d trigger sets, %d triggers, digit widths %v (%d bits)", len(cl.sides), len(cl.partners), len(cl.tsets), len(cl.rules.Triggers), cl.width, cl.total)
	assert.Equal(t, 3, ccs.GetNbPublicVariables()-1)
	_ = credential.NumFields
}
