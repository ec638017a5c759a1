package iden3

import (
	"math/big"

	"github.com/consensys/gnark/frontend"
)

// Baby Jubjub as iden3 defines it: a·x² + y² = 1 + d·x²·y² over the BN254
// scalar field, with the base point B8 of the prime-order subgroup.
var (
	curveA = big.NewInt(168700)
	curveD = big.NewInt(168696)
	b8x, _ = new(big.Int).SetString("5299619240641551281634865583518297030282874472190772894086521144482721001553", 10)
	b8y, _ = new(big.Int).SetString("16950150798460657717958625567821834550301663161624707787222815936182638968203", 10)
)

// SBits is the width of a signature's S: iden3 requires S below the
// subgroup order, which is below 2^251.
const SBits = 251

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

// add is the (complete, for points on the curve) twisted Edwards addition.
func add(api frontend.API, p, q Point) Point {
	x1y2 := api.Mul(p.X, q.Y)
	y1x2 := api.Mul(p.Y, q.X)
	x1x2 := api.Mul(p.X, q.X)
	y1y2 := api.Mul(p.Y, q.Y)
	dxy := api.Mul(curveD, x1x2, y1y2)
	return Point{
		X: api.DivUnchecked(api.Add(x1y2, y1x2), api.Add(1, dxy)),
		Y: api.DivUnchecked(api.Sub(y1y2, api.Mul(curveA, x1x2)), api.Sub(1, dxy)),
	}
}

// double is add(p, p) with the curve equation folded in (p on the curve).
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
// with a and r8 on the curve and S below 2^251. It is computed as
// S·B8 + h·(−8A) = R8 in one double-and-add over the 254 bits of h.
func VerifyEdDSAPoseidon(api frontend.API, a, r8 Point, s, msg frontend.Variable) {
	AssertOnCurve(api, a)
	AssertOnCurve(api, r8)
	h := Poseidon(api, r8.X, r8.Y, a.X, a.Y, msg)

	hBits := api.ToBinary(h) // every bit of the field element, < r enforced
	sBits := api.ToBinary(s, SBits)

	a8 := double(api, double(api, double(api, a)))
	negA8 := Point{X: api.Neg(a8.X), Y: a8.Y}
	b8 := Point{X: b8x, Y: b8y}
	sum := add(api, b8, negA8)

	bit := func(bits []frontend.Variable, i int) frontend.Variable {
		if i < len(bits) {
			return bits[i]
		}
		return 0
	}
	pick := func(i int) Point {
		sb, hb := bit(sBits, i), bit(hBits, i)
		return Point{
			X: api.Lookup2(sb, hb, 0, b8.X, negA8.X, sum.X),
			Y: api.Lookup2(sb, hb, 1, b8.Y, negA8.Y, sum.Y),
		}
	}
	n := len(hBits)
	acc := pick(n - 1)
	for i := n - 2; i >= 0; i-- {
		acc = add(api, double(api, acc), pick(i))
	}
	api.AssertIsEqual(acc.X, r8.X)
	api.AssertIsEqual(acc.Y, r8.Y)
}
