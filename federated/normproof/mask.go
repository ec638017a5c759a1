package normproof

import (
	"errors"
	"fmt"
	"math"
	"math/big"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr/poseidon2"
)

// Errors of the package.
var (
	ErrShape   = errors.New("normproof: invalid shape")
	ErrWitness = errors.New("normproof: update cannot be proved within its bounds")
	ErrProof   = errors.New("normproof: proof does not verify")
)

// Seed is a PRG seed: a field element.
type Seed = fr.Element

// SeedFromBytes maps at least 48 uniform bytes (e.g. HKDF output) to a
// nearly uniform field element.
func SeedFromBytes(b []byte) (Seed, error) {
	var s Seed
	if len(b) < 48 {
		return s, fmt.Errorf("%w: seed material of %d bytes, need 48", ErrShape, len(b))
	}
	s.SetBigInt(new(big.Int).SetBytes(b))
	return s, nil
}

// compress is the Poseidon2 width-2 compression, as in the circuit.
func compress(perm *poseidon2.Permutation, left, right fr.Element) fr.Element {
	x := [2]fr.Element{left, right}
	if err := perm.Permutation(x[:]); err != nil {
		panic(err) // width 2 is always supported
	}
	var out fr.Element
	out.Add(&x[1], &right)
	return out
}

// Commit returns the public commitment of a seed: compress(seed, 0).
func Commit(s Seed) fr.Element {
	return compress(poseidon2.NewDefaultPermutation(), s, fr.NewElement(0))
}

// Expand returns PRG(s, 0..n-1).
func Expand(s Seed, n int) []fr.Element {
	perm := poseidon2.NewDefaultPermutation()
	out := make([]fr.Element, n)
	for j := range out {
		out[j] = compress(perm, s, fr.NewElement(uint64(j+1)))
	}
	return out
}

// Pair is one pairwise seed with the sign its mask enters with.
type Pair struct {
	Seed Seed
	Plus bool // true: +PRG, false: -PRG
}

// FromInt64 embeds a signed integer in Fr.
func FromInt64(v int64) fr.Element {
	var e fr.Element
	if v >= 0 {
		e.SetUint64(uint64(v))
	} else {
		e.SetUint64(uint64(-v))
		e.Neg(&e)
	}
	return e
}

// ToInt64 reads an element as a signed integer in (-2^63, 2^63).
func ToInt64(e fr.Element) (int64, error) {
	if e.IsUint64() && e.Uint64() <= math.MaxInt64 {
		return int64(e.Uint64()), nil
	}
	var n fr.Element
	n.Neg(&e)
	if n.IsUint64() && n.Uint64() <= math.MaxInt64 {
		return -int64(n.Uint64()), nil
	}
	return 0, fmt.Errorf("%w: element out of the int64 range", ErrShape)
}

// Mask returns x masked by the self seed and the pairwise seeds.
func Mask(x []int64, self Seed, pairs []Pair) []fr.Element {
	y := Expand(self, len(x))
	for j := range y {
		v := FromInt64(x[j])
		y[j].Add(&y[j], &v)
	}
	for _, p := range pairs {
		m := Expand(p.Seed, len(x))
		for j := range y {
			if p.Plus {
				y[j].Add(&y[j], &m[j])
			} else {
				y[j].Sub(&y[j], &m[j])
			}
		}
	}
	return y
}

// NormBound is the largest Σ x_j^2 an honest participant can reach with an
// update of L2 norm at most clip, quantized with fracBits fractional bits by
// stochastic rounding over dim words (each word moves by less than 1).
func NormBound(clip float64, fracBits uint, dim int) (*big.Int, error) {
	r := clip*math.Ldexp(1, int(fracBits)) + math.Sqrt(float64(dim))
	if !(clip > 0) || math.IsInf(r, 0) || r >= math.Ldexp(1, 60) {
		return nil, fmt.Errorf("%w: clip %g with %d fractional bits", ErrShape, clip, fracBits)
	}
	b, _ := new(big.Float).SetFloat64(math.Ceil(r)).Int(nil)
	return b.Mul(b, b), nil
}
