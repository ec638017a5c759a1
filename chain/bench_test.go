package chain_test

import (
	"testing"

	"github.com/stretchr/testify/require"
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
