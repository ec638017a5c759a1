package zkp

import (
	"encoding/hex"
	"fmt"
	"math/big"
	"strings"

	"github.com/consensys/gnark-crypto/ecc/bn254/fp"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
)

// ProofSize is the length of a proof's Solidity form in bytes.
const ProofSize = 8 * fp.Bytes

// Proof is a Groth16 proof of one statement with its public inputs.
type Proof struct {
	Circuit string // CircuitEligibilityV3 or CircuitPrescriptionV4
	Groth16 *groth16bn254.Proof
	// Public is the public witness: [issuerKeyHash, digest, circuitId].
	Public []fr.Element
}

// SolidityProof returns the proof in the 256-byte form EVM verifiers take:
// A.X | A.Y | B.X.A1 | B.X.A0 | B.Y.A1 | B.Y.A0 | C.X | C.Y, each 32 bytes
// big-endian (G2 coordinates imaginary part first). It is also gnark's
// uncompressed point encoding of A, B and C.
func (p *Proof) SolidityProof() []byte { return p.Groth16.MarshalSolidity() }

// ProofData is the API's proof_data: "0x" and the lower-case hex of
// SolidityProof (512 hex digits).
func (p *Proof) ProofData() string { return "0x" + hex.EncodeToString(p.SolidityProof()) }

// PublicInputs is the API's public_inputs: each public input as "0x" and 64
// lower-case hex digits (32 bytes big-endian), in the circuit's order.
func (p *Proof) PublicInputs() []string {
	out := make([]string, len(p.Public))
	for i := range p.Public {
		b := p.Public[i].Bytes()
		out[i] = "0x" + hex.EncodeToString(b[:])
	}
	return out
}

// PublicBig returns the public inputs as integers (for EVM calls).
func (p *Proof) PublicBig() []*big.Int {
	out := make([]*big.Int, len(p.Public))
	for i := range p.Public {
		out[i] = p.Public[i].BigInt(new(big.Int))
	}
	return out
}

// ParseProof decodes a proof from its API form (ProofData and
// PublicInputs). It rejects malformed hex, points not on the curve or not in
// the prime-order subgroup, and public inputs that are not canonical field
// elements (>= r). It does not verify the proof: use Verifier.Verify.
func ParseProof(circuit, proofData string, publicInputs []string) (*Proof, error) {
	if _, err := newCircuit(circuit); err != nil {
		return nil, err
	}
	raw, err := decodeHex(proofData, ProofSize)
	if err != nil {
		return nil, fmt.Errorf("%w: proof_data: %w", ErrInvalidProof, err)
	}
	// Only the uncompressed form: the top two bits of each point's first
	// byte are gnark's encoding flags and must be 0, so every proof has
	// exactly one accepted encoding.
	for _, off := range []int{0, 64, 192} {
		if raw[off]&0xC0 != 0 {
			return nil, fmt.Errorf("%w: proof_data is not in the uncompressed Solidity form", ErrInvalidProof)
		}
	}
	g := new(groth16bn254.Proof)
	if _, err := g.Ar.SetBytes(raw[0:64]); err != nil {
		return nil, fmt.Errorf("%w: proof point A: %w", ErrInvalidProof, err)
	}
	if _, err := g.Bs.SetBytes(raw[64:192]); err != nil {
		return nil, fmt.Errorf("%w: proof point B: %w", ErrInvalidProof, err)
	}
	if _, err := g.Krs.SetBytes(raw[192:256]); err != nil {
		return nil, fmt.Errorf("%w: proof point C: %w", ErrInvalidProof, err)
	}
	if !g.Ar.IsInSubGroup() || !g.Bs.IsInSubGroup() || !g.Krs.IsInSubGroup() {
		return nil, fmt.Errorf("%w: proof point not in the subgroup", ErrInvalidProof)
	}
	p := &Proof{Circuit: circuit, Groth16: g, Public: make([]fr.Element, len(publicInputs))}
	for i, s := range publicInputs {
		b, err := decodeHex(s, fr.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: public input %d: %w", ErrInvalidProof, i, err)
		}
		if err := p.Public[i].SetBytesCanonical(b); err != nil {
			return nil, fmt.Errorf("%w: public input %d is not a field element", ErrInvalidProof, i)
		}
	}
	return p, nil
}

func decodeHex(s string, size int) ([]byte, error) {
	s = strings.TrimPrefix(s, "0x")
	if len(s) != 2*size {
		return nil, fmt.Errorf("want %d hex digits, got %d", 2*size, len(s))
	}
	return hex.DecodeString(s)
}
