package zkp

import (
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
//     trick), about 6 field multiplications per addition instead of 11,
//     run as vector operations over the whole batch (msm_batch.go: eight
//     multiplications at a time with AVX-512 IFMA where the CPU has it,
//     and there as fused kernels that keep a batch in radix 2^52 from the
//     batch inversion to the results: msm_ifma.go; without IFMA, G2
//     batches run element at a time: msm_scalar.go);
//     an addition whose bucket already has one pending waits for the next
//     batch, and one the affine formula cannot take (the bucket holds ±the
//     point) goes to a Jacobian side bucket; what still waits at the end
//     (a few buckets many scalars' digits share) is summed per bucket
//     pairwise, all buckets' pairs sharing one inversion per level, not
//     one batch of a handful of additions per point (drain);
//   - points that would all land in one bucket and queue there — scalars
//     equal to 1 (boolean wires) and the top window, which holds only the
//     top bit plus a carry — are summed apart, pairwise in batched levels.
//
// The result is the same group element as MultiExp's (tests compare them);
// the cost is ~17 MB of tables per circuit, built once (~0.6 CPU-seconds).
//
// The G2 code repeats the G1 code line for line over E2 coordinates, as
// gnark-crypto's own generated per-group code does: a Go generic over the
// two field types would call every field operation of the inner loops
// through a dictionary (fp.Element and E2 have different GC shapes), which
// is what this file exists to avoid. Change both together; the tests check
// each group against MultiExp.

// msmWindows is the number of signed c-bit digits of a scalar below r
// (< 2^254): the top digit absorbs the last carry and stays below 2^(c-1).
func msmWindows(c uint) int {
	return (fr.Bits + int(c)) / int(c) // ceil((fr.Bits+1)/c)
}

// msmWindowBits picks the window width for n points: the one that
// minimises n·W(c) batched affine additions (~6.5 field multiplications
// each) plus the reduction's two Jacobian additions per bucket (~27). For
// our ~2 000-point MSMs that is c = 11; c = 12 measured the same within
// the noise, 10 and 13 a few per cent slower. For the 3 000–16 000-point
// MSMs of the -v3/-v4 keys it is c = 13, which measured best of 12–15
// (2026-11-29, eligibility-v3's K, Z and B₂ in G2): c = 12 and 14 take
// twice as long, because their top digit (bits 252–253 plus a carry, up
// to 4) sends every scalar's top window to the same four buckets, where
// the additions queue one per batch.
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
//
// The carry is computed without a branch: a window's value plus the carry
// in is in [0, 2^c], and it is at least 2^(c-1) exactly when adding 2^(c-1)
// reaches bit c. Digits of the scalars of a proof are random, so a branch
// there was mispredicted about half the time (signedDigits was ~4 % of a
// proof's CPU).
func signedDigits(d []int32, s [fr.Limbs]uint64, c uint) {
	mask := uint64(1)<<c - 1
	half := int64(1) << (c - 1)
	carry := int64(0)
	last := len(d) - 1
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
		if j == last { // the top digit keeps the last carry
			d[j] = int32(digit)
			break
		}
		carry = (digit + half) >> c
		d[j] = int32(digit - carry<<c)
	}
}
