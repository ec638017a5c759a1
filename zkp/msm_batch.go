package zkp

import (
	curve "github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fp"
)

// Batched affine additions as vector operations.
//
// A batch of affine additions (msm_g1.go, msm_g2.go) is the same few field
// operations applied to every element of a batch, with one field inversion
// shared through Montgomery's trick. Written element by element, every
// multiplication is one call to the scalar Montgomery multiplication; here
// the batch's coordinates are gathered into contiguous vectors and every
// step is one fp.Vector operation over the whole batch, which gnark-crypto
// runs eight elements at a time with AVX-512 IFMA where the CPU has it (and
// element by element, as before, where it does not). The serial part of
// Montgomery's trick (the running product) is arranged as a product tree
// of halves so that it is vectorised too (batchInvert). Where the CPU has
// AVX-512 IFMA, the inversion and the rest of the addition run as fused
// kernels instead (msm_ifma.go). Where it does not, G2 batches run element
// at a time in two passes (msm_scalar.go); G1 batches stay here, which
// measured as fast there as any element-at-a-time arrangement.

// batchTop is the size below which batchInvert stops halving.
const batchTop = 8

// batchInvert sets inv[i] = 1/den[i] for every i; no den[i] may be zero.
// inv may not be den. tree is scratch, grown as needed.
//
// It is Montgomery's trick arranged as a product tree of halves, so that
// every multiplication is part of a long vector operation: level l+1 holds
// p[i]·p[i+h] for the h = ⌊m/2⌋ first elements of level l (m long), plus
// level l's last element when m is odd; the top level (at most batchTop
// elements) is inverted with one inversion, and each level's inverses come
// from the level above: 1/p[i] = 1/(p[i]·p[i+h])·p[i+h], and the same for
// i+h. That is about 3 multiplications per element, as the serial trick.
func batchInvert(inv, den fp.Vector, tree *fp.Vector) {
	n := len(den)
	if n == 0 {
		return
	}
	if haveIFMA && n >= 16 {
		batchInvertIFMA(inv, den, tree)
		return
	}
	// Levels above 0 take at most n/2 + n/4 + … plus one carried element
	// each (< n + 64); then n/2 + 1 for a copy.
	size := n + 64 + n/2 + 1
	if cap(*tree) < size {
		*tree = make(fp.Vector, size)
	}
	t := (*tree)[:size]
	tmp := t[n+64:]
	var level [65]fp.Vector // level[0] = den; level[l] in t
	level[0] = den
	top, off := 0, 0
	for len(level[top]) > batchTop {
		cur := level[top]
		m := len(cur)
		h := m / 2
		next := t[off : off+h+m%2]
		prod := next[:h]
		prod.Mul(cur[:h], cur[h:2*h])
		if m%2 == 1 {
			next[h] = cur[m-1]
		}
		off += len(next)
		top++
		level[top] = next
	}
	// The top level, inverted in place with one inversion.
	cur := level[top]
	if top == 0 { // a short den: invert into inv
		copy(inv, den)
		cur = inv
	}
	invertFew(cur)
	// Down the tree: level l's inverses from level l+1's, in place over
	// level l's products (into inv for level 0).
	for l := top - 1; l >= 0; l-- {
		up, below := level[l+1], level[l]
		out := below
		if l == 0 {
			out = inv
		}
		m := len(below)
		h := m / 2
		if m%2 == 1 {
			out[m-1] = up[h]
		}
		lo := tmp[:h] // below[:h], which out[:h] may overwrite
		copy(lo, below[:h])
		outLo, outHi := out[:h], out[h:2*h]
		outLo.Mul(up[:h], below[h:2*h])
		outHi.Mul(up[:h], lo)
	}
}

// fewInverses is the most elements invertFew takes: batchInvert's top
// level (batchTop) or batchInvertIFMA's eight lanes and seven more.
const fewInverses = 16

// invertFew replaces each element of a (at most fewInverses) by its
// inverse, with one field inversion (Montgomery's trick, serially).
func invertFew(a []fp.Element) {
	var pre [fewInverses]fp.Element
	var acc fp.Element
	acc.SetOne()
	for i := range a {
		pre[i] = acc
		acc.Mul(&acc, &a[i])
	}
	acc.Inverse(&acc)
	for i := len(a) - 1; i >= 0; i-- {
		var x fp.Element
		x.Mul(&acc, &pre[i])
		acc.Mul(&acc, &a[i])
		a[i] = x
	}
}

