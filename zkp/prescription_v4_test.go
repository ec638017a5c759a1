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
	"github.com/healthagents/healthagents/prescription"
	"github.com/healthagents/healthagents/zkp/statement"
)

func solveRx(t *testing.T, a frontend.Circuit) error {
	t.Helper()
	return test.IsSolved(&PrescriptionV4Circuit{}, a, ecc.BN254.ScalarField())
}

func TestPrescriptionV4(t *testing.T) {
	t.Parallel()
	terms := testTerms()
	terms.Excluded = []string{"6809"} // metformin excluded by this plan
	c := signed(t, terms)
	drugs := []string{"11289", "6809", "1191", "36567", "4493"}
	a, op, outs, err := prescriptionV4Statement(PrescriptionV4Input{Credential: c, Drugs: drugs, ServiceDate: june}, big.NewInt(9))
	require.NoError(t, err)
	require.NoError(t, solveRx(t, a))
	require.Len(t, outs, len(drugs))
	known := outs
	assert.True(t, outs[0].Covered)
	assert.False(t, outs[1].Covered, "excluded")
	sc, err := Schema(CircuitPrescriptionV4)
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
	lapsed, _, outs, err := prescriptionV4Statement(PrescriptionV4Input{Credential: c, Drugs: drugs[:1], ServiceDate: time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)}, big.NewInt(9))
	require.NoError(t, err)
	require.NoError(t, solveRx(t, lapsed))
	assert.False(t, outs[0].Covered)

	for name, m := range map[string]func(a *PrescriptionV4Circuit){
		"false covered":           func(a *PrescriptionV4Circuit) { a.Covered[1] = 1 },
		"false tier":              func(a *PrescriptionV4Circuit) { a.Tier[0] = 4 },
		"uncatalogued drug":       func(a *PrescriptionV4Circuit) { a.Drugs[0] = big.NewInt(424242) },
		"empty slot claimed":      func(a *PrescriptionV4Circuit) { a.Covered[7] = 1 },
		"altered credential":      func(a *PrescriptionV4Circuit) { a.Credential.Fields[fExcluded] = big.NewInt(0) },
		"day outside window":      func(a *PrescriptionV4Circuit) { a.ServiceDay = 20000 },
		"wrong digest":            func(a *PrescriptionV4Circuit) { a.Digest = big.NewInt(5) },
		"another circuit's id":    func(a *PrescriptionV4Circuit) { a.CircuitID = CircuitID(CircuitEligibilityV3) },
		"another issuer key hash": func(a *PrescriptionV4Circuit) { a.IssuerKeyHash = big.NewInt(77) },
	} {
		b := *a
		m(&b)
		assert.Error(t, solveRx(t, &b), name)
	}

	// An entry the service could not identify: no drug is valid, the
	// opening lists it, and a proof cannot claim otherwise.
	unknown := prescription.Facts{Unidentified: []prescription.Unidentified{{Kind: "medication", Entry: "Tylenol PM"}, {Kind: "allergy", Entry: "codeine"}}}
	ua, uop, uouts, err := prescriptionV4Statement(PrescriptionV4Input{Credential: c, Drugs: drugs, ServiceDate: june, Facts: unknown}, big.NewInt(9))
	require.NoError(t, err)
	require.NoError(t, solveRx(t, ua))
	for i, o := range uouts {
		assert.False(t, o.Valid, drugs[i])
		assert.Equal(t, known[i].InteractionRank, o.InteractionRank, "the findings are still stated")
	}
	f := uop.Fields[len(uop.Fields)-2]
	assert.Equal(t, "unidentified", f.Name)
	assert.Equal(t, `["medication: Tylenol PM","allergy: codeine"]`, f.Text)
	assert.Equal(t, statement.EntriesValue(f.Text), f.Value)
	assert.Equal(t, "interaction=none contraindication=none valid=false", uop.Fields[12].Text, "drug_2 (metformin) has no finding, yet is not valid")
	for name, m := range map[string]func(a *PrescriptionV4Circuit){
		"valid claimed with an unidentified entry": func(a *PrescriptionV4Circuit) { a.Clinical.Valid[1] = 1 },
		"unidentified entries dropped":             func(a *PrescriptionV4Circuit) { a.Clinical.Unidentified = 0 },
	} {
		b := *ua
		m(&b)
		assert.Error(t, solveRx(t, &b), name)
	}
	none := *a
	none.Clinical.Unidentified = 1
	assert.Error(t, solveRx(t, &none), "an entry added to a statement whose drugs are valid")
	f = op.Fields[len(op.Fields)-2]
	assert.Equal(t, "unidentified", f.Name)
	assert.Empty(t, f.Text)
	assert.Zero(t, f.Value.Sign())

	_, _, _, err = prescriptionV4Statement(PrescriptionV4Input{Credential: c, Drugs: make([]string, MaxDrugs+1), ServiceDate: june}, big.NewInt(9))
	assert.ErrorIs(t, err, ErrRecordTooLarge)
	_, _, _, err = prescriptionV4Statement(PrescriptionV4Input{Credential: tampered(c), Drugs: drugs, ServiceDate: june}, big.NewInt(9))
	assert.ErrorIs(t, err, ErrUnsatisfied)
}

