package zkp

import (
	"math/big"
	"testing"

	curve "github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fp"
	"github.com/stretchr/testify/require"
)

// scalarBatchInputsG2 returns nb buckets and n additions into distinct
// ones (any E2 elements: the formulas do not need points), edge values in
// most parts, with qx[i] ≠ x[k[i]] as addBatchG2 requires.
func scalarBatchInputsG2(nb, n, seed int) (x, y []curve.E2, k []int32, qx, qy []curve.E2) {
	edges := fieldEdges()
	vec := func(m, v int) []curve.E2 {
		r := make(fp.Vector, 2*m)
		r.MustSetRandom()
		out := make([]curve.E2, m)
		for i := range out {
			out[i] = curve.E2{A0: r[2*i], A1: r[2*i+1]}
			if (i+v+seed)%3 != 0 {
				out[i].A0 = edges[(i*(v+1)+v+seed)%len(edges)]
			}
			if (i+v+seed)%4 != 0 {
				out[i].A1 = edges[(i*(v+3)+2*v+seed)%len(edges)]
			}
		}
		return out
	}
	x, y, qx, qy = vec(nb, 0), vec(nb, 1), vec(n, 2), vec(n, 3)
	k = make([]int32, n)
	for i := range k {
		k[i] = int32((i*37 + 11 + seed) % nb) // distinct for n <= nb (37 is prime to nb)
		if qx[i].Equal(&x[k[i]]) {
			qx[i].A1.Add(&qx[i].A1, &edges[1])
		}
	}
	return x, y, k, qx, qy
}

// TestAddBatchScalar checks the element-at-a-time G2 batches against the
// vector ones (the IFMA kernel where the CPU has it) on random and edge
// field elements, at lengths around the lane width and the batch size:
// both must give the same canonical elements.
func TestAddBatchScalar(t *testing.T) {
	t.Parallel()
	const nb = 300
	var vs, ss scratchG2
	for _, n := range []int{1, 2, 7, 8, 9, 16, 17, 128, 255, 256} {
		for seed := range 3 {
			x, y, k, qx, qy := scalarBatchInputsG2(nb, n, seed)
			wx, wy := append([]curve.E2(nil), x...), append([]curve.E2(nil), y...)
			addBatchG2Vector(wx, wy, k, qx, qy, &vs)
			addBatchG2Scalar(x, y, k, qx, qy, &ss)
			for b := range nb {
				require.True(t, x[b].Equal(&wx[b]) && y[b].Equal(&wy[b]), "n=%d seed=%d bucket %d", n, seed, b)
				for _, c := range []*fp.Element{&x[b].A0, &x[b].A1, &y[b].A0, &y[b].A1} {
					require.True(t, isCanonical(c), "n=%d bucket %d not reduced", n, b)
				}
			}
		}
	}
}

// TestAddMod checks the branch-free addition against fp.Element's on
// every pair of edge values and on random ones.
func TestAddMod(t *testing.T) {
	t.Parallel()
	vals := fieldEdges()
	r := make(fp.Vector, 64)
	r.MustSetRandom()
	vals = append(vals, r...)
	for i := range vals {
		for j := range vals {
			var got, want fp.Element
			addMod(&got, &vals[i], &vals[j])
			want.Add(&vals[i], &vals[j])
			require.True(t, got.Equal(&want) && isCanonical(&got), "%d + %d", i, j)
		}
	}
	// The modulus words addMod uses are q's.
	var q big.Int
	q.SetUint64(q3).Lsh(&q, 64).Or(&q, new(big.Int).SetUint64(q2))
	q.Lsh(&q, 64).Or(&q, new(big.Int).SetUint64(q1))
	q.Lsh(&q, 64).Or(&q, new(big.Int).SetUint64(q0))
	require.Zero(t, q.Cmp(fp.Modulus()))
}

// TestWithoutIFMA runs the MSM and proof checks on the path CPUs without
// AVX-512 IFMA take, on a CPU that has it (elsewhere every test runs that
// path already). Not parallel: it switches haveIFMA off for the process
// while it runs, and parallel tests only start once the sequential ones
// are done.
func TestWithoutIFMA(t *testing.T) {
	if !haveIFMA {
		t.Skip("no AVX-512 IFMA here: the other tests run the path without it")
	}
	withoutIFMA(t)
	checkMultiExpMatchesGnark(t)
	checkGroth16ProofsVerify(t)
}

// BenchmarkAddBatchG2 compares one batch of msmBatch G2 additions on the
// vector path (without IFMA: gnark-crypto's element-by-element loops) and
// element at a time.
func BenchmarkAddBatchG2(b *testing.B) {
	x, y, k, qx, qy := scalarBatchInputsG2(1024, msmBatch, 0)
	var s scratchG2
	b.Run("vector", func(b *testing.B) {
		for b.Loop() {
			addBatchG2Vector(x, y, k, qx, qy, &s)
		}
	})
	b.Run("scalar", func(b *testing.B) {
		for b.Loop() {
			addBatchG2Scalar(x, y, k, qx, qy, &s)
		}
	})
}
