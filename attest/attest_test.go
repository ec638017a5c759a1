package attest_test

import (
	"context"
	"errors"
	"math/big"
	"net"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/iden3/go-iden3-crypto/babyjub"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/attest"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/credential"
	"github.com/healthagents/healthagents/eligibility"
	"github.com/healthagents/healthagents/internal/testcache/zkkeys"
	"github.com/healthagents/healthagents/prescription"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/trust"
	"github.com/healthagents/healthagents/zkp"
	zkpstatement "github.com/healthagents/healthagents/zkp/statement"
)

var (
	once   sync.Once
	sys    *zkp.System
	ledger *chain.Ledger
	setErr error
	keyDir string
	// selfKey is the service's issuer key of the tests, registered on the
	// package's chain.
	selfKey = babyjub.PrivateKey{1, 2, 3}
)

// fixture sets up the Groth16 keys and one embedded chain for the package:
// circuits bound, the ledger's account a submitter, selfKey registered.
func fixture(t testing.TB) (*zkp.System, *chain.Ledger) {
	t.Helper()
	once.Do(func() {
		ctx := context.Background()
		if keyDir, setErr = os.MkdirTemp("", "attest-keys"); setErr != nil {
			return
		}
		if setErr = zkkeys.Write(keyDir); setErr != nil { // the test cache's keys: no set-up
			return
		}
		if sys, setErr = zkp.LoadOrSetup(ctx, keyDir); setErr != nil {
			return
		}
		if ledger, setErr = chain.NewSimulated(ctx); setErr != nil {
			return
		}
		setErr = prepare(ctx, ledger, sys)
		<-sys.Warm() // the fast prover: a loaded machine must not time proofs out
	})
	require.NoError(t, setErr)
	return sys, ledger
}

// prepare binds the circuits, makes l's account a submitter and registers
// selfKey.
func prepare(ctx context.Context, l *chain.Ledger, sys *zkp.System) error {
	if err := attest.Register(ctx, l, sys); err != nil {
		return err
	}
	if err := l.EnsureSubmitter(ctx); err != nil {
		return err
	}
	h, err := credential.IssuerKeyHash(selfKey.Public())
	if err != nil {
		return err
	}
	_, err = l.RegisterIssuer(ctx, h, common.Address{})
	return err
}

// selfTrust is the COVERAGE_TRUST=self policy of selfKey on l.
func selfTrust(t testing.TB, l *chain.Ledger) *trust.Policy {
	t.Helper()
	p, err := trust.New(trust.Self, selfKey, l.Governed(), nil)
	require.NoError(t, err)
	return p
}

// testProofTimeout is the provers' deadline in these tests (opts can set
// another): on a busy machine a proof can take more than the spec's 5 s,
// which is not what these tests check (TestProofTimeout checks the
// deadline's error with 1 µs).
const testProofTimeout = time.Minute

