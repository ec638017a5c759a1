package normproof

import (
	"fmt"
	"math/big"
	"math/bits"

	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/std/permutation/poseidon2"
)

// Shape fixes a circuit: the vector layout and the number of peers.
type Shape struct {
	Weights int  // words whose L2 norm is bounded
	Extra   int  // evaluation words after them (0, or at least 2: correct, total, ...)
	Peers   int  // pairwise seeds (roster size - 1)
	Bits    uint // |x_j| < 2^Bits for every weight word
}

// ExtraBits bounds every evaluation word: 0 <= x < 2^ExtraBits.
const ExtraBits = 32

// Validate checks the shape.
func (s Shape) Validate() error {
	switch {
	case s.Weights < 1 || s.Weights > 1<<16:
		return fmt.Errorf("%w: %d weights", ErrShape, s.Weights)
	case s.Extra < 0 || s.Extra == 1 || s.Extra > 16:
		return fmt.Errorf("%w: %d evaluation words", ErrShape, s.Extra)
	case s.Peers < 1 || s.Peers > 1<<10:
		return fmt.Errorf("%w: %d peers", ErrShape, s.Peers)
	case s.Bits < 1 || s.Bits > 60:
		return fmt.Errorf("%w: %d bits", ErrShape, s.Bits)
	}
	return nil
}

// Dim is the length of the masked vector.
func (s Shape) Dim() int { return s.Weights + s.Extra }

// normBits is the width of Σ x_j^2: Weights words below 2^(2 Bits) each.
func (s Shape) normBits() int { return 2*int(s.Bits) + bits.Len(uint(s.Weights)) + 1 }

// circuit is the statement proved for one masked submission.
type circuit struct {
	Masked     []frontend.Variable `gnark:",public"`
	PairCommit []frontend.Variable `gnark:",public"`
	PairPlus   []frontend.Variable `gnark:",public"` // 1: +PRG, 0: -PRG
	SelfCommit frontend.Variable   `gnark:",public"`
	NormBound  frontend.Variable   `gnark:",public"`
	EvalBound  frontend.Variable   `gnark:",public"`

	X        []frontend.Variable
	PairSeed []frontend.Variable
	SelfSeed frontend.Variable

	shape Shape
}

func newCircuit(s Shape) *circuit {
	return &circuit{
		Masked: make([]frontend.Variable, s.Dim()), PairCommit: make([]frontend.Variable, s.Peers),
		PairPlus: make([]frontend.Variable, s.Peers), X: make([]frontend.Variable, s.Dim()),
		PairSeed: make([]frontend.Variable, s.Peers), shape: s,
	}
}

// inRange asserts 0 <= v < 2^n by a plain bit decomposition.
func inRange(api frontend.API, v frontend.Variable, n int) {
	api.ToBinary(v, n)
}

// Define implements frontend.Circuit.
func (c *circuit) Define(api frontend.API) error {
	perm, err := poseidon2.NewPoseidon2(api)
	if err != nil {
		return err
	}
	api.AssertIsEqual(perm.Compress(c.SelfSeed, 0), c.SelfCommit)
	signs := make([]frontend.Variable, len(c.PairSeed))
	for k, s := range c.PairSeed {
		api.AssertIsEqual(perm.Compress(s, 0), c.PairCommit[k])
		api.AssertIsBoolean(c.PairPlus[k])
		signs[k] = api.Sub(api.Mul(2, c.PairPlus[k]), 1)
	}
	for j, x := range c.X {
		m := api.Add(x, perm.Compress(c.SelfSeed, j+1))
		for k, s := range c.PairSeed {
			m = api.Add(m, api.Mul(signs[k], perm.Compress(s, j+1)))
		}
		api.AssertIsEqual(m, c.Masked[j])
	}
	sh := c.shape
	off := new(big.Int).Lsh(big.NewInt(1), sh.Bits)
	var sum frontend.Variable = 0
	for _, x := range c.X[:sh.Weights] {
		inRange(api, api.Add(x, off), int(sh.Bits)+1) // -2^Bits <= x < 2^Bits
		sum = api.Add(sum, api.Mul(x, x))
	}
	inRange(api, c.NormBound, sh.normBits())
	inRange(api, api.Sub(c.NormBound, sum), sh.normBits())
	if sh.Extra > 0 {
		ev := c.X[sh.Weights:]
		for _, x := range ev {
			inRange(api, x, ExtraBits)
		}
		inRange(api, c.EvalBound, ExtraBits)
		inRange(api, api.Sub(ev[1], ev[0]), ExtraBits)       // correct <= total
		inRange(api, api.Sub(c.EvalBound, ev[1]), ExtraBits) // total <= bound
	}
	return nil
}
