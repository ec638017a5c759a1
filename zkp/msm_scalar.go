package zkp

import (
	"math/bits"

	curve "github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fp"
)

// Fused batched G2 additions, element at a time (CPUs without IFMA).
//
// Without AVX-512 IFMA, gnark-crypto runs every fp.Vector operation of the
// vector path (msm_batch.go) element by element, so a G2 batch there is
// about thirty passes over 14 vectors of 8 KB (more than L1 holds), with
// four Fp multiplications for every E2 product. Here a G2 batch is two
// passes over the buckets and the points to add, with Montgomery's trick
// run serially inside them:
//
//   - forward: the norm d₀² + d₁² of each d = qx − bx and the running
//     product before it are stored;
//   - one field inversion of the whole product;
//   - backward: each norm's inverse comes from the running inverse and the
//     stored product, and that element's addition is finished at once with
//     curve.E2 methods (gnark-crypto's assembly E2 product and square: three
//     and two Fp multiplications), straight from and into the buckets.
//
// Same arithmetic as the vector path (every field operation returns the
// canonical element), so the same results; TestAddBatchScalar compares
// the two. G1 has no such kernel: written the same way (serially, in
// lanes of eight, with and without gathering the buckets first) it
// measured no faster than the vector path on a Zen 3 without IFMA — a G1
// addition is six Fp multiplications, which both paths make through the
// same assembly routine, and they are the whole cost there.

// addBatchG2Scalar is addBatchG2 element at a time: the division by
// d = qx − bx is a multiplication by its conjugate and by the inverse of
// its norm d₀² + d₁² in Fp, as there.
func addBatchG2Scalar(x, y []curve.E2, k []int32, qx, qy []curve.E2, s *scratchG2) {
	n := len(k)
	nrm, pre := s.pair(n)
	var acc fp.Element
	acc.SetOne()
	for i, j := range k {
		var d curve.E2
		var t fp.Element
		d.Sub(&qx[i], &x[j])
		nrm[i].Square(&d.A0)
		t.Square(&d.A1)
		addMod(&nrm[i], &nrm[i], &t)
		pre[i] = acc
		acc.Mul(&acc, &nrm[i])
	}
	acc.Inverse(&acc)
	for i := n - 1; i >= 0; i-- {
		bx, by := &x[k[i]], &y[k[i]]
		var inv fp.Element
		inv.Mul(&acc, &pre[i])
		acc.Mul(&acc, &nrm[i])
		// λ = e·conj(d)/N(d) with e = qy − by, x3 = λ² − bx − qx,
		// y3 = λ(bx − x3) − by
		var d, e, lam, x3, w curve.E2
		d.Sub(&qx[i], bx).Conjugate(&d)
		e.Sub(&qy[i], by)
		lam.Mul(&e, &d).MulByElement(&lam, &inv)
		x3.Square(&lam).Sub(&x3, bx).Sub(&x3, &qx[i])
		w.Sub(bx, &x3).Mul(&w, &lam)
		by.Sub(&w, by)
		*bx = x3
	}
}

// pair returns s.nrm and s.pre n long (addBatchG2Scalar's only vectors).
func (s *scratchG2) pair(n int) (nrm, pre fp.Vector) {
	if cap(s.nrm) < n {
		s.nrm, s.pre = make(fp.Vector, n), make(fp.Vector, n)
	}
	return s.nrm[:n], s.pre[:n]
}

// The words of the modulus q.
const (
	q0 = 0x3c208c16d87cfd47
	q1 = 0x97816a916871ca8d
	q2 = 0xb85045b68181585d
	q3 = 0x30644e72e131a029
)

// addMod sets z = x + y mod q (x, y, z canonical) without a branch.
func addMod(z, x, y *fp.Element) {
	s0, c := bits.Add64(x[0], y[0], 0) // no carry out: x + y < 2q < 2^256
	s1, c := bits.Add64(x[1], y[1], c)
	s2, c := bits.Add64(x[2], y[2], c)
	s3, _ := bits.Add64(x[3], y[3], c)
	d0, b := bits.Sub64(s0, q0, 0)
	d1, b := bits.Sub64(s1, q1, b)
	d2, b := bits.Sub64(s2, q2, b)
	d3, b := bits.Sub64(s3, q3, b)
	m := -b // keep x + y where it is below q
	z[0] = d0 ^ (d0^s0)&m
	z[1] = d1 ^ (d1^s1)&m
	z[2] = d2 ^ (d2^s2)&m
	z[3] = d3 ^ (d3^s3)&m
}
