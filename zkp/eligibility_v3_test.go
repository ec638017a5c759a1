package zkp

import (
	"math/big"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/consensys/gnark/test"
	"github.com/iden3/go-iden3-crypto/babyjub"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/credential"
)

// payerKey is a fixed test issuer key.
func payerKey() babyjub.PrivateKey {
	var k babyjub.PrivateKey
	for i := range k {
		k[i] = byte(i + 1)
	}
	return k
}

func testTerms() credential.Terms {
	return credential.Terms{
		MemberID: "W123456789", Salt: "123456789012345678901234567890",
		PayerID: "60054", PlanID: "PPO-GOLD", Status: "active",
		Start: "2026-01-01", End: "2026-12-31",
		Deductible: 1500, DeductibleMet: 1500, Copay: 25,
		Expires: "2026-12-31", Nonce: 7,
		Excluded: []string{"PROC005"}, Overrides: map[string]int{"PROC002": 70},
	}
}

func signed(t *testing.T, terms credential.Terms) *credential.Credential {
	t.Helper()
	c, err := credential.Sign(payerKey(), terms)
	require.NoError(t, err)
	return c
}

var june = time.Date(2026, 6, 1, 15, 0, 0, 0, time.UTC)

func eligIn(c *credential.Credential, code string, day time.Time, eligible bool, pct int, preAuth bool) EligibilityV3Input {
	return EligibilityV3Input{Credential: c, ProcedureCode: code, ServiceDate: day, Eligible: eligible, CoveragePct: pct, PreAuth: preAuth}
}

func solveV2(t *testing.T, a frontend.Circuit) error {
	t.Helper()
	return test.IsSolved(&EligibilityV3Circuit{}, a, ecc.BN254.ScalarField())
}

// The native rules agree with the circuit for the rule's every branch.
func TestEligibilityV3Rules(t *testing.T) {
	t.Parallel()
	c := signed(t, testTerms())
	inactive := testTerms()
	inactive.Status = "inactive"
	for name, tc := range map[string]EligibilityV3Input{
		"ok/base class percent": eligIn(c, "70551", june, true, 80, true),  // PROC001 80 %, pre-auth
		"ok/class override":     eligIn(c, "71046", june, true, 70, false), // a PROC002 code: override 70
		"ok/class code itself":  eligIn(c, "proc002", june, true, 70, false),
		"ok/excluded class":     eligIn(c, "PROC005", june, false, 0, true),
		"ok/before the window":  eligIn(c, "70551", time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC), false, 0, true),
		"ok/inactive":           eligIn(signed(t, inactive), "70551", june, false, 0, true),
	} {
		a, op, err := eligibilityV3Statement(tc, big.NewInt(42))
		require.NoError(t, err, name)
		require.NoError(t, solveV2(t, a), name)
		assert.Len(t, op.Fields, len(eligibilityV3Fields))
		for i, f := range op.Fields {
			assert.Equal(t, eligibilityV3Fields[i].Name, f.Name)
		}
		_, err = newStatement(op) // names, texts and nonce follow the schema
		require.NoError(t, err, name)
	}
}

