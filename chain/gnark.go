package chain

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/groth16"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/consensys/gnark/backend/witness"
)

// ErrCommitments reports a gnark key or proof that uses Pedersen commitments
// (circuits built with gadgets such as std/rangecheck); the generic verifier
// does not check them, so such keys and proofs are refused.
var ErrCommitments = errors.New("chain: Groth16 with Pedersen commitments is not supported")

// ErrCurve reports a gnark object for another curve than BN254.
var ErrCurve = errors.New("chain: only BN254 Groth16 is supported")

// VerifyingKeyFromGnark converts a gnark BN254 Groth16 verifying key.
func VerifyingKeyFromGnark(vk groth16.VerifyingKey) (VerifyingKey, error) {
	k, ok := vk.(*groth16bn254.VerifyingKey)
	if !ok || k == nil {
		return VerifyingKey{}, fmt.Errorf("%w: got %T", ErrCurve, vk)
	}
	if len(k.CommitmentKeys) > 0 || len(k.PublicAndCommitmentCommitted) > 0 {
		return VerifyingKey{}, ErrCommitments
	}
	if len(k.G1.K) == 0 {
		return VerifyingKey{}, errors.New("chain: gnark verifying key has no IC points")
	}
	out := VerifyingKey{
		Alpha1: g1(&k.G1.Alpha),
		Beta2:  g2(&k.G2.Beta),
		Gamma2: g2(&k.G2.Gamma),
		Delta2: g2(&k.G2.Delta),
		IC:     make([][2]*big.Int, len(k.G1.K)),
	}
	for i := range k.G1.K {
		out.IC[i] = g1(&k.G1.K[i])
	}
	return out, nil
}

// ProofFromGnark converts a gnark BN254 Groth16 proof to the verifier's form
// [A.x, A.y, B.x.im, B.x.re, B.y.im, B.y.re, C.x, C.y], the 256 bytes of
// gnark's MarshalSolidity read as eight words.
func ProofFromGnark(p groth16.Proof) ([8]*big.Int, error) {
	var out [8]*big.Int
	pr, ok := p.(*groth16bn254.Proof)
	if !ok || pr == nil {
		return out, fmt.Errorf("%w: got %T", ErrCurve, p)
	}
	if len(pr.Commitments) > 0 {
		return out, ErrCommitments
	}
	a, b, c := g1(&pr.Ar), g2(&pr.Bs), g1(&pr.Krs)
	out = [8]*big.Int{a[0], a[1], b[0], b[1], b[2], b[3], c[0], c[1]}
	return out, nil
}

// InputsFromWitness returns the public inputs of a gnark BN254 public
// witness (witness.Public()), in the order the circuit declares them.
func InputsFromWitness(w witness.Witness) ([]*big.Int, error) {
	if w == nil {
		return nil, errors.New("chain: nil witness")
	}
	vec, ok := w.Vector().(fr.Vector)
	if !ok {
		return nil, fmt.Errorf("%w: witness vector is %T", ErrCurve, w.Vector())
	}
	out := make([]*big.Int, len(vec))
	for i := range vec {
		out[i] = vec[i].BigInt(new(big.Int))
	}
	return out, nil
}

func g1(p *bn254.G1Affine) [2]*big.Int {
	return [2]*big.Int{p.X.BigInt(new(big.Int)), p.Y.BigInt(new(big.Int))}
}

func g2(p *bn254.G2Affine) [4]*big.Int {
	return [4]*big.Int{
		p.X.A1.BigInt(new(big.Int)), p.X.A0.BigInt(new(big.Int)),
		p.Y.A1.BigInt(new(big.Int)), p.Y.A0.BigInt(new(big.Int)),
	}
}
