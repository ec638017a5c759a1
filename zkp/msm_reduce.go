package zkp

import (
	"math/big"

	curve "github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fp"
)

// Bucket reduction in affine coordinates.
//
// The reduction Σ (k+1)·bucket[k] is a running sum: from the top bucket
// down, running += bucket[k] and total += running, two additions per
// bucket that depend on each other, so they cannot share an inversion and
// were done in Jacobian coordinates (~27 field multiplications per bucket).
// Here the m buckets are cut into reduceChains chains of T = m/reduceChains
// consecutive buckets, and the chains run their running sums side by side:
// each step is two batches of reduceChains affine additions (addBatchG1,
// one shared inversion each). Chain s, over buckets sT … sT+T−1, ends with
// running_s = Σ bucket and total_s = Σ (i+1)·bucket[sT+i], so
//
//	Σ (k+1)·bucket[k] = Σ_s total_s + T·Σ_s s·running_s,
//
// where the last sum is a running sum over the reduceChains chains, in
// Jacobian coordinates. An addition the affine formula cannot take (equal
// x: a doubling or a cancellation) is done in Jacobian coordinates on the
// spot; buckets with a Jacobian side part (bucketsG1.fallback) use the
// plain Jacobian reduction.

// reduceChains is the number of chains of the affine reduction.
const reduceChains = 128

// reduceAffineG1 returns Σ (k+1)·(x[k], y[k]) over the filled buckets;
// len(x) is a multiple of reduceChains.
func reduceAffineG1(x, y []fp.Element, filled []bool, s *scratchG1) curve.G1Jac {
	const L = reduceChains
	t := len(x) / L
	var rx, ry, tx, ty, bx, by, ax, ay [L]fp.Element // running, total, bucket, batch
	var rSet, tSet, bSet [L]bool                     // not the point at infinity
	var k [L]int32
	for i := t - 1; i >= 0; i-- {
		for c := range L {
			j := c*t + i
			bSet[c] = filled[j]
			if filled[j] {
				bx[c], by[c] = x[j], y[j]
			}
		}
		addChainsG1(rx[:], ry[:], rSet[:], bx[:], by[:], bSet[:], k[:], ax[:], ay[:], s)
		addChainsG1(tx[:], ty[:], tSet[:], rx[:], ry[:], rSet[:], k[:], ax[:], ay[:], s)
	}
	var sum, acc, weighted curve.G1Jac
	for c := L - 1; c >= 0; c-- {
		if tSet[c] {
			sum.AddMixed(&curve.G1Affine{X: tx[c], Y: ty[c]})
		}
		if c > 0 {
			if rSet[c] {
				acc.AddMixed(&curve.G1Affine{X: rx[c], Y: ry[c]})
			}
			weighted.AddAssign(&acc) // Σ_{c ≥ 1} c·running_c
		}
	}
	if !weighted.Z.IsZero() {
		weighted.ScalarMultiplication(&weighted, big.NewInt(int64(t)))
		sum.AddAssign(&weighted)
	}
	return sum
}

// addChainsG1 sets p[c] += q[c] for every chain c, pSet and qSet telling
// which points are not the point at infinity; k, ax and ay are scratch.
func addChainsG1(px, py []fp.Element, pSet []bool, qx, qy []fp.Element, qSet []bool, k []int32, ax, ay fp.Vector, s *scratchG1) {
	n := 0
	for c := range px {
		switch {
		case !qSet[c]:
		case !pSet[c]:
			px[c], py[c], pSet[c] = qx[c], qy[c], true
		case px[c].Equal(&qx[c]): // doubling or cancelling: not for the affine formula
			var j curve.G1Jac
			j.FromAffine(&curve.G1Affine{X: px[c], Y: py[c]})
			j.AddMixed(&curve.G1Affine{X: qx[c], Y: qy[c]})
			if pSet[c] = !j.Z.IsZero(); pSet[c] {
				var a curve.G1Affine
				a.FromJacobian(&j)
				px[c], py[c] = a.X, a.Y
			}
		default:
			k[n], ax[n], ay[n] = int32(c), qx[c], qy[c]
			n++
		}
	}
	addBatchG1(px, py, k[:n], ax[:n], ay[:n], s)
}

// reduceAffineG2 is reduceAffineG1 over G2.
func reduceAffineG2(x, y []curve.E2, filled []bool, s *scratchG2) curve.G2Jac {
	const L = reduceChains
	t := len(x) / L
	var rx, ry, tx, ty, bx, by, ax, ay [L]curve.E2
	var rSet, tSet, bSet [L]bool
	var k [L]int32
	for i := t - 1; i >= 0; i-- {
		for c := range L {
			j := c*t + i
			bSet[c] = filled[j]
			if filled[j] {
				bx[c], by[c] = x[j], y[j]
			}
		}
		addChainsG2(rx[:], ry[:], rSet[:], bx[:], by[:], bSet[:], k[:], ax[:], ay[:], s)
		addChainsG2(tx[:], ty[:], tSet[:], rx[:], ry[:], rSet[:], k[:], ax[:], ay[:], s)
	}
	var sum, acc, weighted curve.G2Jac
	for c := L - 1; c >= 0; c-- {
		if tSet[c] {
			sum.AddMixed(&curve.G2Affine{X: tx[c], Y: ty[c]})
		}
		if c > 0 {
			if rSet[c] {
				acc.AddMixed(&curve.G2Affine{X: rx[c], Y: ry[c]})
			}
			weighted.AddAssign(&acc)
		}
	}
	if !weighted.Z.IsZero() {
		weighted.ScalarMultiplication(&weighted, big.NewInt(int64(t)))
		sum.AddAssign(&weighted)
	}
	return sum
}

// addChainsG2 is addChainsG1 over G2.
func addChainsG2(px, py []curve.E2, pSet []bool, qx, qy []curve.E2, qSet []bool, k []int32, ax, ay []curve.E2, s *scratchG2) {
	n := 0
	for c := range px {
		switch {
		case !qSet[c]:
		case !pSet[c]:
			px[c], py[c], pSet[c] = qx[c], qy[c], true
		case px[c].Equal(&qx[c]):
			var j curve.G2Jac
			j.FromAffine(&curve.G2Affine{X: px[c], Y: py[c]})
			j.AddMixed(&curve.G2Affine{X: qx[c], Y: qy[c]})
			if pSet[c] = !j.Z.IsZero(); pSet[c] {
				var a curve.G2Affine
				a.FromJacobian(&j)
				px[c], py[c] = a.X, a.Y
			}
		default:
			k[n], ax[n], ay[n] = int32(c), qx[c], qy[c]
			n++
		}
	}
	addBatchG2(px, py, k[:n], ax[:n], ay[:n], s)
}
