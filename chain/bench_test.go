package chain_test

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/chain"
)

// BenchmarkCheck measures verification by eth_call on the simulated chain.
func BenchmarkCheck(b *testing.B) {
	l := newLedger(b)
	st := prove(b, 3)
	ctx := b.Context()
	for b.Loop() {
		ok, err := l.Check(ctx, fixtureKind, st.proof, st.inputs)
		if err != nil || !ok {
			b.Fatalf("check: %v %v", ok, err)
		}
	}
}

// BenchmarkSubmit measures a verification transaction sent and mined on the
// simulated chain, one at a time, and reports its gas.
func BenchmarkSubmit(b *testing.B) {
	l := newLedger(b)
	st := prove(b, 3)
	ctx := b.Context()
	var gas uint64
	for b.Loop() {
		rc, err := l.Submit(ctx, fixtureKind, st.proof, st.inputs)
		if err != nil {
			b.Fatal(err)
		}
		gas = rc.GasUsed
	}
	b.ReportMetric(float64(gas), "gas/verification")
}

// BenchmarkSubmitParallel measures throughput with concurrent submitters
// sharing blocks.
func BenchmarkSubmitParallel(b *testing.B) {
	l := newLedger(b)
	st := prove(b, 3)
	ctx := b.Context()
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, err := l.Submit(ctx, fixtureKind, st.proof, st.inputs)
			require.NoError(b, err)
		}
	})
}

// BenchmarkSubmitGoverned measures a GovernedRegistry record (proof
// verified, issuer checked, event checked against the statement sent) mined
// on the simulated chain, one at a time, and reports its gas.
func BenchmarkSubmitGoverned(b *testing.B) {
	ctx := b.Context()
	l, err := chain.NewSimulated(ctx)
	require.NoError(b, err)
	b.Cleanup(func() { l.Close() })
	require.NoError(b, l.Register(ctx, triKind, triVK(b)))
	_, err = l.RegisterIssuer(ctx, big.NewInt(41), common.Address{})
	require.NoError(b, err)
	proof, inputs := proveTriFor(b, triKind, 41, 1234)
	var gas uint64
	for b.Loop() {
		rc, err := l.Submit(ctx, triKind, proof, inputs)
		if err != nil || !rc.Verified {
			b.Fatal(err)
		}
		gas = rc.GasUsed
	}
	b.ReportMetric(float64(gas), "gas/record")
}
