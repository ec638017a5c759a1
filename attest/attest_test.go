package attest_test

import (
	"context"
	"errors"
	"math/big"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/attest"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/eligibility"
	"github.com/healthagents/healthagents/prescription"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/zkp"
)

var (
	once   sync.Once
	sys    *zkp.System
	ledger *chain.Ledger
	setErr error
	keyDir string
)

// fixture sets up the Groth16 keys and one embedded chain for the package.
func fixture(t testing.TB) (*zkp.System, *chain.Ledger) {
	t.Helper()
	once.Do(func() {
		ctx := context.Background()
		if keyDir, setErr = os.MkdirTemp("", "attest-keys"); setErr != nil {
			return
		}
		if sys, setErr = zkp.LoadOrSetup(ctx, keyDir); setErr != nil {
			return
		}
		if ledger, setErr = chain.NewSimulated(ctx); setErr != nil {
			return
		}
		setErr = attest.Register(ctx, ledger, sys)
	})
	require.NoError(t, setErr)
	return sys, ledger
}

func TestMain(m *testing.M) {
	code := m.Run()
	if ledger != nil {
		ledger.Close()
	}
	if keyDir != "" {
		os.RemoveAll(keyDir)
	}
	os.Exit(code)
}

var serviceDate = time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)

func testRecord() *record.Record {
	return &record.Record{PatientID: "PT-1", Coverage: &record.Coverage{
		MemberID: "M1", Status: "active", Start: "2026-01-01", End: "2026-12-31",
		ExcludedProcedures: []string{"PROC005"}, CoverageOverrides: map[string]int{"PROC002": 70},
	}}
}

func decide(t *testing.T, rec *record.Record, code string) eligibility.Decision {
	t.Helper()
	agent, err := eligibility.New()
	require.NoError(t, err)
	d, err := agent.Check(t.Context(), rec, code, serviceDate)
	require.NoError(t, err)
	return d
}

func TestEligibilityVerifiedOnChain(t *testing.T) {
	t.Parallel()
	sys, ledger := fixture(t)
	prover, err := zkp.NewProver(sys)
	require.NoError(t, err)
	a, err := attest.New(prover, ledger)
	require.NoError(t, err)
	rec := testRecord()
	for _, code := range []string{"PROC001", "PROC002", "PROC005", "70551"} {
		d := decide(t, rec, code)
		att, err := a.AttestEligibility(t.Context(), rec, d)
		require.NoError(t, err, code)
		assert.True(t, att.Verified)
		st, err := ledger.Statement(t.Context(), common.HexToHash(att.TxHash))
		require.NoError(t, err)
		assert.Equal(t, attest.KindEligibility, st.Kind)
		// The inputs recorded on chain carry the decision's outputs.
		proof, err := zkp.ParseProof(att.Circuit, att.ProofData, att.PublicInputs)
		require.NoError(t, err)
		out, err := proof.Eligibility()
		require.NoError(t, err)
		assert.Equal(t, d.Eligible, out.Eligible, code)
		assert.Equal(t, d.CoveragePct, out.CoveragePct, code)
	}
}

func TestPrescriptionVerifiedOnChain(t *testing.T) {
	t.Parallel()
	sys, ledger := fixture(t)
	prover, err := zkp.NewProver(sys)
	require.NoError(t, err)
	a, err := attest.New(prover, ledger)
	require.NoError(t, err)
	rx, err := prescription.New()
	require.NoError(t, err)
	rec := testRecord()
	d, err := rx.Validate(t.Context(), rec, "6809")
	require.NoError(t, err)
	att, err := a.AttestPrescription(t.Context(), rec, d, serviceDate)
	require.NoError(t, err)
	assert.True(t, att.Verified)
	// healthagents.Attestor's contract: the last public input is the
	// Covered output (the Service reads it for zk_proof_verified).
	last := att.PublicInputs[len(att.PublicInputs)-1]
	assert.Equal(t, "0x"+strings.Repeat("0", 63)+"1", last)
	// Coverage that lapsed: proven as "not covered", still verified.
	att, err = a.AttestPrescription(t.Context(), rec, d, serviceDate.AddDate(1, 0, 0))
	require.NoError(t, err)
	assert.True(t, att.Verified)
	last = att.PublicInputs[len(att.PublicInputs)-1]
	assert.Equal(t, "0x"+strings.Repeat("0", 64), last)
	proof, err := zkp.ParseProof(att.Circuit, att.ProofData, att.PublicInputs)
	require.NoError(t, err)
	covered, err := proof.Prescription()
	require.NoError(t, err)
	assert.False(t, covered)
}

