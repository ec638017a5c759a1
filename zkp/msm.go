package zkp

import (
	"runtime"
	"sync"

	curve "github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fp"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// Fixed-base multi-scalar multiplication.
//
// Every multi-scalar multiplication (MSM) of the Groth16 prover is over the
// points of the proving key, which never change. gnark-crypto's MultiExp does
// not know that: it runs Pippenger's bucket method with one set of buckets
// and one bucket reduction per 9-bit window (29 windows for our ~2 000
// points), in Jacobian coordinates. Here:
//
//   - every point P is stored once per c-bit window already multiplied by
//     2^(c·j) (c = 11: 24 windows), so all windows add into one shared set of
//     2^(c-1) buckets and a single reduction finishes the sum, with no
//     doublings between windows;
//   - buckets are kept in affine coordinates and filled in batches of
//     msmBatch additions that share one field inversion (Montgomery's
//     trick), about 6 field multiplications per addition instead of 11;
//     an addition the batch cannot take (its bucket already has one
//     pending, or holds ±the point) goes to a Jacobian side bucket.
//
// The result is the same group element as MultiExp's (tests compare them);
// the cost is ~17 MB of tables per circuit, built once (~0.8 CPU-seconds).

// msmWindows is the number of signed c-bit digits of a scalar below r
// (< 2^254): the top digit absorbs the last carry and stays below 2^(c-1).
func msmWindows(c uint) int {
	return (fr.Bits + int(c)) / int(c) // ceil((fr.Bits+1)/c)
}

// msmWindowBits picks the window width for n points: the one that
// minimises n·W(c) batched affine additions (~6.5 field multiplications
// each) plus the reduction's two Jacobian additions per bucket (~27). For
// our ~2 000-point MSMs that is c = 11; c = 12 measured the same within
// the noise, 10 and 13 a few per cent slower.
func msmWindowBits(n int) uint {
	best, bestCost := uint(4), -1
	for c := uint(4); c <= 16; c++ {
		cost := 13*n*msmWindows(c) + 54<<(c-1)
		if bestCost < 0 || cost < bestCost {
			best, bestCost = c, cost
		}
	}
	return best
}

// signedDigits writes the signed base-2^c digits of s (regular form, as
// returned by fr.Element.Bits) to d: s = Σ d[j]·2^(c·j) with
// -2^(c-1) <= d[j] < 2^(c-1).
func signedDigits(d []int32, s [fr.Limbs]uint64, c uint) {
	mask := uint64(1)<<c - 1
	half := int64(1) << (c - 1)
	carry := int64(0)
	for j := range d {
		bit := uint(j) * c
		limb, off := bit/64, bit%64
		var v uint64
		if limb < fr.Limbs {
			v = s[limb] >> off
			if off+c > 64 && limb+1 < fr.Limbs {
				v |= s[limb+1] << (64 - off)
			}
		}
		digit := int64(v&mask) + carry
		carry = 0
		if digit >= half && j < len(d)-1 {
			digit -= int64(1) << c
			carry = 1
		}
		d[j] = int32(digit)
	}
}

// tableG1 is a fixed-base MSM table over G1 points.
type tableG1 struct {
	c       uint
	windows int
	n       int
	pts     []curve.G1Affine // pts[i*windows+j] = 2^(c·j)·P_i
}

func newTableG1(points []curve.G1Affine) *tableG1 {
	return newTableG1Bits(points, msmWindowBits(len(points)))
}

func newTableG1Bits(points []curve.G1Affine, c uint) *tableG1 {
	w := msmWindows(c)
	jac := make([]curve.G1Jac, len(points)*w)
	parallel(len(points), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			var p curve.G1Jac
			p.FromAffine(&points[i])
			for j := range w {
				if j > 0 {
					for range c {
						p.DoubleAssign()
					}
				}
				jac[i*w+j] = p
			}
		}
	})
	return &tableG1{c: c, windows: w, n: len(points), pts: curve.BatchJacobianToAffineG1(jac)}
}