// newAttestor is an Attestor of the package's keys under selfTrust; its
// prover's deadline is testProofTimeout unless opts set another.
func newAttestor(t testing.TB, l attest.Ledger, trustOn *chain.Ledger, opts ...zkp.ProverOption) *attest.Attestor {
	t.Helper()
	sys, _ := fixture(t)
	prover, err := zkp.NewProver(sys, append([]zkp.ProverOption{zkp.WithTimeout(testProofTimeout)}, opts...)...)
	require.NoError(t, err)
	a, err := attest.New(prover, l, attest.WithTrust(selfTrust(t, trustOn)))
	require.NoError(t, err)
	return a
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

func decide(t testing.TB, rec *record.Record, code string) eligibility.Decision {
	t.Helper()
	agent, err := eligibility.New()
	require.NoError(t, err)
	d, err := agent.Check(t.Context(), rec, code, serviceDate)
	require.NoError(t, err)
	return d
}

func TestEligibilityVerifiedOnChain(t *testing.T) {
	t.Parallel()
	_, ledger := fixture(t)
	a := newAttestor(t, ledger, ledger)
	rec := testRecord()
	for _, code := range []string{"PROC001", "PROC002", "PROC005", "70551"} {
		d := decide(t, rec, code)
		att, err := a.AttestEligibility(t.Context(), rec, d)
		require.NoError(t, err, code)
		assert.True(t, att.Verified)
		assert.Equal(t, "self", att.Issuer)
		assert.Equal(t, zkp.CircuitEligibilityV3, att.Circuit)
		st, err := ledger.Statement(t.Context(), common.HexToHash(att.TxHash))
		require.NoError(t, err)
		assert.Equal(t, attest.KindEligibility, st.Kind)
		require.Len(t, st.Inputs, 3, "on chain: issuer key hash, digest, circuit id only")
		// The statement opens to the decision, and its digest is the one
		// recorded on chain.
		require.NotNil(t, att.Statement)
		assert.Equal(t, st.Inputs[1].String(), att.Statement.Digest, code)
		fields := map[string]string{}
		for _, f := range att.Statement.Opening.Fields {
			fields[f.Name] = f.Text
		}
		assert.Equal(t, strconv.FormatBool(d.Eligible), fields["eligible"], code)
		assert.Equal(t, strconv.Itoa(d.CoveragePct), fields["coverage_pct"], code)
		assert.Equal(t, d.Procedure.Code, fields["procedure"], code)
		assert.Equal(t, d.Procedure.Class.Code, fields["procedure_class"], code)
		assert.Equal(t, serviceDate.Format(time.DateOnly), fields["service_day"], code)
	}
}

func TestPrescriptionVerifiedOnChain(t *testing.T) {
	t.Parallel()
	_, ledger := fixture(t)
	a := newAttestor(t, ledger, ledger)
	rx, err := prescription.New()
	require.NoError(t, err)
	rec := testRecord()
	rec.Medications, rec.Allergies = []string{"5640"}, []string{"penicillin"} // ibuprofen
	codes := []string{"6809", "11289", "1191"}
	// Decisions made one drug at a time miss the interaction between
	// warfarin and aspirin that the proof finds: refused, nothing recorded.
	var alone []prescription.Decision
	for _, code := range codes {
		d, err := rx.Validate(t.Context(), rec, code)
		require.NoError(t, err)
		alone = append(alone, d)
	}
	_, err = a.AttestPrescription(t.Context(), rec, alone, serviceDate)
	require.ErrorIs(t, err, attest.ErrDisagree)
	assert.NotContains(t, err.Error(), "warfarin")

	b, err := rx.Check(t.Context(), nil, codes, rec)
	require.NoError(t, err)
	ds := b.Decisions
	// One proof, one transaction for the three drugs.
	att, err := a.AttestPrescription(t.Context(), rec, ds, serviceDate)
	require.NoError(t, err)
	assert.True(t, att.Verified)
	assert.True(t, att.Covered)
	st, err := ledger.Statement(t.Context(), common.HexToHash(att.TxHash))
	require.NoError(t, err)
	assert.Equal(t, attest.KindPrescription, st.Kind)
	require.Len(t, st.Inputs, 3)
	assert.Equal(t, st.Inputs[1].String(), att.Statement.Digest)
	fields := map[string]string{}
	for _, f := range att.Statement.Opening.Fields {
		fields[f.Name] = f.Text
	}
	assert.Equal(t, "6809", fields["drug_1"])
	assert.Equal(t, "1191", fields["drug_3"])
	assert.Equal(t, "true", fields["covered_3"])
	assert.Equal(t, "", fields["drug_4"], "empty slot")
	assert.Equal(t, "interaction=none contraindication=none valid=true", fields["clinical_1"])
	assert.Equal(t, "interaction=major contraindication=none valid=false", fields["clinical_2"], "warfarin with ibuprofen and aspirin")
	assert.Equal(t, "5640", fields["medication_1"])
	assert.Equal(t, "allergy:penicillin", fields["triggers"])

	// Coverage that lapsed: proven as "not covered", still verified.
	att, err = a.AttestPrescription(t.Context(), rec, ds[:1], serviceDate.AddDate(1, 0, 0))
	require.NoError(t, err)
	assert.True(t, att.Verified)
	assert.False(t, att.Covered)
}

func TestNoCoverageIsNotVerified(t *testing.T) {
	t.Parallel()
	_, ledger := fixture(t)
	a := newAttestor(t, ledger, ledger)
	rec := &record.Record{PatientID: "PT-1"}
	att, err := a.AttestEligibility(t.Context(), rec, decide(t, rec, "PROC001"))
	require.NoError(t, err)
	assert.False(t, att.Verified)
	assert.Empty(t, att.TxHash)
}

func TestProofTimeout(t *testing.T) {
	t.Parallel()
	_, ledger := fixture(t)
	a := newAttestor(t, ledger, ledger, zkp.WithTimeout(time.Microsecond))
	rec := testRecord()
	_, err := a.AttestEligibility(t.Context(), rec, decide(t, rec, "PROC001"))
	require.ErrorIs(t, err, healthagents.ErrProofTimeout)
}

// tampering passes proofs to the real ledger after flipping one public
// input (the digest of a v2 statement, the drug of a first-circuit one):
// the verifier contract must reject it.
type tampering struct{ l *chain.Ledger }

func (t tampering) Submit(ctx context.Context, kind chain.Kind, proof [8]*big.Int, inputs []*big.Int) (chain.Receipt, error) {
	in := append([]*big.Int(nil), inputs...)
	in[1] = new(big.Int).Xor(in[1], big.NewInt(1))
	return t.l.Submit(ctx, kind, proof, in)
}

// startRecorder passes statements to the real ledger and keeps, for each
// Submit, the decision start its context carries (the zero time: none) and
// its chain.WithDecisionAlone function; with hold, each Submit waits for it
// after recording.
type startRecorder struct {
	l      *chain.Ledger
	starts chan seenStart
	hold   chan struct{}
}

type seenStart struct {
	start time.Time
	alone func() bool
}

func (r startRecorder) Submit(ctx context.Context, kind chain.Kind, proof [8]*big.Int, inputs []*big.Int) (chain.Receipt, error) {
	t, _ := chain.DecisionStart(ctx)
	r.starts <- seenStart{t, chain.DecisionAlone(ctx)}
	if r.hold != nil {
		<-r.hold
	}
	return r.l.Submit(ctx, kind, proof, inputs)
}

// TestSubmitCarriesDecisionStart: both attestations hand the ledger the
// time their proof began (a batch's window runs from it on an idle replica:
// chain.WithDecisionStart), between the call and the submission, and say
// the decision is alone (chain.WithDecisionAlone).
func TestSubmitCarriesDecisionStart(t *testing.T) {
	t.Parallel()
	_, ledger := fixture(t)
	rec := startRecorder{l: ledger, starts: make(chan seenStart, 1)}
	a := newAttestor(t, rec, ledger)
	r := testRecord()
	rx, err := prescription.New()
	require.NoError(t, err)
	b, err := rx.Check(t.Context(), nil, []string{"6809"}, r)
	require.NoError(t, err)
	for name, attest := range map[string]func() error{
		"eligibility": func() error {
			_, err := a.AttestEligibility(t.Context(), r, decide(t, r, "PROC001"))
			return err
		},
		"prescription": func() error {
			_, err := a.AttestPrescription(t.Context(), r, b.Decisions, serviceDate)
			return err
		},
	} {
		before := time.Now()
		require.NoError(t, attest(), name)
		after := time.Now()
		seen := <-rec.starts
		require.False(t, seen.start.IsZero(), "%s: Submit's context carries no decision start", name)
		assert.False(t, seen.start.Before(before) || seen.start.After(after), "%s: start %v outside the call", name, seen.start)
		require.NotNil(t, seen.alone, name)
		assert.True(t, seen.alone(), "%s: alone", name)
	}
}

// gatedProver holds every eligibility proof until released, after saying
// it has begun.
type gatedProver struct {
	attest.Prover
	begun, release chan struct{}
}

func (g gatedProver) ProveEligibilityV3(ctx context.Context, in zkp.EligibilityV3Input) (*zkp.Proof, zkpstatement.Statement, error) {
	g.begun <- struct{}{}
	<-g.release
	return g.Prover.ProveEligibilityV3(ctx, in)
}

// TestDecisionStartOnlyWhenAlone: of two decisions proven at once, the one
// begun first carries its start but is no longer alone once the second
// began, and the second carries none: the replica is busy, and batches keep
// their whole window. A decision begun while another, begun alone, waits
// for its batch takes that one's "alone" away too; once both are done, the
// next is alone again.
func TestDecisionStartOnlyWhenAlone(t *testing.T) {
	t.Parallel()
	sys, ledger := fixture(t)
	prover, err := zkp.NewProver(sys, zkp.WithTimeout(testProofTimeout))
	require.NoError(t, err)
	g := gatedProver{prover, make(chan struct{}), make(chan struct{})}
	rec := startRecorder{l: ledger, starts: make(chan seenStart, 2)}
	a, err := attest.New(g, rec, attest.WithTrust(selfTrust(t, ledger)))
	require.NoError(t, err)
	r := testRecord()
	attestOne := func(errs chan<- error) {
		_, err := a.AttestEligibility(t.Context(), r, decide(t, r, "PROC001"))
		errs <- err
	}
	errs := make(chan error, 2)
	go attestOne(errs)
	<-g.begun
	go attestOne(errs)
	<-g.begun // both being proven
	close(g.release)
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)
	first, second := <-rec.starts, <-rec.starts
	if first.start.IsZero() {
		first, second = second, first
	}
	require.False(t, first.start.IsZero(), "the first begun carries its start")
	assert.False(t, first.alone(), "no longer alone once the second began")
	assert.True(t, second.start.IsZero(), "begun beside another: no start")

	// Alone, then joined while it waits for its batch.
	held := startRecorder{l: ledger, starts: make(chan seenStart, 2), hold: make(chan struct{})}
	a, err = attest.New(g, held, attest.WithTrust(selfTrust(t, ledger)))
	require.NoError(t, err)
	go func() {
		<-g.begun
		<-g.begun
	}()
	go attestOne(errs)
	waiting := <-held.starts
	require.False(t, waiting.start.IsZero())
	assert.True(t, waiting.alone(), "alone while nothing else began")
	go attestOne(errs)
	joined := <-held.starts
	assert.False(t, waiting.alone(), "another decision began while it waited")
	assert.True(t, joined.start.IsZero())
	close(held.hold)
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)

	// Both done: the next one is alone.
	go func() { <-g.begun }()
	attestOne(errs)
	require.NoError(t, <-errs)
	next := <-held.starts
	assert.False(t, next.start.IsZero())
	assert.True(t, next.alone(), "alone again")
}

