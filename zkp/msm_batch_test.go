package zkp

import (
	"testing"

	curve "github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fp"
	"github.com/stretchr/testify/require"
)

// TestBatchInvert checks every inverse at lengths that are and are not
// powers of two (odd levels carry their last element up the tree) or
// multiples of eight (the IFMA path's lanes and tail).
func TestBatchInvert(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 2, 7, 8, 9, 15, 16, 17, 23, 24, 31, 63, 255, 256, 259, 1000} {
		den := make(fp.Vector, n)
		den.MustSetRandom()
		// Edge values (q − 1, 1, limb boundaries, …) in every other slot.
		edges := fieldEdges()
		for i := range den {
			if i%2 == 1 {
				den[i] = edges[i%len(edges)]
			}
			if den[i].IsZero() {
				den[i].SetOne()
			}
		}
		inv := make(fp.Vector, n)
		var tree fp.Vector
		batchInvert(inv, den, &tree)
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

// TestReduceAffine checks the affine reduction against the Jacobian one on
// buckets with the cases the affine formula cannot take inside a chain: a
// running sum doubled by the next bucket, a total cancelled by its running
// sum, empty buckets and empty chains.
func TestReduceAffine(t *testing.T) {
	t.Parallel()
	const nb = 4 * reduceChains // chains of 4 buckets
	p1, p2 := randomPoints(nb)
	b1, b2 := newBucketsG1(nb), newBucketsG2(nb)
	set := func(k int, a1 curve.G1Affine, a2 curve.G2Affine) {
		b1.x[k], b1.y[k], b1.filled[k] = a1.X, a1.Y, !a1.IsInfinity()
		b2.x[k], b2.y[k], b2.filled[k] = a2.X, a2.Y, !a2.IsInfinity()
	}
	for k := range nb {
		set(k, p1[k], p2[k]) // a few are infinity: empty buckets
	}
	// chain 1 (buckets 4..7, from the top): running = P, then P + P
	set(7, p1[7], p2[7])
	set(6, p1[7], p2[7])
	// chain 2: running = P, total = P; then running = P − 2P = −P and
	// total = P + (−P) = 0
	var m1 curve.G1Affine
	var m2 curve.G2Affine
	m1.Double(&p1[11])
	m1.Neg(&m1)
	m2.Double(&p2[11])
	m2.Neg(&m2)
	set(10, m1, m2)
	// chain 3 empty
	for k := 12; k < 16; k++ {
		set(k, curve.G1Affine{}, curve.G2Affine{})
	}
	// chain 4: a bucket and its negation, running back to 0
	var n1 curve.G1Affine
	var n2 curve.G2Affine
	n1.Neg(&p1[19])
	n2.Neg(&p2[19])
	set(18, n1, n2)

	got1, want1 := reduceAffineG1(b1.x, b1.y, b1.filled, &b1.scratch), b1.reduceJacobian()
	got2, want2 := reduceAffineG2(b2.x, b2.y, b2.filled, &b2.scratch), b2.reduceJacobian()
	require.True(t, got1.Equal(&want1), "G1")
	require.True(t, got2.Equal(&want2), "G2")
	g1, g2 := b1.reduce(), b2.reduce()
	require.True(t, g1.Equal(&want1), "G1 reduce")
	require.True(t, g2.Equal(&want2), "G2 reduce")
}
