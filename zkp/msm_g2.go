package zkp

import (
	"cmp"
	"runtime"
	"slices"
	"sync"

	curve "github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// The G2 half of the fixed-base MSM (see msm.go), line for line the G1
// code of msm_g1.go over E2 coordinates.

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
		row := make([]curve.G2Jac, w)
		pre := make([]curve.E2, w)
		for i := lo; i < hi; i++ {
			var p curve.G2Jac
			p.FromAffine(&points[i])
			for j := range w {
				if j > 0 {
					for range c {
						p.DoubleAssign()
					}
				}
				row[j] = p
			}
			toAffineG2(pts[i*w:(i+1)*w], row, pre)
		}
	})
	return &tableG2{c: c, windows: w, n: len(points), pts: pts}
}

// toAffineG2 sets out[i] to jac[i] in affine coordinates with one field
// inversion for all of them (gnark-crypto has a batch conversion for G1
// only). pre is scratch of the same length.
func toAffineG2(out []curve.G2Affine, jac []curve.G2Jac, pre []curve.E2) {
	var acc curve.E2
	acc.SetOne()
	for i := range jac {
		if jac[i].Z.IsZero() {
			continue
		}
		pre[i] = acc
		acc.Mul(&acc, &jac[i].Z)
	}
	acc.Inverse(&acc)
	var zinv, zinv2 curve.E2
	for i := len(jac) - 1; i >= 0; i-- {
		if jac[i].Z.IsZero() {
			out[i] = curve.G2Affine{}
			continue
		}
		zinv.Mul(&acc, &pre[i])
		acc.Mul(&acc, &jac[i].Z)
		zinv2.Square(&zinv)
		out[i].X.Mul(&jac[i].X, &zinv2)
		out[i].Y.Mul(&jac[i].Y, &zinv2).Mul(&out[i].Y, &zinv)
	}
}

func (t *tableG2) multiExp(scalars []fr.Element, lo int) curve.G2Jac {
	acc := newBucketsG2(1 << (t.c - 1))
	digits := make([]int32, t.windows)
	// Points to add once and twice, outside the buckets: they would all
	// land in buckets 0 and 1 and queue behind each other there. These are
	// the scalars equal to 1 (boolean wires) and the top window, which
	// holds only the top bit and the carry (digit 0, 1 or 2).
	var once, twice []curve.G2Affine
	var one fr.Element
	one.SetOne()
	last := t.windows - 1
	for i := range scalars {
		row := t.pts[(lo+i)*t.windows : (lo+i+1)*t.windows]
		switch {
		case scalars[i].IsZero() || row[0].IsInfinity():
			continue
		case scalars[i].Equal(&one):
			once = append(once, row[0])
			continue
		}
		signedDigits(digits, scalars[i].Bits(), t.c)
		for j, d := range digits {
			switch {
			case j == last && d == 1:
				once = append(once, row[j])
			case j == last && d == 2:
				twice = append(twice, row[j])
			case d > 0:
				acc.add(int(d-1), &row[j].X, &row[j].Y, false)
			case d < 0:
				acc.add(int(-d-1), &row[j].X, &row[j].Y, true)
			}
			if acc.n == msmBatch {
				acc.flush()
			}
		}
	}
	acc.drain()
	total := acc.reduce()
	s1, s2 := sumG2(once), sumG2(twice)
	s2.DoubleAssign()
	total.AddAssign(&s1)
	total.AddAssign(&s2)
	return total
}

// sumG2 is sumG1 over G2.
func sumG2(pts []curve.G2Affine) curve.G2Jac {
	var r curve.G2Jac
	if len(pts) == 0 {
		return r
	}
	var scratch scratchG2
	sumGroupsG2(pts, []int{0}, &scratch)
	r.FromAffine(&pts[0])
	return r
}

// sumGroupsG2 is sumGroupsG1 over G2.
func sumGroupsG2(pts []curve.G2Affine, starts []int, s *scratchG2) {
	lens := make([]int, len(starts))
	for g, st := range starts {
		end := len(pts)
		if g+1 < len(starts) {
			end = starts[g+1]
		}
		lens[g] = end - st
	}
	var idx []int32 // 0, 1, 2, …: addBatchG2's targets are x[i], y[i]
	var slot []int  // where each batched sum goes in pts
	var x, y, qx, qy []curve.E2
	for {
		slot, x, y, qx, qy = slot[:0], x[:0], y[:0], qx[:0], qy[:0]
		long := false
		for g, st := range starts {
			n := lens[g]
			if n < 2 {
				continue
			}
			out := st
			for i := st; i+1 < st+n; i += 2 {
				a, b := pts[i], pts[i+1]
				switch {
				case a.IsInfinity():
					pts[out] = b
				case b.IsInfinity():
					pts[out] = a
				case a.X.Equal(&b.X): // doubling or cancelling: not for the affine formula
					var j curve.G2Jac
					j.FromAffine(&a)
					j.AddMixed(&b)
					pts[out].FromJacobian(&j)
				default:
					slot = append(slot, out)
					x, y = append(x, a.X), append(y, a.Y)
					qx, qy = append(qx, b.X), append(qy, b.Y)
				}
				out++
			}
			if n%2 == 1 {
				pts[out] = pts[st+n-1]
				out++
			}
			lens[g] = out - st
			long = long || lens[g] > 1
		}
		m := len(slot)
		for len(idx) < m {
			idx = append(idx, int32(len(idx)))
		}
		addBatchG2(x, y, idx[:m], qx, qy, s)
		for i, o := range slot {
			pts[o].X, pts[o].Y = x[i], y[i]
		}
		if !long {
			return
		}
	}
}

