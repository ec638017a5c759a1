package chain_test

import (
	"context"
	"errors"
	"math/big"
	"sync"
	"testing"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/logger"
	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/chain/internal/fixture"
	"github.com/healthagents/healthagents/verify/verifytest"
)

// fixtureKind is the statement kind the Ledger tests record: the
// three-input circuit of package verifytest ([issuer, digest, circuit id]),
// bound to CircuitID(fixtureKind), with fixtureIssuer registered.
const fixtureKind chain.Kind = "fixture"

// fixtureIssuer is the issuer key hash of the statements prove makes.
const fixtureIssuer = 7

// keys loads the committed fixture keys once per test binary.
var keys = sync.OnceValues(func() (*fixture.Keys, error) {
	logger.Disable()
	return fixture.Load("internal/fixture/testdata")
})

type provedStatement struct {
	raw    groth16.Proof
	proof  [8]*big.Int
	inputs []*big.Int
}

// honestProofs caches proofs per x, so tests and benchmarks prove once.
var honestProofs, gnarkProofs sync.Map // int64 -> provedStatement

// prove proves the statement [fixtureIssuer, x, CircuitID(fixtureKind)] of
// the three-input circuit (raw is nil).
func prove(t testing.TB, x int64) provedStatement {
	t.Helper()
	if v, ok := honestProofs.Load(x); ok {
		return v.(provedStatement)
	}
	proof, inputs := verifytest.Prove(t, big.NewInt(fixtureIssuer), big.NewInt(x), chain.CircuitID(fixtureKind))
	ps := provedStatement{proof: proof, inputs: inputs}
	honestProofs.Store(x, ps)
	return ps
}

// proveGnark proves x with the committed two-input fixture circuit (Y = X*X,
// Z = X+1), whose key gnark also exported as a Solidity verifier: for the
// encoding and cross-check tests, which call the verifier contract directly.
func proveGnark(t testing.TB, x int64) provedStatement {
	t.Helper()
	if v, ok := gnarkProofs.Load(x); ok {
		return v.(provedStatement)
	}
	k, err := keys()
	require.NoError(t, err)
	raw, public, err := k.Prove(x)
	require.NoError(t, err)
	proof, err := chain.ProofFromGnark(raw)
	require.NoError(t, err)
	inputs, err := chain.InputsFromWitness(public)
	require.NoError(t, err)
	ps := provedStatement{raw: raw, proof: proof, inputs: inputs}
	gnarkProofs.Store(x, ps)
	return ps
}

// fixtureVK is the three-input circuit's verifying key.
func fixtureVK(t testing.TB) chain.VerifyingKey { return verifytest.VerifyingKey(t) }

// gnarkVK is the two-input fixture circuit's verifying key (proveGnark).
func gnarkVK(t testing.TB) chain.VerifyingKey {
	t.Helper()
	k, err := keys()
	require.NoError(t, err)
	vk, err := chain.VerifyingKeyFromGnark(k.VK)
	require.NoError(t, err)
	return vk
}

// setUp binds the fixture circuit and registers fixtureIssuer.
func setUp(ctx context.Context, l *chain.Ledger, vk chain.VerifyingKey) error {
	if err := l.Register(ctx, fixtureKind, vk); err != nil {
		return err
	}
	_, err := l.RegisterIssuer(ctx, big.NewInt(fixtureIssuer), common.Address{})
	return err
}

// newLedger starts a simulated chain with the fixture verifier bound and its
// issuer registered.
func newLedger(t testing.TB, opts ...chain.Option) *chain.Ledger {
	t.Helper()
	ctx := t.Context()
	l, err := chain.NewSimulated(ctx, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, l.Close()) })
	require.NoError(t, setUp(ctx, l, fixtureVK(t)))
	return l
}

// sharedLedger is one simulated chain for the read-mostly tests.
var (
	sharedOnce   sync.Once
	sharedLedger *chain.Ledger
	sharedErr    error
)

func shared(t testing.TB) *chain.Ledger {
	t.Helper()
	vk := fixtureVK(t)
	sharedOnce.Do(func() {
		ctx := context.Background()
		l, err := chain.NewSimulated(ctx)
		if err == nil {
			if err = setUp(ctx, l, vk); err != nil {
				err = errors.Join(err, l.Close())
			}
		}
		sharedLedger, sharedErr = l, err
	})
	require.NoError(t, sharedErr)
	return sharedLedger
}

func clone(p [8]*big.Int) [8]*big.Int {
	var out [8]*big.Int
	for i, v := range p {
		out[i] = new(big.Int).Set(v)
	}
	return out
}

func cloneInputs(in []*big.Int) []*big.Int {
	out := make([]*big.Int, len(in))
	for i, v := range in {
		out[i] = new(big.Int).Set(v)
	}
	return out
}