func names(fs []statement.Field) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Name
	}
	return out
}

func TestProvePrescriptionV4(t *testing.T) {
	t.Parallel()
	p, err := NewProver(testSys, WithTimeout(time.Minute))
	require.NoError(t, err)
	v, err := NewVerifier(testSys)
	require.NoError(t, err)
	c := signed(t, testTerms())
	proof, st, outs, err := p.ProvePrescriptionV4(t.Context(), PrescriptionV4Input{Credential: c, Drugs: []string{"11289", "6809"}, ServiceDate: june})
	require.NoError(t, err)
	require.NoError(t, v.Verify(t.Context(), proof))
	require.Len(t, outs, 2)
	_, digest, cid, ok := proof.Statement()
	require.True(t, ok)
	assert.Equal(t, st.Digest, digest)
	assert.Equal(t, CircuitID(CircuitPrescriptionV4), cid)
	require.NoError(t, st.Check())

	// An unidentified entry: proven, verified, and shown in the opening.
	facts := prescription.Facts{Unidentified: []prescription.Unidentified{{Kind: "medication", Entry: "99999999"}}}
	proof, st, outs, err = p.ProvePrescriptionV4(t.Context(), PrescriptionV4Input{Credential: c, Drugs: []string{"6809"}, ServiceDate: june, Facts: facts})
	require.NoError(t, err)
	require.NoError(t, v.Verify(t.Context(), proof))
	require.NoError(t, st.Check())
	assert.False(t, outs[0].Valid)
	f := st.Opening.Fields[len(st.Opening.Fields)-2]
	assert.Equal(t, "unidentified", f.Name)
	assert.Equal(t, `["medication: 99999999"]`, f.Text)
}

func TestPrescriptionV4Constraints(t *testing.T) {
	t.Parallel()
	ccs, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, &PrescriptionV4Circuit{})
	require.NoError(t, err)
	t.Logf("prescription-v4: %d constraints", ccs.GetNbConstraints())
	// prescription-v2 was 16 032, just under a 2^14 domain; the
	// unidentified field must not double the FFT and MSM sizes.
	assert.LessOrEqual(t, ccs.GetNbConstraints(), 1<<14)
	cat, err := formulary()
	require.NoError(t, err)
	cl := cat.clinical
	t.Logf("clinical table: %d sides, %d partners, %d trigger sets, %d triggers, digit widths %v (%d bits)", len(cl.sides), len(cl.partners), len(cl.tsets), len(cl.rules.Triggers), cl.width, cl.total)
	assert.Equal(t, 3, ccs.GetNbPublicVariables()-1)
	_ = credential.NumFields
}