// bucketsG2 is bucketsG1 over G2 (coordinates in E2), line for line.
type bucketsG2 struct {
	x, y     []curve.E2
	filled   []bool
	mark     []uint32 // mark[k] == epoch: bucket k has an addition pending
	epoch    uint32
	fallback []curve.G2Jac // doublings and cancellations, in Jacobian coordinates (allocated on first use)

	n       int
	k       [msmBatch]int32
	qx, qy  [msmBatch]curve.E2
	scratch scratchG2

	deferred, spare []deferredG2 // additions to a bucket that had one pending
}

type deferredG2 struct {
	k    int
	x, y curve.E2
}

func newBucketsG2(nb int) *bucketsG2 {
	return &bucketsG2{
		x: make([]curve.E2, nb), y: make([]curve.E2, nb),
		filled: make([]bool, nb), mark: make([]uint32, nb), epoch: 1,
	}
}

// add schedules bucket[k] += (qx, ±qy), (qx, qy) not the point at
// infinity. The caller flushes when n reaches msmBatch.
func (b *bucketsG2) add(k int, qx, qy *curve.E2, negate bool) {
	var y curve.E2
	if negate {
		y.Neg(qy)
	} else {
		y = *qy
	}
	switch {
	case !b.filled[k]:
		b.x[k], b.y[k] = *qx, y
		b.filled[k] = true
	case b.mark[k] == b.epoch:
		b.deferred = append(b.deferred, deferredG2{k, *qx, y})
	case b.x[k].Equal(qx):
		// Q = ±bucket: the affine formula does not apply (and it cannot
		// happen for distinct key points but by a discrete-log accident).
		if b.fallback == nil {
			b.fallback = make([]curve.G2Jac, len(b.x))
		}
		b.fallback[k].AddMixed(&curve.G2Affine{X: *qx, Y: y})
	default:
		b.mark[k] = b.epoch
		i := b.n
		b.k[i] = int32(k)
		b.qx[i], b.qy[i] = *qx, y
		b.n++
	}
}

// addPending is bucketsG1.addPending over G2.
func (b *bucketsG2) addPending() {
	if b.n > 0 {
		addBatchG2(b.x, b.y, b.k[:b.n], b.qx[:b.n], b.qy[:b.n], &b.scratch)
	}
	b.n = 0
	b.epoch++
}

// flush performs the pending additions, then schedules the deferred ones
// (as many as fit).
func (b *bucketsG2) flush() {
	b.addPending()
	d := b.deferred
	b.deferred = b.spare[:0]
	for _, it := range d {
		if b.n == msmBatch {
			b.deferred = append(b.deferred, it)
			continue
		}
		b.add(it.k, &it.x, &it.y, false)
	}
	b.spare = d[:0]
}

// drain is bucketsG1.drain over G2.
func (b *bucketsG2) drain() {
	b.addPending()
	d := b.deferred
	if len(d) == 0 {
		return
	}
	slices.SortFunc(d, func(p, q deferredG2) int { return cmp.Compare(p.k, q.k) })
	pts := make([]curve.G2Affine, 0, 2*len(d))
	var starts, ks []int
	for i := 0; i < len(d); {
		k := d[i].k
		starts, ks = append(starts, len(pts)), append(ks, k)
		if b.filled[k] {
			pts = append(pts, curve.G2Affine{X: b.x[k], Y: b.y[k]})
		}
		for ; i < len(d) && d[i].k == k; i++ {
			pts = append(pts, curve.G2Affine{X: d[i].x, Y: d[i].y})
		}
	}
	sumGroupsG2(pts, starts, &b.scratch)
	for g, k := range ks {
		p := &pts[starts[g]]
		b.x[k], b.y[k], b.filled[k] = p.X, p.Y, !p.IsInfinity()
	}
	b.deferred = d[:0]
}

// reduce returns Σ (k+1)·bucket[k], in affine coordinates (msm_reduce.go)
// unless a bucket has a Jacobian side part or there are too few buckets.
func (b *bucketsG2) reduce() curve.G2Jac {
	if b.fallback == nil && len(b.x) >= 2*reduceChains && len(b.x)%reduceChains == 0 {
		return reduceAffineG2(b.x, b.y, b.filled, &b.scratch)
	}
	return b.reduceJacobian()
}

// reduceJacobian is reduce in Jacobian coordinates.
func (b *bucketsG2) reduceJacobian() curve.G2Jac {
	var running, total curve.G2Jac
	for k := len(b.x) - 1; k >= 0; k-- {
		if b.filled[k] {
			running.AddMixed(&curve.G2Affine{X: b.x[k], Y: b.y[k]})
		}
		if b.fallback != nil {
			running.AddAssign(&b.fallback[k])
		}
		total.AddAssign(&running)
	}
	return total
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
