package zkp

import (
	"math/big"
	"testing"

	curve "github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fp"
	"github.com/stretchr/testify/require"
)

// fieldEdges are the values most likely to break a kernel's bounds or
// carries: 0, 1, q − 1, q − 2, 2^k around the limb boundaries, and values
// with every limb at its maximum.
func fieldEdges() []fp.Element {
	var out []fp.Element
	add := func(b *big.Int) {
		var e fp.Element
		e.SetBigInt(b)
		out = append(out, e)
	}
	q := fp.Modulus()
	for _, d := range []int64{0, 1, 2} {
		add(big.NewInt(d))
		add(new(big.Int).Sub(q, big.NewInt(d+1)))
	}
	for _, k := range []uint{51, 52, 53, 103, 104, 155, 156, 207, 208, 252, 253} {
		p := new(big.Int).Lsh(big.NewInt(1), k)
		add(p)
		add(new(big.Int).Sub(p, big.NewInt(1)))
	}
	// Raw Montgomery words just below q (the kernel sees the Montgomery
	// form, not the value).
	for _, d := range []uint64{1, 2, 1 << 40} {
		var e fp.Element
		e[0], e[1], e[2], e[3] = 0x3c208c16d87cfd47-d, 0x97816a916871ca8d, 0xb85045b68181585d, 0x30644e72e131a029
		out = append(out, e)
	}
	return out
}

// addAffineRef is addAffineG1IFMA element by element with fp.Element.
func addAffineRef(bx, by, qx, qy, inv []fp.Element) (x3, y3 []fp.Element) {
	x3, y3 = make([]fp.Element, len(bx)), make([]fp.Element, len(bx))
	for i := range bx {
		var lam, t fp.Element
		lam.Sub(&qy[i], &by[i]).Mul(&lam, &inv[i])
		x3[i].Square(&lam).Sub(&x3[i], &bx[i]).Sub(&x3[i], &qx[i])
		t.Sub(&bx[i], &x3[i]).Mul(&t, &lam)
		y3[i].Sub(&t, &by[i])
	}
	return x3, y3
}

// TestAddAffineG1IFMA checks the fused kernel against fp.Element
// arithmetic on random and edge inputs (any field elements: the formula
// does not need points), lane by lane, for one and many blocks.
func TestAddAffineG1IFMA(t *testing.T) {
	t.Parallel()
	if !haveIFMA {
		t.Skip("no AVX-512 IFMA on this CPU or build")
	}
	edges := fieldEdges()
	for _, blocks := range []int{1, 2, 5, 32} {
		n := 8 * blocks
		in := make([]fp.Vector, 5)
		for v := range in {
			in[v] = make(fp.Vector, n)
			in[v].MustSetRandom()
			// Every input sees every edge value in some lane, against
			// random values and against other edges.
			for i := range n {
				if (i+v)%3 != 0 {
					in[v][i] = edges[(i*(v+1)+v)%len(edges)]
				}
			}
		}
		wantX, wantY := addAffineRef(in[0], in[1], in[2], in[3], in[4])
		x3, y3 := make(fp.Vector, n), make(fp.Vector, n)
		addAffineG1IFMA(&in[0][0], &in[1][0], &in[2][0], &in[3][0], &in[4][0], &x3[0], &y3[0], uint64(blocks))
		for i := range n {
			require.True(t, x3[i].Equal(&wantX[i]), "blocks=%d x3[%d]", blocks, i)
			require.True(t, y3[i].Equal(&wantY[i]), "blocks=%d y3[%d]", blocks, i)
			require.True(t, isCanonical(&x3[i]) && isCanonical(&y3[i]), "blocks=%d lane %d not reduced", blocks, i)
		}
		// In place: outputs over the inputs.
		bx, by := append(fp.Vector(nil), in[0]...), append(fp.Vector(nil), in[1]...)
		addAffineG1IFMA(&bx[0], &by[0], &in[2][0], &in[3][0], &in[4][0], &bx[0], &by[0], uint64(blocks))
		for i := range n {
			require.True(t, bx[i].Equal(&wantX[i]) && by[i].Equal(&wantY[i]), "in place, blocks=%d lane %d", blocks, i)
		}
	}
}

// isCanonical reports whether e's Montgomery words are below q.
func isCanonical(e *fp.Element) bool {
	q := [4]uint64{0x3c208c16d87cfd47, 0x97816a916871ca8d, 0xb85045b68181585d, 0x30644e72e131a029}
	for i := 3; i >= 0; i-- {
		if e[i] != q[i] {
			return e[i] < q[i]
		}
	}
	return false
}

// TestAddAffineG2IFMA checks the E2 kernel against curve.E2 arithmetic on
// random and edge inputs (ninv any element: the formula does not need it
// to be the inverse of the norm).
func TestAddAffineG2IFMA(t *testing.T) {
	t.Parallel()
	if !haveIFMA {
		t.Skip("no AVX-512 IFMA on this CPU or build")
	}
	edges := fieldEdges()
	for _, blocks := range []int{1, 3, 32} {
		n := 8 * blocks
		in := make([]fp.Vector, 9) // bx0 bx1 by0 by1 qx0 qx1 qy0 qy1 ninv
		for v := range in {
			in[v] = make(fp.Vector, n)
			in[v].MustSetRandom()
			for i := range n {
				if (i+v)%3 != 0 {
					in[v][i] = edges[(i*(v+2)+3*v)%len(edges)]
				}
			}
		}
		out := make([]fp.Vector, 4)
		for v := range out {
			out[v] = make(fp.Vector, n)
		}
		addAffineG2IFMA(&in[0][0], &in[1][0], &in[2][0], &in[3][0], &in[4][0], &in[5][0], &in[6][0], &in[7][0], &in[8][0],
			&out[0][0], &out[1][0], &out[2][0], &out[3][0], uint64(blocks))
		for i := range n {
			bx := curve.E2{A0: in[0][i], A1: in[1][i]}
			by := curve.E2{A0: in[2][i], A1: in[3][i]}
			qx := curve.E2{A0: in[4][i], A1: in[5][i]}
			qy := curve.E2{A0: in[6][i], A1: in[7][i]}
			var d, e, lam, x3, y3, w curve.E2
			d.Sub(&qx, &bx).Conjugate(&d)
			e.Sub(&qy, &by)
			lam.Mul(&e, &d).MulByElement(&lam, &in[8][i])
			x3.Square(&lam).Sub(&x3, &bx).Sub(&x3, &qx)
			w.Sub(&bx, &x3)
			y3.Mul(&lam, &w).Sub(&y3, &by)
			got := [4]fp.Element{out[0][i], out[1][i], out[2][i], out[3][i]}
			want := [4]fp.Element{x3.A0, x3.A1, y3.A0, y3.A1}
			for c := range got {
				require.True(t, got[c].Equal(&want[c]) && isCanonical(&got[c]), "blocks=%d lane %d part %d", blocks, i, c)
			}
		}
	}
}