// batchInvertIFMA is batchInvert with the kernels of msm_ifma_amd64.s:
// Montgomery's trick run lane-wise (lane j carries the elements j, j+8,
// j+16, … of den), the running products kept in radix 2^52 in tree; the
// lanes' eight products and the last n mod 8 elements share one inversion.
func batchInvertIFMA(inv, den fp.Vector, tree *fp.Vector) {
	n := len(den)
	blocks := n / 8
	m := 8 * blocks
	// 40 words (five ZMM registers) per block, in tree's storage.
	size := (40*blocks + fp.Limbs - 1) / fp.Limbs
	if cap(*tree) < size {
		*tree = make(fp.Vector, size)
	}
	pre := &(*tree)[:size][0][0]
	var top [fewInverses]fp.Element // the lanes' products, then den's last n mod 8
	invPrefixIFMA(&den[0], pre, &top[0], uint64(blocks))
	k := 8 + copy(top[8:], den[m:])
	invertFew(top[:k])
	copy(inv[m:], top[8:k])
	invBackIFMA(&den[0], pre, &top[0], &inv[0], uint64(blocks))
}

// scratchG1 is the working space of addBatchG1.
type scratchG1 struct {
	bx, by, den, inv, lam fp.Vector
	tree                  fp.Vector // batchInvert's
}

// resize makes every vector of s n long.
func (s *scratchG1) resize(n int) {
	if cap(s.bx) < n {
		*s = scratchG1{make(fp.Vector, n), make(fp.Vector, n), make(fp.Vector, n), make(fp.Vector, n), make(fp.Vector, n), nil}
	}
	s.bx, s.by, s.den, s.inv, s.lam = s.bx[:n], s.by[:n], s.den[:n], s.inv[:n], s.lam[:n]
}

// addBatchG1 sets (x[k[i]], y[k[i]]) += (qx[i], qy[i]) for every i; the
// k[i] are distinct and no qx[i] equals x[k[i]].
func addBatchG1(x, y []fp.Element, k []int32, qx, qy fp.Vector, s *scratchG1) {
	n := len(k)
	if n == 0 {
		return
	}
	s.resize(n)
	qx, qy = qx[:n], qy[:n]
	bx, by, den, inv, lam := s.bx, s.by, s.den, s.inv, s.lam
	for i, j := range k {
		bx[i], by[i] = x[j], y[j]
	}
	// λ = (y2 − y1)/(x2 − x1), x3 = λ² − x1 − x2, y3 = λ(x1 − x3) − y1;
	// x3 in den and y3 in lam
	den.Sub(qx, bx)
	batchInvert(inv, den, &s.tree)
	m := 0
	if haveIFMA && n >= 8 {
		m = n &^ 7
		addAffineG1IFMA(&bx[0], &by[0], &qx[0], &qy[0], &inv[0], &den[0], &lam[0], uint64(m/8))
	}
	if m < n {
		bx, by, qx, qy := bx[m:], by[m:], qx[m:], qy[m:]
		lam, x3, t := lam[m:], den[m:], inv[m:]
		lam.Sub(qy, by)
		lam.Mul(lam, t)
		x3.Mul(lam, lam)
		x3.Sub(x3, bx)
		x3.Sub(x3, qx)
		t.Sub(bx, x3)
		t.Mul(t, lam)
		lam.Sub(t, by)
	}
	for i, j := range k {
		x[j], y[j] = den[i], lam[i]
	}
}

// scratchG2 is the working space of addBatchG2: E2 coordinates split into
// their real (0) and imaginary (1) parts.
type scratchG2 struct {
	v        [14]fp.Vector
	tree     fp.Vector // batchInvert's
	nrm, pre fp.Vector // addBatchG2Scalar's
}

func (s *scratchG2) resize(n int) {
	if cap(s.v[0]) < n {
		for i := range s.v {
			s.v[i] = make(fp.Vector, n)
		}
	}
	for i := range s.v {
		s.v[i] = s.v[i][:n]
	}
}

// addBatchG2 is addBatchG1 over E2 = Fp[u]/(u² + 1). The division by
// d = x2 − x1 is a multiplication by its conjugate and by the inverse of
// its norm d₀² + d₁² in Fp, so the batch shares one inversion in Fp.
// Without IFMA it runs element at a time (msm_scalar.go).
func addBatchG2(x, y []curve.E2, k []int32, qx, qy []curve.E2, s *scratchG2) {
	switch {
	case len(k) == 0:
	case haveIFMA:
		addBatchG2Vector(x, y, k, qx, qy, s)
	default:
		addBatchG2Scalar(x, y, k, qx, qy, s)
	}
}

