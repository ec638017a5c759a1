package iden3

import (
	"math/big"
	"math/bits"

	"github.com/consensys/gnark/frontend"
	"github.com/iden3/go-iden3-crypto/babyjub"
	babyconst "github.com/iden3/go-iden3-crypto/constants"
)

// Baby Jubjub as iden3 defines it: a·x² + y² = 1 + d·x²·y² over the BN254
// scalar field, with the base point B8 of the prime-order subgroup.
var (
	curveA = big.NewInt(168700)
	curveD = big.NewInt(168696)
)

// SBits is the width of a signature's S: iden3 requires S below the
// subgroup order, which is below 2^251.
const SBits = 251

// fixedWindow is the width of a window of S in the fixed-base
// multiplication S·B8: a window of w bits costs 2^w − w − 1 products of its
// bits to select one of 2^w constant points, and one Montgomery addition
// (3): 2 bits is the cheapest per bit (4/2, against 3 for 1 bit and 7/3
// for 3).
const fixedWindow = 2

// Point is a point of Baby Jubjub in a circuit.
type Point struct {
	X, Y frontend.Variable
}

// AssertOnCurve constrains p to satisfy the curve equation.
func AssertOnCurve(api frontend.API, p Point) {
	xx := api.Mul(p.X, p.X)
	yy := api.Mul(p.Y, p.Y)
	api.AssertIsEqual(api.Add(api.Mul(curveA, xx), yy), api.Add(1, api.Mul(curveD, xx, yy)))
}

// sums are the products an addition of p and q needs: x1·x2, y1·y2 and
// d·x1·x2·y1·y2, with (x1+y1)·(x2+y2) − x1·x2 − y1·y2 = x1·y2 + y1·x2.
func sums(api frontend.API, p, q Point) (xx, yy, cross, dxy frontend.Variable) {
	xx = api.Mul(p.X, q.X)
	yy = api.Mul(p.Y, q.Y)
	cross = api.Sub(api.Mul(api.Add(p.X, p.Y), api.Add(q.X, q.Y)), xx, yy)
	dxy = api.Mul(curveD, xx, yy)
	return xx, yy, cross, dxy
}

// add is the twisted Edwards addition, complete for points on the curve (a
// is a square and d is not, so 1 ± d·x1·x2·y1·y2 is never 0): 6
// constraints.
func add(api frontend.API, p, q Point) Point {
	xx, yy, cross, dxy := sums(api, p, q)
	return Point{
		X: api.DivUnchecked(cross, api.Add(1, dxy)),
		Y: api.DivUnchecked(api.Sub(yy, api.Mul(curveA, xx)), api.Sub(1, dxy)),
	}
}

// assertSum constrains p + q = r (p, q on the curve) without computing
// the sum first: 6 constraints.
func assertSum(api frontend.API, p, q, r Point) {
	xx, yy, cross, dxy := sums(api, p, q)
	api.AssertIsEqual(api.Mul(r.X, api.Add(1, dxy)), cross)
	api.AssertIsEqual(api.Mul(r.Y, api.Sub(1, dxy)), api.Sub(yy, api.Mul(curveA, xx)))
}

// double is add(p, p) with the curve equation folded in (p on the curve):
// 5 constraints.
func double(api frontend.API, p Point) Point {
	xy := api.Mul(p.X, p.Y)
	xx := api.Mul(p.X, p.X)
	yy := api.Mul(p.Y, p.Y)
	axx := api.Mul(curveA, xx)
	return Point{
		X: api.DivUnchecked(api.Mul(2, xy), api.Add(axx, yy)),
		Y: api.DivUnchecked(api.Sub(yy, axx), api.Sub(2, api.Add(axx, yy))),
	}
}