func TestRejectedByContract(t *testing.T) {
	t.Parallel()
	_, ledger := fixture(t)
	a := newAttestor(t, tampering{ledger}, ledger)
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
	require.NoError(t, prepare(ctx, node, sys))
	remote, err := chain.Dial(ctx, "http://"+addr, chain.DialConfig{
		Key: common.Bytes2Hex(crypto.FromECDSA(key)), Registry: node.Registry().Hex(),
	}, chain.WithSubmitTimeout(2*time.Second))
	require.NoError(t, err)
	defer remote.Close()

	a := newAttestor(t, remote, remote)
	rec := testRecord()
	att, err := a.AttestEligibility(ctx, rec, decide(t, rec, "PROC004"))
	require.NoError(t, err, "through JSON-RPC")
	assert.True(t, att.Verified)

	require.NoError(t, node.Close())
	_, err = a.AttestEligibility(ctx, rec, decide(t, rec, "PROC004"))
	require.Error(t, err)
	assert.True(t, errors.Is(err, healthagents.ErrChainUnavailable), "%v", err)
}

// Coverage terms a credential cannot hold (five exclusions, four slots) are
// refused by the trust policy before any proof, as trust.ErrUnsupported
// (which the service answers 422: the root package's TestCoverageRefusal).
func TestRecordBeyondCircuitBounds(t *testing.T) {
	t.Parallel()
	_, ledger := fixture(t)
	a := newAttestor(t, ledger, ledger)
	rec := testRecord()
	rec.Coverage.ExcludedProcedures = []string{"PROC001", "PROC002", "PROC003", "PROC004", "PROC005"}
	_, err := a.AttestEligibility(t.Context(), rec, decide(t, rec, "70551"))
	require.ErrorIs(t, err, trust.ErrUnsupported)
}
