package attest_test

import (
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/attest"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/credential"
	"github.com/healthagents/healthagents/zkp"
)

// statement is a real circuit's proof in the form the registry takes.
type statement struct {
	proof  [8]*big.Int
	inputs []*big.Int
}

func onChain(t testing.TB, p *zkp.Proof) statement {
	t.Helper()
	proof, err := chain.ProofFromGnark(p.Groth16)
	require.NoError(t, err)
	return statement{proof: proof, inputs: p.PublicBig()}
}

// with returns a copy of st changed by f.
func (st statement) with(f func(proof *[8]*big.Int, in []*big.Int)) statement {
	var out statement
	for i, v := range st.proof {
		out.proof[i] = new(big.Int).Set(v)
	}
	for _, v := range st.inputs {
		out.inputs = append(out.inputs, new(big.Int).Set(v))
	}
	f(&out.proof, out.inputs)
	return out
}

// flipByte flips the low bit of byte i of the 256-byte Solidity form of the
// proof (A.x, A.y, B.x.im, B.x.re, B.y.im, B.y.re, C.x, C.y).
func flipByte(i int) func(*[8]*big.Int, []*big.Int) {
	return func(pr *[8]*big.Int, _ []*big.Int) {
		w := common.BigToHash(pr[i/32])
		w[i%32] ^= 1
		pr[i/32] = new(big.Int).SetBytes(w[:])
	}
}

// setInput replaces public input i.
func setInput(i int, v *big.Int) func(*[8]*big.Int, []*big.Int) {
	return func(_ *[8]*big.Int, in []*big.Int) { in[i] = new(big.Int).Set(v) }
}

func addInput(i int, d int64) func(*[8]*big.Int, []*big.Int) {
	return func(_ *[8]*big.Int, in []*big.Int) { in[i].Add(in[i], big.NewInt(d)) }
}

// baseP is the BN254 base field order.
var baseP, _ = new(big.Int).SetString("21888242871839275222246405745257275088696311157297823662689037894645226208583", 10)

// proofTamperings are the changes to the proof itself, the same for both
// circuits.
func proofTamperings(st statement) map[string]statement {
	return map[string]statement{
		"fail/proof byte 31 flipped (A.x)":  st.with(flipByte(31)),
		"fail/proof byte 100 flipped (B)":   st.with(flipByte(100)),
		"fail/proof byte 255 flipped (C.y)": st.with(flipByte(255)),
		"fail/A negated (a valid point)": st.with(func(pr *[8]*big.Int, _ []*big.Int) {
			pr[1] = new(big.Int).Sub(baseP, pr[1])
		}),
	}
}

// assertVerifies checks an honest statement by eth_call (Ledger.Check) and
// by a mined transaction, and reads the recorded statement back.
func assertVerifies(t *testing.T, l *chain.Ledger, kind chain.Kind, st statement) {
	t.Helper()
	ctx := t.Context()
	ok, err := l.Check(ctx, kind, st.proof, st.inputs)
	require.NoError(t, err)
	assert.True(t, ok, "eth_call verification")
	rc, err := l.Submit(ctx, kind, st.proof, st.inputs)
	require.NoError(t, err)
	assert.True(t, rc.Verified, "mined verification")
	got, err := l.Statement(ctx, rc.TxHash)
	require.NoError(t, err)
	assert.Equal(t, kind, got.Kind)
	assert.Equal(t, l.Account(), got.Submitter)
	require.Len(t, got.Inputs, len(st.inputs))
	for i := range st.inputs {
		assert.Zero(t, st.inputs[i].Cmp(got.Inputs[i]), "input %d", i)
	}
}

// assertRejected runs each tampering against the registry: eth_call says
// false, and the transaction is mined but verifies and records nothing.
func assertRejected(t *testing.T, l *chain.Ledger, kind chain.Kind, cases map[string]statement) {
	t.Helper()
	for name, st := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			ok, err := l.Check(ctx, kind, st.proof, st.inputs)
			require.NoError(t, err)
			assert.False(t, ok, "eth_call must reject")
			rc, err := l.Submit(ctx, kind, st.proof, st.inputs)
			require.ErrorIs(t, err, chain.ErrRejected)
			assert.False(t, rc.Verified)
			require.NotEqual(t, common.Hash{}, rc.TxHash, "the rejection is mined")
			_, err = l.Statement(ctx, rc.TxHash)
			assert.True(t, errors.Is(err, chain.ErrRejected) || errors.Is(err, chain.ErrReverted), "nothing recorded: %v", err)
		})
	}
}