// multiExp returns Σ scalars[i]·P_{lo+i}.
func (t *tableG1) multiExp(scalars []fr.Element, lo int) curve.G1Jac {
	nb := 1 << (t.c - 1)
	acc := newBucketsG1(nb)
	fallback := make([]curve.G1Jac, nb) // additions the batch cannot take
	digits := make([]int32, t.windows)
	var neg curve.G1Affine
	for i := range scalars {
		row := t.pts[(lo+i)*t.windows : (lo+i+1)*t.windows]
		if scalars[i].IsZero() || row[0].IsInfinity() {
			continue
		}
		signedDigits(digits, scalars[i].Bits(), t.c)
		for j, d := range digits {
			switch {
			case d > 0:
				if !acc.add(int(d-1), &row[j].X, &row[j].Y, false) {
					fallback[d-1].AddMixed(&row[j])
				}
			case d < 0:
				if !acc.add(int(-d-1), &row[j].X, &row[j].Y, true) {
					neg.Neg(&row[j])
					fallback[-d-1].AddMixed(&neg)
				}
			}
		}
	}
	acc.flush()
	var running, total curve.G1Jac
	for k := nb - 1; k >= 0; k-- {
		if acc.filled[k] {
			running.AddMixed(&curve.G1Affine{X: acc.x[k], Y: acc.y[k]})
		}
		running.AddAssign(&fallback[k])
		total.AddAssign(&running)
	}
	return total
}

// msmBatch is the number of bucket additions that share one field
// inversion.
const msmBatch = 256

// bucketsG1 holds MSM buckets in affine coordinates and adds points to them
// in batches: an affine addition costs one field inversion, and a batch of
// msmBatch inversions costs one inversion and 3·msmBatch multiplications
// (Montgomery's trick), so an addition costs about 6 multiplications
// instead of the 11 of a mixed Jacobian one.
type bucketsG1 struct {
	x, y   []fp.Element
	filled []bool
	mark   []uint32 // mark[k] == epoch: bucket k has an addition pending
	epoch  uint32

	n        int
	k        [msmBatch]int32
	qx, qy   [msmBatch]fp.Element
	den, pre [msmBatch]fp.Element
}

func newBucketsG1(nb int) *bucketsG1 {
	return &bucketsG1{
		x: make([]fp.Element, nb), y: make([]fp.Element, nb),
		filled: make([]bool, nb), mark: make([]uint32, nb), epoch: 1,
	}
}

// add schedules bucket[k] += (qx, ±qy), (qx, qy) not the point at
// infinity. It returns false, and does nothing, when the addition cannot
// be batched: bucket k already has one pending, or holds ±Q (doubling or
// cancelling); the caller adds such a point some other way.
func (b *bucketsG1) add(k int, qx, qy *fp.Element, negate bool) bool {
	if !b.filled[k] {
		b.x[k] = *qx
		if negate {
			b.y[k].Neg(qy)
		} else {
			b.y[k] = *qy
		}
		b.filled[k] = true
		return true
	}
	if b.mark[k] == b.epoch || b.x[k].Equal(qx) {
		return false
	}
	b.mark[k] = b.epoch
	i := b.n
	b.k[i] = int32(k)
	b.qx[i] = *qx
	if negate {
		b.qy[i].Neg(qy)
	} else {
		b.qy[i] = *qy
	}
	b.n++
	if b.n == msmBatch {
		b.flush()
	}
	return true
}

// flush performs the pending additions.
func (b *bucketsG1) flush() {
	if b.n == 0 {
		return
	}
	var acc fp.Element
	acc.SetOne()
	for i := range b.n {
		b.den[i].Sub(&b.qx[i], &b.x[b.k[i]])
		b.pre[i] = acc
		acc.Mul(&acc, &b.den[i])
	}
	acc.Inverse(&acc)
	var inv, lambda, x3, u fp.Element
	for i := b.n - 1; i >= 0; i-- {
		inv.Mul(&acc, &b.pre[i]) // 1/den[i]
		acc.Mul(&acc, &b.den[i])
		k := b.k[i]
		// λ = (y2 − y1)/(x2 − x1), x3 = λ² − x1 − x2, y3 = λ(x1 − x3) − y1
		lambda.Sub(&b.qy[i], &b.y[k]).Mul(&lambda, &inv)
		x3.Square(&lambda).Sub(&x3, &b.x[k]).Sub(&x3, &b.qx[i])
		u.Sub(&b.x[k], &x3).Mul(&u, &lambda)
		b.y[k].Sub(&u, &b.y[k])
		b.x[k] = x3
	}
	b.n = 0
	b.epoch++
}

// tableG2 is tableG1 over G2.
type tableG2 struct {
	c       uint
	windows int
	n       int
	pts     []curve.G2Affine
}

func newTableG2(points []curve.G2Affine) *tableG2 {
	return newTableG2Bits(points, msmWindowBits(len(points)))
}

func newTableG2Bits(points []curve.G2Affine, c uint) *tableG2 {
	w := msmWindows(c)
	pts := make([]curve.G2Affine, len(points)*w)
	parallel(len(points), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			var p curve.G2Jac
			p.FromAffine(&points[i])
			for j := range w {
				if j > 0 {
					for range c {
						p.DoubleAssign()
					}
				}
				pts[i*w+j].FromJacobian(&p)
			}
		}
	})
	return &tableG2{c: c, windows: w, n: len(points), pts: pts}
}

