package normproof

import (
	"fmt"
	"math/big"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
)

// Keys are the compiled circuit and Groth16 keys of one Shape. The party
// that runs Setup can forge proofs, so it must be the verifier (the
// coordinator) or a ceremony the verifier trusts; participants only need the
// proving key.
type Keys struct {
	Shape Shape
	CS    constraint.ConstraintSystem
	PK    groth16.ProvingKey
	VK    groth16.VerifyingKey
}

// Constraints is the circuit size.
func (k *Keys) Constraints() int { return k.CS.GetNbConstraints() }

// Compile compiles the circuit of s.
func Compile(s Shape) (constraint.ConstraintSystem, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	cs, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, newCircuit(s))
	if err != nil {
		return nil, fmt.Errorf("normproof: compiling: %w", err)
	}
	return cs, nil
}

// Setup compiles the circuit of s and runs a Groth16 setup for it.
func Setup(s Shape) (*Keys, error) {
	cs2, err := Compile(s)
	if err != nil {
		return nil, err
	}
	pk, vk, err := groth16.Setup(cs2)
	if err != nil {
		return nil, fmt.Errorf("normproof: setup: %w", err)
	}
	return &Keys{Shape: s, CS: cs2, PK: pk, VK: vk}, nil
}

// Statement is what the coordinator knows of one submission.
type Statement struct {
	Masked     []fr.Element // the submitted vector
	PairCommit []fr.Element // commitment of each pairwise seed, as both peers published it
	PairPlus   []bool       // sign of each pairwise mask, from the roster order
	SelfCommit fr.Element
	NormBound  *big.Int // NormBound(clip, fracBits, weights)
	EvalBound  uint32   // the participant's registered cohort size
}

// Secret is what only the participant knows.
type Secret struct {
	X        []int64 // quantized update, then the evaluation words
	PairSeed []Seed  // in the order of Statement.PairCommit
	SelfSeed Seed
}

func (s Shape) assignment(st *Statement, sec *Secret) (*circuit, error) {
	if len(st.Masked) != s.Dim() || len(st.PairCommit) != s.Peers || len(st.PairPlus) != s.Peers || st.NormBound == nil {
		return nil, fmt.Errorf("%w: statement does not fit the shape", ErrShape)
	}
	c := newCircuit(s)
	for j := range st.Masked {
		c.Masked[j] = st.Masked[j]
	}
	for k := range st.PairCommit {
		c.PairCommit[k] = st.PairCommit[k]
		c.PairPlus[k] = 0
		if st.PairPlus[k] {
			c.PairPlus[k] = 1
		}
	}
	c.SelfCommit, c.NormBound, c.EvalBound = st.SelfCommit, st.NormBound, st.EvalBound
	if sec == nil {
		for j := range c.X {
			c.X[j] = 0
		}
		for k := range c.PairSeed {
			c.PairSeed[k] = 0
		}
		c.SelfSeed = 0
		return c, nil
	}
	if len(sec.X) != s.Dim() || len(sec.PairSeed) != s.Peers {
		return nil, fmt.Errorf("%w: secret does not fit the shape", ErrShape)
	}
	for j, x := range sec.X {
		c.X[j] = FromInt64(x)
	}
	for k := range sec.PairSeed {
		c.PairSeed[k] = sec.PairSeed[k]
	}
	c.SelfSeed = sec.SelfSeed
	return c, nil
}

// Prove proves st with sec. An update outside its bounds (too long a norm,
// a word out of range such as a NaN bit pattern, inconsistent evaluation
// counts) or a vector that is not its masking cannot be proved: ErrWitness.
func Prove(k *Keys, st *Statement, sec *Secret) (groth16.Proof, error) {
	a, err := k.Shape.assignment(st, sec)
	if err != nil {
		return nil, err
	}
	w, err := frontend.NewWitness(a, ecc.BN254.ScalarField())
	if err != nil {
		return nil, fmt.Errorf("normproof: witness: %w", err)
	}
	p, err := groth16.Prove(k.CS, k.PK, w)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrWitness, err)
	}
	return p, nil
}

// Verify checks a proof against the public statement.
func Verify(vk groth16.VerifyingKey, s Shape, st *Statement, p groth16.Proof) error {
	if p == nil {
		return fmt.Errorf("%w: no proof", ErrProof)
	}
	a, err := s.assignment(st, nil)
	if err != nil {
		return err
	}
	w, err := frontend.NewWitness(a, ecc.BN254.ScalarField(), frontend.PublicOnly())
	if err != nil {
		return fmt.Errorf("normproof: public witness: %w", err)
	}
	if err := groth16.Verify(p, vk, w); err != nil {
		return fmt.Errorf("%w: %w", ErrProof, err)
	}
	return nil
}
