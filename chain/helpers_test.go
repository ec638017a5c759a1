package chain_test

import (
	"context"
	"errors"
	"math/big"
	"sync"
	"testing"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/logger"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/chain/internal/fixture"
)

const fixtureKind chain.Kind = "fixture"

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
var honestProofs sync.Map // int64 -> provedStatement

func prove(t testing.TB, x int64) provedStatement {
	t.Helper()
	if v, ok := honestProofs.Load(x); ok {
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
	honestProofs.Store(x, ps)
	return ps
}

func fixtureVK(t testing.TB) chain.VerifyingKey {
	t.Helper()
	k, err := keys()
	require.NoError(t, err)
	vk, err := chain.VerifyingKeyFromGnark(k.VK)
	require.NoError(t, err)
	return vk
}

// newLedger starts a simulated chain with the fixture verifier registered.
func newLedger(t testing.TB, opts ...chain.Option) *chain.Ledger {
	t.Helper()
	ctx := t.Context()
	l, err := chain.NewSimulated(ctx, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, l.Close()) })
	require.NoError(t, l.Register(ctx, fixtureKind, fixtureVK(t)))
	return l
}

// sharedLedger is one simulated chain for the read-mostly tests.
var sharedLedger = sync.OnceValues(func() (*chain.Ledger, error) {
	k, err := keys()
	if err != nil {
		return nil, err
	}
	vk, err := chain.VerifyingKeyFromGnark(k.VK)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	l, err := chain.NewSimulated(ctx)
	if err != nil {
		return nil, err
	}
	if err := l.Register(ctx, fixtureKind, vk); err != nil {
		return nil, errors.Join(err, l.Close())
	}
	return l, nil
})

func shared(t testing.TB) *chain.Ledger {
	t.Helper()
	l, err := sharedLedger()
	require.NoError(t, err)
	return l
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