// VerifyEdDSAPoseidon constrains (r8, s) to be a valid EdDSA-Poseidon
// signature of msg under the public key a, exactly as
// babyjub.PublicKey.VerifyPoseidon checks it:
//
//	h = Poseidon(R8x, R8y, Ax, Ay, msg),  S·B8 = R8 + (8·h)·A
//
// with a and r8 on the curve and S below 2^251 — and, beyond iden3, a key
// of small order refused (8·A is the identity for such a key, which would
// make any message's signature check pass; no honest key is one, and
// credential.ParsePublicKey refuses them too).
//
// S·B8 is a fixed-base multiplication (windows of 2 bits of S, each
// selecting one of four precomputed points), h·(8A) a variable-base one
// with signed digits (a doubling fused with an addition of ±8A per bit),
// both in the Montgomery form with offset points keeping the incomplete
// additions off their exceptional case (scalarMul says why that is
// sound); the final equation is checked with the complete twisted Edwards
// addition.
func VerifyEdDSAPoseidon(api frontend.API, a, r8 Point, s, msg frontend.Variable) {
	AssertOnCurve(api, a)
	AssertOnCurve(api, r8)
	h := Poseidon(api, r8.X, r8.Y, a.X, a.Y, msg)

	hBits := api.ToBinary(h) // every bit of the field element, < r enforced
	sBits := api.ToBinary(s, SBits)

	a8 := double(api, double(api, double(api, a)))
	api.AssertIsDifferent(a8.X, 0) // 8·A is not the identity (0, 1)

	assertSum(api, r8, scalarMul(api, a8, hBits), fixedBaseMul(api, sBits))
}

// fixedBaseMul is k·B8 for k given by its little-endian bits: the sum over
// windows j of table[j][window j of k], where table[j][v] =
// v·4^j·B8 + 2^j·H is computed natively, so the circuit only selects
// and adds (in the Montgomery form, 3 constraints an addition). The
// offsets 2^j·H (H = offsetPoint("fixed")) keep every entry off the
// identity and every addition off equal points: acc before window j is
// a·B8 + (2^j − 1)·H and the entry a'·B8 + 2^j·H, so acc = ±entry is a
// discrete-logarithm relation between B8 and H (see scalarMul). The sum
// of the offsets is subtracted at the end.
func fixedBaseMul(api frontend.API, k []frontend.Variable) Point {
	h := offsetPoint("fixed")
	base := babyjub.B8.Projective()
	off := h.te.Projective()
	var acc montPoint
	windows := 0
	for j := 0; j*fixedWindow < len(k); j++ {
		w := k[j*fixedWindow : min((j+1)*fixedWindow, len(k))]
		us, vs := multiples(base, off, 1<<len(w))
		m := monomials(api, w)
		entry := montPoint{U: combine(api, m, us), V: combine(api, m, vs)}
		if j == 0 {
			acc = entry
		} else {
			acc = montAdd(api, acc, entry)
		}
		base = base.Add(base, base).Add(base, base) // 4·base
		off = off.Add(off, off)                     // 2·off
		windows++
	}
	// − (2^windows − 1)·H
	total := new(babyjub.Point).Mul(new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(windows)), big.NewInt(1)), h.te)
	return add(api, fromMont(api, acc), Point{X: new(big.Int).Sub(babyconst.Q, total.X), Y: total.Y})
}

// multiples is v·base + off for v = 0 … n−1, in the Montgomery form;
// base and off are not changed.
func multiples(base, off *babyjub.PointProjective, n int) (us, vs []*big.Int) {
	cur := babyjub.NewPointProjective().Add(babyjub.NewPointProjective(), off)
	for range n {
		u, v := montOf(cur.Affine())
		us, vs = append(us, u), append(vs, v)
		cur = babyjub.NewPointProjective().Add(cur, base)
	}
	return us, vs
}

// monomials is, for every subset S of bits (as a bit mask), the product of
// the bits in S (1 for the empty set): 2^n − n − 1 constraints.
func monomials(api frontend.API, b []frontend.Variable) []frontend.Variable {
	m := make([]frontend.Variable, 1<<len(b))
	m[0] = 1
	for set := 1; set < len(m); set++ {
		low := set & -set
		i := bits.TrailingZeros(uint(low))
		if set == low {
			m[set] = b[i]
		} else {
			m[set] = api.Mul(m[set^low], b[i])
		}
	}
	return m
}

// combine is table[v] for v the number the bits of m spell: the table's
// multilinear extension Σ_S c_S·m[S], whose coefficients are
// c_S = Σ_{T⊆S} (−1)^{|S∖T|} table[T] — a linear combination, no
// constraint.
func combine(api frontend.API, m []frontend.Variable, table []*big.Int) frontend.Variable {
	var out frontend.Variable = 0
	for set := range m {
		c := new(big.Int)
		for sub := set; ; sub = (sub - 1) & set {
			if bits.OnesCount(uint(set^sub))%2 == 0 {
				c.Add(c, table[sub])
			} else {
				c.Sub(c, table[sub])
			}
			if sub == 0 {
				break
			}
		}
		if c.Sign() != 0 {
			out = api.Add(out, api.Mul(c, m[set]))
		}
	}
	return out
}
