package zkp

import (
	"testing"

	curve "github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fp"
	"github.com/stretchr/testify/require"
)

// TestBatchInvert checks every inverse at lengths around the lane width
// (the tail is inverted lane by lane, the rest eight at a time).
func TestBatchInvert(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 2, 7, 8, 9, 15, 16, 17, 63, 256, 259} {
		den := make(fp.Vector, n)
		den.MustSetRandom()
		for i := range den {
			if den[i].IsZero() {
				den[i].SetOne()
			}
		}
		inv := make(fp.Vector, n)
		batchInvert(inv, den, inv)
		for i := range den {
			var want fp.Element
			want.Inverse(&den[i])
			require.True(t, inv[i].Equal(&want), "n=%d i=%d", n, i)
		}
	}
}

// TestAddBatch checks the vectorised batched additions against Jacobian
// additions, in G1 and G2, at lengths around the lane width and with
// scattered bucket indices.
func TestAddBatch(t *testing.T) {
	t.Parallel()
	const nb = 300
	p1, p2 := randomPoints(3 * nb)
	// randomPoints leaves a few points at infinity: keep the others.
	var f1 []curve.G1Affine
	var f2 []curve.G2Affine
	for i := range p1 {
		if !p1[i].IsInfinity() {
			f1, f2 = append(f1, p1[i]), append(f2, p2[i])
		}
	}
	p1, p2 = f1, f2
	var s1 scratchG1
	var s2 scratchG2
	for _, n := range []int{1, 7, 8, 9, 17, 256} {
		x1, y1 := make([]fp.Element, nb), make([]fp.Element, nb)
		x2, y2 := make([]curve.E2, nb), make([]curve.E2, nb)
		want1, want2 := make([]curve.G1Jac, nb), make([]curve.G2Jac, nb)
		for b := range nb {
			x1[b], y1[b] = p1[b].X, p1[b].Y
			x2[b], y2[b] = p2[b].X, p2[b].Y
			want1[b].FromAffine(&p1[b])
			want2[b].FromAffine(&p2[b])
		}
		k := make([]int32, n)
		qx1, qy1 := make(fp.Vector, n), make(fp.Vector, n)
		qx2, qy2 := make([]curve.E2, n), make([]curve.E2, n)
		for i := range n {
			b := (i*37 + 11) % nb // distinct for n <= nb
			q := nb + i
			k[i] = int32(b)
			qx1[i], qy1[i] = p1[q].X, p1[q].Y
			qx2[i], qy2[i] = p2[q].X, p2[q].Y
			want1[b].AddMixed(&p1[q])
			want2[b].AddMixed(&p2[q])
		}
		addBatchG1(x1, y1, k, qx1, qy1, &s1)
		addBatchG2(x2, y2, k, qx2, qy2, &s2)
		for _, b := range k {
			var got1 curve.G1Affine
			got1.X, got1.Y = x1[b], y1[b]
			var w1 curve.G1Affine
			w1.FromJacobian(&want1[b])
			require.True(t, got1.Equal(&w1), "G1 n=%d bucket %d", n, b)
			var got2, w2 curve.G2Affine
			got2.X, got2.Y = x2[b], y2[b]
			w2.FromJacobian(&want2[b])
			require.True(t, got2.Equal(&w2), "G2 n=%d bucket %d", n, b)
		}
	}
}