func TestNoCoverageIsNotVerified(t *testing.T) {
	t.Parallel()
	sys, ledger := fixture(t)
	prover, _ := zkp.NewProver(sys)
	a, _ := attest.New(prover, ledger)
	rec := &record.Record{PatientID: "PT-1"}
	att, err := a.AttestEligibility(t.Context(), rec, decide(t, rec, "PROC001"))
	require.NoError(t, err)
	assert.False(t, att.Verified)
	assert.Empty(t, att.TxHash)
}

func TestProofTimeout(t *testing.T) {
	t.Parallel()
	sys, ledger := fixture(t)
	prover, err := zkp.NewProver(sys, zkp.WithTimeout(time.Microsecond))
	require.NoError(t, err)
	a, _ := attest.New(prover, ledger)
	rec := testRecord()
	_, err = a.AttestEligibility(t.Context(), rec, decide(t, rec, "PROC001"))
	require.ErrorIs(t, err, healthagents.ErrProofTimeout)
}

// tampering passes proofs to the real ledger after flipping one public
// input: the verifier contract must reject it.
type tampering struct{ l *chain.Ledger }

func (t tampering) Submit(ctx context.Context, kind chain.Kind, proof [8]*big.Int, inputs []*big.Int) (chain.Receipt, error) {
	in := append([]*big.Int(nil), inputs...)
	in[len(in)-1] = new(big.Int).Xor(in[len(in)-1], big.NewInt(1)) // the eligible flag
	return t.l.Submit(ctx, kind, proof, in)
}

func TestRejectedByContract(t *testing.T) {
	t.Parallel()
	sys, ledger := fixture(t)
	prover, _ := zkp.NewProver(sys)
	a, _ := attest.New(prover, tampering{ledger})
	rec := testRecord()
	_, err := a.AttestEligibility(t.Context(), rec, decide(t, rec, "PROC001"))
	require.ErrorIs(t, err, healthagents.ErrProofRejected)
	require.ErrorIs(t, err, chain.ErrRejected)
}

// TestChainUnreachable dials a real JSON-RPC endpoint (the embedded chain
// served over HTTP), then stops it: submissions fail as unavailable.
func TestChainUnreachable(t *testing.T) {
	t.Parallel()
	sys, _ := fixture(t)
	ctx := t.Context()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	node, err := chain.NewSimulated(ctx, chain.WithHTTP(addr), chain.WithKey(key))
	require.NoError(t, err)
	require.NoError(t, attest.Register(ctx, node, sys))
	remote, err := chain.Dial(ctx, "http://"+addr, chain.DialConfig{
		Key: common.Bytes2Hex(crypto.FromECDSA(key)), Registry: node.Registry().Hex(),
	}, chain.WithSubmitTimeout(2*time.Second))
	require.NoError(t, err)
	defer remote.Close()

	prover, _ := zkp.NewProver(sys)
	a, _ := attest.New(prover, remote)
	rec := testRecord()
	att, err := a.AttestEligibility(ctx, rec, decide(t, rec, "PROC004"))
	require.NoError(t, err, "through JSON-RPC")
	assert.True(t, att.Verified)

	require.NoError(t, node.Close())
	_, err = a.AttestEligibility(ctx, rec, decide(t, rec, "PROC004"))
	require.Error(t, err)
	assert.True(t, errors.Is(err, healthagents.ErrChainUnavailable), "%v", err)
}

func TestRecordBeyondCircuitBounds(t *testing.T) {
	t.Parallel()
	sys, ledger := fixture(t)
	prover, _ := zkp.NewProver(sys)
	a, _ := attest.New(prover, ledger)
	rec := testRecord()
	rec.Coverage.ExcludedProcedures = []string{"PROC001", "PROC002", "PROC003", "PROC004", "PROC005"}
	_, err := a.AttestEligibility(t.Context(), rec, decide(t, rec, "70551"))
	require.ErrorIs(t, err, healthagents.ErrProofUnsupported)
}
