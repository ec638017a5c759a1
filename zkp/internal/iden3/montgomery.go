package iden3

import (
	"crypto/sha256"
	"math/big"

	"github.com/consensys/gnark/frontend"
	"github.com/iden3/go-iden3-crypto/babyjub"
	babyconst "github.com/iden3/go-iden3-crypto/constants"
)

// Baby Jubjub in Montgomery form, B·v² = u³ + A·u² + u with
// A = 2(a+d)/(a−d) = 168698 and B = 4/(a−d) = 1, mapped from the twisted
// Edwards form by u = (1+y)/(1−y), v = u/x. Its affine addition is 3
// constraints and a doubling fused with an addition 5, against 6 and 11
// for the twisted Edwards formulas — but it is incomplete: the chord
// through two equal points is any line (λ·0 = 0). scalarMul keeps every
// addition away from that case with an offset point (see there).
var montA = big.NewInt(168698)

// montPoint is a point of the Montgomery form in a circuit.
type montPoint struct {
	U, V frontend.Variable
}

// toMont maps p, neither the identity nor of order 2 (x ≠ 0, y ≠ ±1),
// to the Montgomery form: 2 constraints.
func toMont(api frontend.API, p Point) montPoint {
	u := api.DivUnchecked(api.Add(1, p.Y), api.Sub(1, p.Y))
	return montPoint{U: u, V: api.DivUnchecked(u, p.X)}
}

// fromMont maps m (v ≠ 0: not of order 2) back: 2 constraints. u = −1
// has no point on Baby Jubjub (B·v² = A − 2 = d is not a square).
func fromMont(api frontend.API, m montPoint) Point {
	return Point{X: api.DivUnchecked(m.U, m.V), Y: api.DivUnchecked(api.Sub(m.U, 1), api.Add(m.U, 1))}
}

// montAdd is p + q for p ≠ ±q: 3 constraints. Were p = q, λ would be
// free; were p = −q, unsatisfiable.
func montAdd(api frontend.API, p, q montPoint) montPoint {
	l := api.DivUnchecked(api.Sub(q.V, p.V), api.Sub(q.U, p.U))
	u := api.Sub(api.Mul(l, l), montA, p.U, q.U)
	return montPoint{U: u, V: api.Sub(api.Mul(l, api.Sub(p.U, u)), p.V)}
}

// montDoubleAdd is 2p + q as (p + q) + p without the middle point's v:
// 5 constraints. Only p = q leaves a variable free (the first chord); in
// the second, u(p+q) = u(p) makes the constraint −2·v(p) = 0,
// unsatisfiable for a point not of order 2.
func montDoubleAdd(api frontend.API, p, q montPoint) montPoint {
	l1 := api.DivUnchecked(api.Sub(q.V, p.V), api.Sub(q.U, p.U))
	u3 := api.Sub(api.Mul(l1, l1), montA, p.U, q.U)
	l2 := api.Sub(api.DivUnchecked(api.Mul(-2, p.V), api.Sub(u3, p.U)), l1)
	u4 := api.Sub(api.Mul(l2, l2), montA, u3, p.U)
	return montPoint{U: u4, V: api.Sub(api.Mul(l2, api.Sub(p.U, u4)), p.V)}
}

// scalarMul is k·t for t in the prime-order subgroup and not the
// identity, k given by its n little-endian bits: 6 constraints a bit.
//
// From the top, bit i ≥ 1 adds the digit 2k_i − 1 ∈ {−1, +1} (a sign on
// t's v, one constraint): acc ← 2·acc ± t, starting from t + G for a fixed
// offset point G. After the n − 1 steps acc = 2^(n−1)·G + (k − k_0 + 1)·t;
// the offset is then subtracted and t once more when k_0 = 0, with the
// complete twisted Edwards addition.
//
// Why the incomplete additions are sound: the only free case is an
// addition of a point to itself, acc = ±t at some step (or t = G at the
// start). acc is 2^i·G + D·t for an integer D the prover knows, so either
// case is a discrete-logarithm relation between G and t = 8·A. G is
// hashed to the curve (offsetPoint("variable")), so no one knows its logarithm to
// any key: finding such a relation is the discrete-logarithm problem on
// Baby Jubjub — the assumption the signature itself rests on. (A payer
// who made its key from G could satisfy the circuit without a signature;
// it can sign anyway.)
func scalarMul(api frontend.API, t Point, k []frontend.Variable) Point {
	n := len(k)
	g := offsetPoint("variable")
	gm := montPoint{U: g.u, V: g.v}
	tm := toMont(api, t)
	acc := montAdd(api, tm, gm)
	for i := n - 1; i >= 1; i-- {
		v := api.Sub(api.Mul(2, k[i], tm.V), tm.V) // ±v(t)
		acc = montDoubleAdd(api, acc, montPoint{U: tm.U, V: v})
	}
	r := fromMont(api, acc)

	// − 2^(n−1)·G, a constant: one product (d·x1·x2·y1·y2) and two
	// divisions.
	off := new(babyjub.Point).Mul(new(big.Int).Lsh(big.NewInt(1), uint(n-1)), g.te)
	r = add(api, r, Point{X: new(big.Int).Sub(babyconst.Q, off.X), Y: off.Y})
	// − t when k_0 = 0: the identity (0, 1) when k_0 = 1, else (−x, y).
	notK0 := api.Sub(1, k[0])
	neg := Point{X: api.Mul(notK0, api.Neg(t.X)), Y: api.Add(k[0], api.Mul(notK0, t.Y))}
	return add(api, r, neg)
}

// offset is a point of the prime-order subgroup no one knows the
// discrete logarithm of, in both forms.
type offset struct {
	te   *babyjub.Point
	u, v *big.Int
}

// offsetPoint is 8 times the first point whose y is
// SHA-256("healthagents/iden3/offset/" + label, counter) read as a number
// below the field modulus (and whose 8-fold is not the identity).
func offsetPoint(label string) offset {
	for ctr := byte(0); ; ctr++ {
		h := sha256.Sum256(append([]byte("healthagents/iden3/offset/"+label), ctr))
		y := new(big.Int).SetBytes(h[:])
		if y.Cmp(babyconst.Q) >= 0 {
			continue
		}
		p, err := babyjub.PointFromSignAndY(false, y)
		if err != nil {
			continue
		}
		p = new(babyjub.Point).Mul(big.NewInt(8), p)
		if p.X.Sign() == 0 {
			continue
		}
		u, v := montOf(p)
		return offset{te: p, u: u, v: v}
	}
}

// montOf maps p (x ≠ 0, y ≠ 1) to the Montgomery form natively.
func montOf(p *babyjub.Point) (u, v *big.Int) {
	q := babyconst.Q
	one := big.NewInt(1)
	u = new(big.Int).Mul(new(big.Int).Add(one, p.Y), new(big.Int).ModInverse(new(big.Int).Sub(one, p.Y), q))
	u.Mod(u, q)
	v = new(big.Int).Mul(u, new(big.Int).ModInverse(p.X, q))
	return u, v.Mod(v, q)
}