// TestEligibilitySoundOnChain submits real eligibility-v3 proofs (public
// inputs [issuerKeyHash, digest, circuitId]) to the GovernedRegistry on the
// embedded chain: the honest one verifies (eth_call and mined transaction);
// every tampering is rejected by the verifier contract and records nothing.
func TestEligibilitySoundOnChain(t *testing.T) {
	t.Parallel()
	sys, l := fixture(t)
	prover, err := zkp.NewProver(sys, zkp.WithTimeout(testProofTimeout))
	require.NoError(t, err)
	ctx := t.Context()
	cred, err := credential.Sign(selfKey, credential.Terms{
		MemberID: "M1", Salt: "5", PayerID: "60054", PlanID: "PPO", Status: "active",
		Start: "2026-01-01", End: "2026-12-31", Expires: "2026-12-31", Nonce: 3,
		Overrides: map[string]int{"PROC002": 70},
	})
	require.NoError(t, err)
	in := zkp.EligibilityV3Input{Credential: cred, ProcedureCode: "PROC002", ServiceDate: serviceDate, Eligible: true, CoveragePct: 70}
	proof, _, err := prover.ProveEligibilityV3(ctx, in)
	require.NoError(t, err)
	honest := onChain(t, proof)
	require.Len(t, honest.inputs, 3)
	// Another honest statement of the same decision (fresh salt).
	otherProof, _, err := prover.ProveEligibilityV3(ctx, in)
	require.NoError(t, err)
	second := onChain(t, otherProof)
	require.NotZero(t, second.inputs[1].Cmp(honest.inputs[1]))

	assertVerifies(t, l, attest.KindEligibility, honest)
	assertVerifies(t, l, attest.KindEligibility, second)

	// Another registered issuer: the registry lets it record, the verifier
	// must not.
	otherIssuer := big.NewInt(4242)
	_, err = l.RegisterIssuer(ctx, otherIssuer, common.Address{})
	require.NoError(t, err)

	cases := proofTamperings(honest)
	for name, f := range map[string]func(*[8]*big.Int, []*big.Int){
		"fail/issuer key hash of another registered issuer": setInput(0, otherIssuer),
		"fail/digest + 1":                  addInput(1, 1),
		"fail/digest of another statement": setInput(1, second.inputs[1]),
	} {
		cases[name] = honest.with(f)
	}
	cases["fail/proof of another statement with these inputs"] = statement{proof: second.proof, inputs: honest.inputs}
	assertRejected(t, l, attest.KindEligibility, cases)

	// The circuit id is the verifier's too: the proof under another id is
	// refused by that id's verifier (eth_call), and the ledger does not even
	// send a statement whose id is not its kind's.
	wrongID := honest.with(setInput(2, zkp.CircuitID(zkp.CircuitPrescriptionV4)))
	ok, err := l.Check(ctx, attest.KindEligibility, wrongID.proof, wrongID.inputs)
	require.NoError(t, err)
	assert.False(t, ok)
	_, err = l.Submit(ctx, attest.KindEligibility, wrongID.proof, wrongID.inputs)
	assert.ErrorIs(t, err, chain.ErrRejected)
}

// TestPrescriptionSoundOnChain does the same for prescription-v4: a
// statement of several drugs verifies; a tampered digest, issuer or proof
// does not, and an eligibility statement is no prescription one.
func TestPrescriptionSoundOnChain(t *testing.T) {
	t.Parallel()
	sys, l := fixture(t)
	prover, err := zkp.NewProver(sys, zkp.WithTimeout(testProofTimeout))
	require.NoError(t, err)
	ctx := t.Context()
	cred, _, err := selfTrust(t, l).Credential(ctx, testRecord(), serviceDate)
	require.NoError(t, err)
	in := zkp.PrescriptionV4Input{Credential: cred, Drugs: []string{"6809", "11289"}, ServiceDate: serviceDate}
	proof, _, _, err := prover.ProvePrescriptionV4(ctx, in)
	require.NoError(t, err)
	honest := onChain(t, proof)
	require.Len(t, honest.inputs, 3)
	proof, _, _, err = prover.ProvePrescriptionV4(ctx, in)
	require.NoError(t, err)
	second := onChain(t, proof)

	assertVerifies(t, l, attest.KindPrescription, honest)
	cases := proofTamperings(honest)
	cases["fail/digest + 1"] = honest.with(addInput(1, 1))
	cases["fail/digest of another statement"] = honest.with(setInput(1, second.inputs[1]))
	cases["fail/proof of another statement with these inputs"] = statement{proof: second.proof, inputs: honest.inputs}
	assertRejected(t, l, attest.KindPrescription, cases)

	// A prescription proof is no eligibility statement.
	ok, err := l.Check(ctx, attest.KindEligibility, honest.proof, honest.inputs)
	require.NoError(t, err)
	assert.False(t, ok)
}

// TestServiceReportsContractRejection: a proof the verifier contract
// rejects (tampered between prover and chain) reaches the caller of the
// root family as the API's "... ZK proof verification failed".
func TestServiceReportsContractRejection(t *testing.T) {
	t.Parallel()
	sys, l := fixture(t)
	prover, err := zkp.NewProver(sys, zkp.WithTimeout(testProofTimeout))
	require.NoError(t, err)
	a, err := attest.New(prover, tampering{l}, attest.WithTrust(selfTrust(t, l)))
	require.NoError(t, err)
	key, err := cipher.GenerateKey()
	require.NoError(t, err)
	kr, err := cipher.ParseKeyring(key)
	require.NoError(t, err)
	svc, err := healthagents.New(kr, healthagents.WithAttestor(a),
		healthagents.WithClock(func() time.Time { return serviceDate }))
	require.NoError(t, err)
	rec := testRecord()
	b, err := rec.Marshal()
	require.NoError(t, err)
	env, err := cipher.Seal(rec.PatientID, b, kr)
	require.NoError(t, err)

	_, err = svc.VerifyEligibility(t.Context(), &env, "PROC001")
	require.Error(t, err)
	assert.Equal(t, "Eligibility check failed: ZK proof verification failed", err.Error())
	assert.Equal(t, healthagents.CodeInternal, healthagents.ErrorCode(err))
	assert.ErrorIs(t, err, healthagents.ErrProofRejected)
	assert.ErrorIs(t, err, chain.ErrRejected)

	_, err = svc.ValidatePrescription(t.Context(), &env, "6809")
	require.Error(t, err)
	assert.Equal(t, "Prescription validation failed: ZK proof verification failed", err.Error())
	assert.Equal(t, healthagents.CodeInternal, healthagents.ErrorCode(err))
	assert.ErrorIs(t, err, chain.ErrRejected)
}