// Every soundness rule: a witness that breaks it does not satisfy the
// circuit (so no proof exists), and the native check refuses the claim.
func TestEligibilityV3Soundness(t *testing.T) {
	t.Parallel()
	c := signed(t, testTerms())
	good, _, err := eligibilityV3Statement(eligIn(c, "70551", june, true, 80, true), big.NewInt(42))
	require.NoError(t, err)
	require.NoError(t, solveV2(t, good))

	other := babyjub.PrivateKey{9}
	otherHash, err := credential.IssuerKeyHash(other.Public())
	require.NoError(t, err)

	mutate := map[string]func(a *EligibilityV3Circuit){
		"altered credential field (copay)": func(a *EligibilityV3Circuit) { a.Credential.Fields[fCopay] = big.NewInt(1) },
		"altered exclusion":                func(a *EligibilityV3Circuit) { a.Credential.Fields[fExcluded] = big.NewInt(0) },
		"forged signature":                 func(a *EligibilityV3Circuit) { a.Credential.S = big.NewInt(12345) },
		"wrong issuer key hash":            func(a *EligibilityV3Circuit) { a.IssuerKeyHash = otherHash },
		"another issuer's key": func(a *EligibilityV3Circuit) {
			a.Credential.KeyX, a.Credential.KeyY = other.Public().X, other.Public().Y
		},
		"day outside the window":         func(a *EligibilityV3Circuit) { a.ServiceDay = 20454 - 1 },
		"day past expiry":                func(a *EligibilityV3Circuit) { a.ServiceDay = 20818 + 1 },
		"code not in the catalogue":      func(a *EligibilityV3Circuit) { a.Procedure = big.NewInt(12345) },
		"false eligible":                 func(a *EligibilityV3Circuit) { a.Eligible = 0 },
		"false coverage percent":         func(a *EligibilityV3Circuit) { a.CoveragePct = 100 },
		"false pre-authorisation":        func(a *EligibilityV3Circuit) { a.PreAuth = 0 },
		"false deductible met":           func(a *EligibilityV3Circuit) { a.DeductibleMet = 0 },
		"another procedure, same digest": func(a *EligibilityV3Circuit) { a.Procedure = mustField(t, "70552") },
		"wrong digest":                   func(a *EligibilityV3Circuit) { a.Digest = big.NewInt(1) },
		"wrong circuit id":               func(a *EligibilityV3Circuit) { a.CircuitID = CircuitID(CircuitPrescriptionV4) },
	}
	for name, m := range mutate {
		a := *good
		m(&a)
		assert.Error(t, solveV2(t, &a), name)
	}

	// A mismatched class: the digest opened with another class code (the
	// class is selected by the code's catalogue row, not chosen).
	_, op, err := eligibilityV3Statement(eligIn(c, "71046", june, true, 70, false), big.NewInt(42))
	require.NoError(t, err)
	op.Fields[5].Value = mustField(t, "PROC001")
	d, err := op.Recompute()
	require.NoError(t, err)
	a := *good
	a.Procedure, a.Digest = mustField(t, "71046"), d
	assert.Error(t, solveV2(t, &a), "class of another row")

	// The native checks refuse the same claims before the solver would.
	for name, in := range map[string]EligibilityV3Input{
		"false eligible": eligIn(c, "70551", june, false, 0, true),
		"false percent":  eligIn(c, "70551", june, true, 90, true),
		"false pre-auth": eligIn(c, "70551", june, true, 80, false),
		"expired":        eligIn(c, "70551", time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), false, 0, true),
		"bad signature":  eligIn(tampered(c), "70551", june, true, 80, true),
	} {
		_, _, err := eligibilityV3Statement(in, big.NewInt(42))
		assert.ErrorIs(t, err, ErrUnsatisfied, name)
	}
	_, _, err = eligibilityV3Statement(eligIn(c, "99999", june, true, 80, true), big.NewInt(42))
	assert.ErrorIs(t, err, ErrRecordTooLarge, "not catalogued")
}

func tampered(c *credential.Credential) *credential.Credential {
	t := *c
	t.Terms.Copay = 5
	return &t
}

func mustField(t *testing.T, code string) *big.Int {
	v, err := credential.StringField("code", code)
	require.NoError(t, err)
	return v
}

func TestEligibilityV3Constraints(t *testing.T) {
	t.Parallel()
	ccs, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, &EligibilityV3Circuit{})
	require.NoError(t, err)
	t.Logf("eligibility-v3: %d constraints, %d public inputs", ccs.GetNbConstraints(), ccs.GetNbPublicVariables()-1)
	assert.Equal(t, 3, ccs.GetNbPublicVariables()-1)
}

// A real Groth16 proof with the System's keys verifies, and carries exactly
// [issuerKeyHash, digest, circuitId]; the digest opens with iden3's Poseidon.
func TestProveEligibilityV3(t *testing.T) {
	t.Parallel()
	p, err := NewProver(testSys, WithTimeout(time.Minute))
	require.NoError(t, err)
	v, err := NewVerifier(testSys)
	require.NoError(t, err)
	c := signed(t, testTerms())
	proof, st, err := p.ProveEligibilityV3(t.Context(), eligIn(c, "70551", june, true, 80, true))
	require.NoError(t, err)
	require.NoError(t, v.Verify(t.Context(), proof))
	ikh, digest, cid, ok := proof.Statement()
	require.True(t, ok)
	wantIKH, err := c.KeyHash()
	require.NoError(t, err)
	assert.Equal(t, wantIKH, ikh)
	assert.Equal(t, st.Digest, digest)
	assert.Equal(t, CircuitID(CircuitEligibilityV3), cid)
	require.NoError(t, st.Check())

	// Two statements of the same decision differ (fresh salt).
	_, st2, err := p.ProveEligibilityV3(t.Context(), eligIn(c, "70551", june, true, 80, true))
	require.NoError(t, err)
	assert.NotEqual(t, st.Digest, st2.Digest)

	// A public input changed: the proof no longer verifies.
	proof.Public[1].SetUint64(1)
	assert.ErrorIs(t, v.Verify(t.Context(), proof), ErrInvalidProof)
}

func credentialSign(t credential.Terms) (*credential.Credential, error) {
	return credential.Sign(payerKey(), t)
}
