package zkp

import (
	"cmp"
	"slices"

	curve "github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fp"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// The G1 half of the fixed-base MSM (see msm.go): tables, batched affine
// buckets and their reduction.

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
	acc := newBucketsG1(1 << (t.c - 1))
	digits := make([]int32, t.windows)
	// Points to add once and twice, outside the buckets: they would all
	// land in buckets 0 and 1 and queue behind each other there. These are
	// the scalars equal to 1 (boolean wires) and the top window, which
	// holds only the top bit and the carry (digit 0, 1 or 2).
	var once, twice []curve.G1Affine
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
	s1, s2 := sumG1(once), sumG1(twice)
	s2.DoubleAssign()
	total.AddAssign(&s1)
	total.AddAssign(&s2)
	return total
}

// sumG1 returns the sum of pts (which it overwrites), adding pairs level by
// level with one field inversion per level.
func sumG1(pts []curve.G1Affine) curve.G1Jac {
	var r curve.G1Jac
	if len(pts) == 0 {
		return r
	}
	var scratch scratchG1
	sumGroupsG1(pts, []int{0}, &scratch)
	r.FromAffine(&pts[0])
	return r
}

// sumGroupsG1 sums each group of pts in place: group g is
// pts[starts[g]:starts[g+1]] (the last one runs to the end of pts), and
// its sum goes to pts[starts[g]] ((0, 0) for the point at infinity). Pairs
// are added level by level, every group's pairs of a level sharing one
// field inversion, so a group of d points takes ⌈log₂ d⌉ inversions however
// many groups there are.
func sumGroupsG1(pts []curve.G1Affine, starts []int, s *scratchG1) {
	lens := make([]int, len(starts))
	for g, st := range starts {
		end := len(pts)
		if g+1 < len(starts) {
			end = starts[g+1]
		}
		lens[g] = end - st
	}
	var idx []int32 // 0, 1, 2, …: addBatchG1's targets are x[i], y[i]
	var slot []int  // where each batched sum goes in pts
	var x, y, qx, qy []fp.Element
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
					var j curve.G1Jac
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
		addBatchG1(x, y, idx[:m], qx, qy, s)
		for i, o := range slot {
			pts[o].X, pts[o].Y = x[i], y[i]
		}
		if !long {
			return
		}
	}
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
	x, y     []fp.Element
	filled   []bool
	mark     []uint32 // mark[k] == epoch: bucket k has an addition pending
	epoch    uint32
	fallback []curve.G1Jac // doublings and cancellations, in Jacobian coordinates (allocated on first use)

	n       int
	k       [msmBatch]int32
	qx, qy  [msmBatch]fp.Element
	scratch scratchG1

	deferred, spare []deferredG1 // additions to a bucket that had one pending
}

type deferredG1 struct {
	k    int
	x, y fp.Element
}

func newBucketsG1(nb int) *bucketsG1 {
	return &bucketsG1{
		x: make([]fp.Element, nb), y: make([]fp.Element, nb),
		filled: make([]bool, nb), mark: make([]uint32, nb), epoch: 1,
	}
}

// add schedules bucket[k] += (qx, ±qy), (qx, qy) not the point at
// infinity. The caller flushes when n reaches msmBatch.
func (b *bucketsG1) add(k int, qx, qy *fp.Element, negate bool) {
	var y fp.Element
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
		b.deferred = append(b.deferred, deferredG1{k, *qx, y})
	case b.x[k].Equal(qx):
		// Q = ±bucket: the affine formula does not apply (and it cannot
		// happen for distinct key points but by a discrete-log accident).
		if b.fallback == nil {
			b.fallback = make([]curve.G1Jac, len(b.x))
		}
		b.fallback[k].AddMixed(&curve.G1Affine{X: *qx, Y: y})
	default:
		b.mark[k] = b.epoch
		i := b.n
		b.k[i] = int32(k)
		b.qx[i], b.qy[i] = *qx, y
		b.n++
	}
}

// addPending performs the pending additions and opens the next batch.
func (b *bucketsG1) addPending() {
	if b.n > 0 {
		addBatchG1(b.x, b.y, b.k[:b.n], b.qx[:b.n], b.qy[:b.n], &b.scratch)
	}
	b.n = 0
	b.epoch++
}

// flush performs the pending additions, then schedules the deferred ones
// (as many as fit).
func (b *bucketsG1) flush() {
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

// drain performs every scheduled addition: the pending batch, then the
// deferred ones. Those queue behind a few deep buckets (digits of many
// scalars alike), where flushing would add one point per bucket and batch:
// one inversion for a handful of additions. Instead each bucket's queue is
// summed with the bucket pairwise (sumGroupsG1).
func (b *bucketsG1) drain() {
	b.addPending()
	d := b.deferred
	if len(d) == 0 {
		return
	}
	slices.SortFunc(d, func(p, q deferredG1) int { return cmp.Compare(p.k, q.k) })
	pts := make([]curve.G1Affine, 0, 2*len(d))
	var starts, ks []int
	for i := 0; i < len(d); {
		k := d[i].k
		starts, ks = append(starts, len(pts)), append(ks, k)
		if b.filled[k] {
			pts = append(pts, curve.G1Affine{X: b.x[k], Y: b.y[k]})
		}
		for ; i < len(d) && d[i].k == k; i++ {
			pts = append(pts, curve.G1Affine{X: d[i].x, Y: d[i].y})
		}
	}
	sumGroupsG1(pts, starts, &b.scratch)
	for g, k := range ks {
		p := &pts[starts[g]]
		b.x[k], b.y[k], b.filled[k] = p.X, p.Y, !p.IsInfinity()
	}
	b.deferred = d[:0]
}

// reduce returns Σ (k+1)·bucket[k], in affine coordinates (msm_reduce.go)
// unless a bucket has a Jacobian side part or there are too few buckets.
func (b *bucketsG1) reduce() curve.G1Jac {
	if b.fallback == nil && len(b.x) >= 2*reduceChains && len(b.x)%reduceChains == 0 {
		return reduceAffineG1(b.x, b.y, b.filled, &b.scratch)
	}
	return b.reduceJacobian()
}

// reduceJacobian is reduce in Jacobian coordinates.
func (b *bucketsG1) reduceJacobian() curve.G1Jac {
	var running, total curve.G1Jac
	for k := len(b.x) - 1; k >= 0; k-- {
		if b.filled[k] {
			running.AddMixed(&curve.G1Affine{X: b.x[k], Y: b.y[k]})
		}
		if b.fallback != nil {
			running.AddAssign(&b.fallback[k])
		}
		total.AddAssign(&running)
	}
	return total
}
