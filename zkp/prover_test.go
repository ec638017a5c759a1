package zkp

import (
	"context"
	"errors"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/record"
)

func day(s string) time.Time {
	t, err := time.Parse(record.DateLayout, s)
	if err != nil {
		panic(err)
	}
	return t
}

// testTimeout is the proof deadline of the tests' provers: a minute rather
// than DefaultTimeout's 5 s, since a test checks a proof, not its speed,
// and the package's parallel tests (other packages' beside them) can keep
// a first proof, made with gnark's prover while the tables are built, past
// 5 s. The timeout tests give their own deadline after it.
var testTimeout = WithTimeout(time.Minute)

func newTestProver(t *testing.T, opts ...ProverOption) *Prover {
	t.Helper()
	p, err := NewProver(testSys, append([]ProverOption{testTimeout}, opts...)...)
	require.NoError(t, err)
	return p
}

// testCredential is testTerms signed with payerKey.
func testCredential() EligibilityV3Input {
	c, err := credentialSign(testTerms())
	if err != nil {
		panic(err)
	}
	return EligibilityV3Input{Credential: c, ProcedureCode: "71046", ServiceDate: day("2026-06-01"), CoveragePct: 70, Eligible: true}
}

// eligibleInput is an eligible X-ray (PROC002, the plan's 70 % override).
func eligibleInput() EligibilityV3Input { return testCredential() }

func proveEligible(ctx context.Context, p *Prover) (*Proof, error) {
	proof, _, err := p.ProveEligibilityV3(ctx, eligibleInput())
	return proof, err
}

func TestVerifyUnknownCircuit(t *testing.T) {
	t.Parallel()
	v, err := NewVerifier(testSys)
	require.NoError(t, err)
	err = v.Verify(t.Context(), &Proof{Circuit: "nope", Groth16: nil})
	require.ErrorIs(t, err, ErrInvalidProof)
	_, err = ParseProof("nope", "", nil)
	require.ErrorIs(t, err, ErrUnknownCircuit)
	for _, old := range []string{"eligibility", "prescription"} {
		_, err = ParseProof(old, "", nil)
		require.ErrorIs(t, err, ErrUnknownCircuit, "the first circuits are gone")
	}
}

func TestNoPedersenCommitments(t *testing.T) {
	t.Parallel()
	for _, name := range CircuitNames() {
		ccs, err := CompileCircuit(name)
		require.NoError(t, err)
		assert.Empty(t, commitmentsOf(ccs), "BSB22 commitments in the constraint system")
		ck, err := testSys.circuit(name)
		require.NoError(t, err)
		assert.Empty(t, ck.vk.CommitmentKeys)
		assert.Empty(t, ck.vk.PublicAndCommitmentCommitted)
		assert.Empty(t, ck.pk.CommitmentKeys)
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	t.Run("fail/tiny deadline", func(t *testing.T) {
		t.Parallel()
		_, err := proveEligible(t.Context(), newTestProver(t, WithTimeout(time.Nanosecond)))
		require.ErrorIs(t, err, ErrTimeout)
		assert.Equal(t, "ZK proof generation timed out", ErrTimeout.Error())
	})
	t.Run("fail/no free slot before the deadline", func(t *testing.T) {
		t.Parallel()
		p := newTestProver(t, WithMaxConcurrent(1), WithTimeout(20*time.Millisecond))
		p.sem <- struct{}{} // an abandoned proof still running
		_, err := proveEligible(t.Context(), p)
		require.ErrorIs(t, err, ErrTimeout)
	})
	t.Run("fail/cancelled is not a timeout", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := proveEligible(ctx, newTestProver(t))
		require.ErrorIs(t, err, context.Canceled)
		require.False(t, errors.Is(err, ErrTimeout))
	})
}

// deadlineCtx is a context whose deadline passes when the test says so, not
// after some wall time: its Err is context.DeadlineExceeded once expired.
type deadlineCtx struct {
	context.Context // Background: no values, no deadline reported
	done            chan struct{}
	once            sync.Once
}

func manualDeadline() (context.Context, func()) {
	c := &deadlineCtx{Context: context.Background(), done: make(chan struct{})}
	return c, func() { c.once.Do(func() { close(c.done) }) }
}

func (c *deadlineCtx) Done() <-chan struct{} { return c.done }

func (c *deadlineCtx) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// TestTimeoutWhileProving lets the deadline pass while a proof is being
// computed: the call returns ErrTimeout at once, the abandoned proof keeps
// its concurrency slot until it finishes, and then the slot is free again.
func TestTimeoutWhileProving(t *testing.T) {
	t.Parallel()
	p := newTestProver(t, WithMaxConcurrent(1))
	entered, release := make(chan struct{}), make(chan struct{})
	var hookCtxErr error
	p.proving = func(ctx context.Context) {
		close(entered)
		<-ctx.Done()
		hookCtxErr = ctx.Err()
		<-release
	}
	ctx, expire := manualDeadline()
	errc := make(chan error, 1)
	go func() {
		_, err := proveEligible(ctx, p)
		errc <- err
	}()
	<-entered
	expire()
	err := <-errc
	require.ErrorIs(t, err, ErrTimeout)
	assert.Equal(t, "ZK proof generation timed out: context deadline exceeded", err.Error())
	assert.Len(t, p.sem, 1, "the abandoned proof still holds its slot")

	close(release)
	p.proving = nil
	_, err = proveEligible(t.Context(), p)
	require.NoError(t, err)
	assert.ErrorIs(t, hookCtxErr, context.DeadlineExceeded)
}

// The prover's last line of defence: an assignment that slipped past the
// native checks is refused by gnark's R1CS solver, as ErrUnsatisfied.
func TestProverSolverBackstop(t *testing.T) {
	t.Parallel()
	p := newTestProver(t)
	a, _, err := eligibilityV3Statement(eligibleInput(), big.NewInt(11))
	require.NoError(t, err)
	a.CoveragePct = 71
	_, err = p.prove(t.Context(), CircuitEligibilityV3, a)
	require.ErrorIs(t, err, ErrUnsatisfied)
}

func newTestVerifier(t *testing.T) *Verifier {
	t.Helper()
	v, err := NewVerifier(testSys)
	require.NoError(t, err)
	return v
}