func (t *tableG2) multiExp(scalars []fr.Element, lo int) curve.G2Jac {
	nb := 1 << (t.c - 1)
	acc := newBucketsG2(nb)
	fallback := make([]curve.G2Jac, nb) // additions the batch cannot take
	digits := make([]int32, t.windows)
	var neg curve.G2Affine
	for i := range scalars {
		row := t.pts[(lo+i)*t.windows : (lo+i+1)*t.windows]
		if scalars[i].IsZero() || row[0].IsInfinity() {
			continue
		}
		signedDigits(digits, scalars[i].Bits(), t.c)
		for j, d := range digits {
			switch {
			case d > 0:
				if !acc.add(int(d-1), &row[j].X, &row[j].Y, false) {
					fallback[d-1].AddMixed(&row[j])
				}
			case d < 0:
				if !acc.add(int(-d-1), &row[j].X, &row[j].Y, true) {
					neg.Neg(&row[j])
					fallback[-d-1].AddMixed(&neg)
				}
			}
		}
	}
	acc.flush()
	var running, total curve.G2Jac
	for k := nb - 1; k >= 0; k-- {
		if acc.filled[k] {
			running.AddMixed(&curve.G2Affine{X: acc.x[k], Y: acc.y[k]})
		}
		running.AddAssign(&fallback[k])
		total.AddAssign(&running)
	}
	return total
}

// bucketsG2 is bucketsG1 over G2 (coordinates in E2), line for line.
type bucketsG2 struct {
	x, y   []curve.E2
	filled []bool
	mark   []uint32 // mark[k] == epoch: bucket k has an addition pending
	epoch  uint32

	n        int
	k        [msmBatch]int32
	qx, qy   [msmBatch]curve.E2
	den, pre [msmBatch]curve.E2
}

func newBucketsG2(nb int) *bucketsG2 {
	return &bucketsG2{
		x: make([]curve.E2, nb), y: make([]curve.E2, nb),
		filled: make([]bool, nb), mark: make([]uint32, nb), epoch: 1,
	}
}

// add schedules bucket[k] += (qx, ±qy), (qx, qy) not the point at
// infinity. It returns false, and does nothing, when the addition cannot
// be batched: bucket k already has one pending, or holds ±Q (doubling or
// cancelling); the caller adds such a point some other way.
func (b *bucketsG2) add(k int, qx, qy *curve.E2, negate bool) bool {
	if !b.filled[k] {
		b.x[k] = *qx
		if negate {
			b.y[k].Neg(qy)
		} else {
			b.y[k] = *qy
		}
		b.filled[k] = true
		return true
	}
	if b.mark[k] == b.epoch || b.x[k].Equal(qx) {
		return false
	}
	b.mark[k] = b.epoch
	i := b.n
	b.k[i] = int32(k)
	b.qx[i] = *qx
	if negate {
		b.qy[i].Neg(qy)
	} else {
		b.qy[i] = *qy
	}
	b.n++
	if b.n == msmBatch {
		b.flush()
	}
	return true
}

// flush performs the pending additions.
func (b *bucketsG2) flush() {
	if b.n == 0 {
		return
	}
	var acc curve.E2
	acc.SetOne()
	for i := range b.n {
		b.den[i].Sub(&b.qx[i], &b.x[b.k[i]])
		b.pre[i] = acc
		acc.Mul(&acc, &b.den[i])
	}
	acc.Inverse(&acc)
	var inv, lambda, x3, u curve.E2
	for i := b.n - 1; i >= 0; i-- {
		inv.Mul(&acc, &b.pre[i]) // 1/den[i]
		acc.Mul(&acc, &b.den[i])
		k := b.k[i]
		// λ = (y2 − y1)/(x2 − x1), x3 = λ² − x1 − x2, y3 = λ(x1 − x3) − y1
		lambda.Sub(&b.qy[i], &b.y[k]).Mul(&lambda, &inv)
		x3.Square(&lambda).Sub(&x3, &b.x[k]).Sub(&x3, &b.qx[i])
		u.Sub(&b.x[k], &x3).Mul(&u, &lambda)
		b.y[k].Sub(&u, &b.y[k])
		b.x[k] = x3
	}
	b.n = 0
	b.epoch++
}

// parallel runs f over [0, n) split into GOMAXPROCS ranges.
func parallel(n int, f func(lo, hi int)) {
	k := min(runtime.GOMAXPROCS(0), n)
	if k <= 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	for t := range k {
		lo, hi := t*n/k, (t+1)*n/k
		wg.Go(func() { f(lo, hi) })
	}
	wg.Wait()
}
