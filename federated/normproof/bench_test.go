package normproof

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkProve measures proving one masked update against model size, for
// three participants (two peers) and the five evaluation words; verification
// is reported alongside. Setup is outside the timed loop.
//
//	go test ./federated/normproof/ -run '^$' -bench Prove -benchtime 3x
func BenchmarkProve(b *testing.B) {
	for _, d := range []int{8, 31, 64, 128} {
		b.Run(fmt.Sprintf("d=%d", d), func(b *testing.B) {
			s := Shape{Weights: d, Extra: 5, Peers: 2, Bits: 25}
			k, err := Setup(s)
			require.NoError(b, err)
			st, sec := benchParty(b, s)
			b.ResetTimer()
			for b.Loop() {
				p, err := Prove(k, st, sec)
				require.NoError(b, err)
				b.StopTimer()
				require.NoError(b, Verify(k.VK, s, st, p))
				b.StartTimer()
			}
			b.ReportMetric(float64(k.Constraints()), "constraints")
			pk, _, err := k.EncodeKeys()
			require.NoError(b, err)
			b.ReportMetric(float64(len(pk)), "pk-bytes")
		})
	}
}

// BenchmarkProvePeers is d=31 with ten participants (nine peers).
func BenchmarkProvePeers(b *testing.B) {
	s := Shape{Weights: 31, Extra: 5, Peers: 9, Bits: 25}
	k, err := Setup(s)
	require.NoError(b, err)
	st, sec := benchParty(b, s)
	for b.Loop() {
		_, err := Prove(k, st, sec)
		require.NoError(b, err)
	}
	b.ReportMetric(float64(k.Constraints()), "constraints")
}

func BenchmarkVerify(b *testing.B) {
	s := Shape{Weights: 31, Extra: 5, Peers: 2, Bits: 25}
	k, err := Setup(s)
	require.NoError(b, err)
	st, sec := benchParty(b, s)
	p, err := Prove(k, st, sec)
	require.NoError(b, err)
	for b.Loop() {
		require.NoError(b, Verify(k.VK, s, st, p))
	}
}

func benchParty(b *testing.B, s Shape) (*Statement, *Secret) {
	x := make([]int64, s.Dim())
	for i := range s.Weights {
		x[i] = int64(1<<24) / int64(s.Weights) * int64(1-2*(i%2))
	}
	x[s.Weights], x[s.Weights+1] = 7, 10
	sec := &Secret{X: x, SelfSeed: randomSeed(b)}
	st := &Statement{SelfCommit: Commit(sec.SelfSeed), EvalBound: 10}
	var pairs []Pair
	for k := range s.Peers {
		seed := randomSeed(b)
		pairs = append(pairs, Pair{Seed: seed, Plus: k%2 == 0})
		sec.PairSeed = append(sec.PairSeed, seed)
		st.PairCommit = append(st.PairCommit, Commit(seed))
		st.PairPlus = append(st.PairPlus, k%2 == 0)
	}
	st.Masked = Mask(x, sec.SelfSeed, pairs)
	nb, err := NormBound(1, 24, s.Weights)
	require.NoError(b, err)
	st.NormBound = nb
	return st, sec
}
