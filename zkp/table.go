package zkp

import (
	"math/big"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/frontend"
)

// lookupTable is a public table compiled into a circuit as polynomials: for
// keys k₁…kₙ, Z(x) = Π(x − kᵢ) vanishes exactly on the keys, and each column
// is the polynomial through (kᵢ, valueᵢ). Given the powers x¹…xⁿ of a
// witness x (n−1 constraints), asserting Z(x) = 0 proves x is a key and every
// column's value at x is a free linear combination — cheaper than a one-hot
// selector (two constraints per row).
type lookupTable struct {
	zero    []*big.Int   // coefficients of Z, degree n
	columns [][]*big.Int // coefficients of each column's polynomial, degree < n
}

func newLookupTable(keys []*big.Int, columns ...[]*big.Int) *lookupTable {
	n := len(keys)
	xs := make([]fr.Element, n)
	for i, k := range keys {
		xs[i].SetBigInt(k)
	}
	// Z(x) = Π (x − kᵢ), coefficients low degree first.
	z := []fr.Element{{}}
	z[0].SetOne()
	for i := range xs {
		next := make([]fr.Element, len(z)+1)
		for j := range z {
			var t fr.Element
			t.Mul(&z[j], &xs[i])
			next[j].Sub(&next[j], &t)
			next[j+1].Add(&next[j+1], &z[j])
		}
		z = next
	}
	t := &lookupTable{zero: toBig(z)}
	for _, col := range columns {
		t.columns = append(t.columns, toBig(interpolate(xs, col, z)))
	}
	return t
}

// interpolate returns the coefficients of the polynomial of degree < n
// through (xᵢ, yᵢ), using Z = Π(x − xᵢ): Lᵢ = Z/(x − xᵢ) / Z'(xᵢ).
func interpolate(xs []fr.Element, ys []*big.Int, z []fr.Element) []fr.Element {
	n := len(xs)
	out := make([]fr.Element, n)
	for i := range xs {
		// q = Z / (x − xᵢ) by synthetic division (degree n−1).
		q := make([]fr.Element, n)
		var carry fr.Element
		for j := n; j >= 1; j-- {
			carry.Mul(&carry, &xs[i]).Add(&carry, &z[j])
			q[j-1] = carry
		}
		// denominator q(xᵢ)
		var den, pw fr.Element
		pw.SetOne()
		for j := range q {
			var t fr.Element
			t.Mul(&q[j], &pw)
			den.Add(&den, &t)
			pw.Mul(&pw, &xs[i])
		}
		var y fr.Element
		y.SetBigInt(ys[i])
		den.Inverse(&den)
		y.Mul(&y, &den)
		for j := range q {
			var t fr.Element
			t.Mul(&q[j], &y)
			out[j].Add(&out[j], &t)
		}
	}
	return out
}

func toBig(v []fr.Element) []*big.Int {
	out := make([]*big.Int, len(v))
	for i := range v {
		out[i] = v[i].BigInt(new(big.Int))
	}
	return out
}

// lookup asserts x is one of the table's keys and returns every column's
// value at x.
func (t *lookupTable) lookup(api frontend.API, x frontend.Variable) []frontend.Variable {
	pows := t.powers(api, x)
	out := make([]frontend.Variable, len(t.columns))
	for i := range t.columns {
		out[i] = t.column(api, pows, i)
	}
	return out
}

// powers asserts x is one of the table's keys and returns x⁰…xⁿ⁻¹, from
// which column gives any column's value at x for free.
func (t *lookupTable) powers(api frontend.API, x frontend.Variable) []frontend.Variable {
	n := len(t.zero) - 1
	pows := make([]frontend.Variable, n+1)
	pows[0], pows[1] = 1, x
	for i := 2; i <= n; i++ {
		pows[i] = api.Mul(pows[i-1], x)
	}
	api.AssertIsEqual(evalPoly(api, t.zero, pows), 0)
	return pows[:n]
}

// column is column i's value at the key whose powers are pows (or, given
// sums of powers, the sum of its values).
func (t *lookupTable) column(api frontend.API, pows []frontend.Variable, i int) frontend.Variable {
	return evalPoly(api, t.columns[i], pows)
}

func evalPoly(api frontend.API, coef []*big.Int, pows []frontend.Variable) frontend.Variable {
	acc := frontend.Variable(0)
	for i, c := range coef {
		if c.Sign() != 0 {
			acc = api.Add(acc, api.Mul(c, pows[i]))
		}
	}
	return acc
}