// addBatchG2Vector is addBatchG2 as vector operations and, with IFMA,
// the fused kernel of msm_ifma.go.
func addBatchG2Vector(x, y []curve.E2, k []int32, qx, qy []curve.E2, s *scratchG2) {
	n := len(k)
	if n == 0 {
		return
	}
	s.resize(n)
	bx0, bx1, by0, by1 := s.v[0], s.v[1], s.v[2], s.v[3]
	qx0, qx1, qy0, qy1 := s.v[4], s.v[5], s.v[6], s.v[7]
	d0, d1, t0, t1, l0, l1 := s.v[8], s.v[9], s.v[10], s.v[11], s.v[12], s.v[13]
	for i, j := range k {
		bx0[i], bx1[i] = x[j].A0, x[j].A1
		by0[i], by1[i] = y[j].A0, y[j].A1
		qx0[i], qx1[i] = qx[i].A0, qx[i].A1
		qy0[i], qy1[i] = qy[i].A0, qy[i].A1
	}
	// d = x2 − x1, e = y2 − y1 (in t0, t1 below, after the norm)
	d0.Sub(qx0, bx0)
	d1.Sub(qx1, bx1)
	// 1/N(d) in l1, via N(d) = d₀² + d₁² in l0
	t0.Mul(d0, d0)
	t1.Mul(d1, d1)
	l0.Add(t0, t1)
	batchInvert(l1, l0, &s.tree)
	// x3 in d0, d1 and y3 in t0, t1
	m := 0
	if haveIFMA && n >= 8 {
		m = n &^ 7
		addAffineG2IFMA(&bx0[0], &bx1[0], &by0[0], &by1[0], &qx0[0], &qx1[0], &qy0[0], &qy1[0], &l1[0],
			&d0[0], &d1[0], &t0[0], &t1[0], uint64(m/8))
	}
	if m < n {
		addTailG2(bx0[m:], bx1[m:], by0[m:], by1[m:], qx0[m:], qx1[m:], qy0[m:], qy1[m:], d0[m:], d1[m:], t0[m:], t1[m:], l0[m:], l1[m:])
	}
	for i, j := range k {
		x[j].A0, x[j].A1 = d0[i], d1[i]
		y[j].A0, y[j].A1 = t0[i], t1[i]
	}
}

// addTailG2 is addBatchG2's additions after the batch inversion, as
// vector operations: d = qx − bx is in d0, d1 and 1/N(d) in l1; x3 goes to
// d0, d1 and y3 to t0, t1; qx0, qx1, qy0, l0 are overwritten.
func addTailG2(bx0, bx1, by0, by1, qx0, qx1, qy0, qy1, d0, d1, t0, t1, l0, l1 fp.Vector) {
	// λ = e·conj(d)/N(d) = ((e₀d₀ + e₁d₁) + (e₁d₀ − e₀d₁)u)/N(d)
	t0.Sub(qy0, by0) // e₀
	t1.Sub(qy1, by1) // e₁
	l0.Mul(t0, d0)   // e₀d₀
	t0.Mul(t0, d1)   // e₀d₁
	d0.Mul(t1, d0)   // e₁d₀
	t1.Mul(t1, d1)   // e₁d₁
	l0.Add(l0, t1)   // e₀d₀ + e₁d₁
	d0.Sub(d0, t0)   // e₁d₀ − e₀d₁
	l0.Mul(l0, l1)   // λ₀
	l1.Mul(d0, l1)   // λ₁
	// x3 = λ² − x1 − x2, λ² = (λ₀ + λ₁)(λ₀ − λ₁) + 2λ₀λ₁u; x3 in d0, d1
	t0.Add(l0, l1)
	t1.Sub(l0, l1)
	d0.Mul(t0, t1)
	d0.Sub(d0, bx0)
	d0.Sub(d0, qx0)
	d1.Mul(l0, l1)
	d1.Add(d1, d1)
	d1.Sub(d1, bx1)
	d1.Sub(d1, qx1)
	// y3 = λ(x1 − x3) − y1, with w = x1 − x3 in qx0, qx1 (no longer needed)
	qx0.Sub(bx0, d0)
	qx1.Sub(bx1, d1)
	t0.Mul(l0, qx0) // λ₀w₀
	t1.Mul(l1, qx1) // λ₁w₁
	t0.Sub(t0, t1)
	t0.Sub(t0, by0) // y3₀
	t1.Mul(l0, qx1) // λ₀w₁
	qy0.Mul(l1, qx0)
	t1.Add(t1, qy0)
	t1.Sub(t1, by1) // y3₁
}
