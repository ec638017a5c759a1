package x12

// A batched decision's proof inside a 271. A decision anchored in a batch
// (CHAIN_ANCHOR=batch) was recorded by a recordBatch transaction that holds
// a Merkle root, not the proof, so whoever holds only the 271 needs the
// proof from the 271 itself: one MSG*DECISION PROOF DATA after the
// statement's segments carries it, each of its three points compressed
// (docs/x12.md, "The decision's statement and proof"). Its public inputs
// are not carried: they are the statement's [issuer_key_hash, digest,
// circuit_id].

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/big"
	"strings"
)

const (
	proofDataMessage = "DECISION PROOF DATA "
	// CompressedProofSize is a compressed proof's length in bytes: A and
	// C (BN254 G1 points) 32 bytes each, B (a G2 point) 64.
	CompressedProofSize = 128
	// proofText is the length of EncodeProof's text: 128 bytes in unpadded
	// base64url.
	proofText = (CompressedProofSize*8 + 5) / 6
	// maxLoopMessages is the most MSG segments one 2110 loop holds
	// (005010X279A1: MSG repeats 10 times in 2110C and 2110D).
	maxLoopMessages = 10
)

// fieldP is BN254's base field modulus p; halfP is (p-1)/2.
var fieldP, halfP = func() (*big.Int, *big.Int) {
	p, _ := new(big.Int).SetString("21888242871839275222246405745257275088696311157297823662689037894645226208583", 10)
	return p, new(big.Int).Rsh(p, 1)
}()

// EncodeProof is the text the 271 carries for a decision's proof_data ("0x"
// and 512 hex digits: the Solidity verifier's eight words A.x A.y B.x.im
// B.x.re B.y.im B.y.re C.x C.y): A, B and C each in gnark-crypto's
// compressed point encoding (x alone, big-endian, B's imaginary part first;
// the top two bits of its first byte 10 when y is the smaller of its two
// square roots, 11 the larger — for B by y's imaginary part, or its real
// part when that is 0 — and 01 with zeros for the point at infinity), the
// 128 bytes in unpadded base64url: 171 characters. It does not check that
// the points are on the curve: the reader decompresses them, which does
// (verify.ParseCompressedProof), and the chain's verifier checks the proof.
func EncodeProof(proofData string) (string, error) {
	digits, ok := strings.CutPrefix(proofData, "0x")
	raw, err := hex.DecodeString(digits)
	if !ok || err != nil || len(raw) != 256 {
		return "", fmt.Errorf("%w: proof_data must be 0x and 512 hex digits", ErrInvalid)
	}
	w := make([]*big.Int, 8)
	for i := range w {
		w[i] = new(big.Int).SetBytes(raw[32*i : 32*(i+1)])
		if w[i].Cmp(fieldP) >= 0 {
			return "", fmt.Errorf("%w: proof_data's word %d is not a coordinate (not below the field modulus)", ErrInvalid, i)
		}
	}
	out := make([]byte, 0, CompressedProofSize)
	out = compressed(out, []*big.Int{w[0]}, w[1], w[1])       // A: x, y
	out = compressed(out, []*big.Int{w[2], w[3]}, w[4], w[5]) // B: x (im, re), y (im, re)
	out = compressed(out, []*big.Int{w[6]}, w[7], w[7])       // C: x, y
	return base64.RawURLEncoding.EncodeToString(out), nil
}

// compressed appends a point's compressed encoding: x's words (32 bytes
// each) with the flag in the first byte, chosen by yHigh (y's imaginary
// part, or y of a G1 point) unless it is 0, then by yLow.
func compressed(out []byte, x []*big.Int, yHigh, yLow *big.Int) []byte {
	start := len(out)
	zero := yHigh.Sign() == 0 && yLow.Sign() == 0
	for _, v := range x {
		out = append(out, v.FillBytes(make([]byte, 32))...)
		zero = zero && v.Sign() == 0
	}
	y := yHigh
	if y.Sign() == 0 {
		y = yLow
	}
	switch {
	case zero: // the point at infinity: x and y zero
		out[start] = 0b01 << 6
	case y.Cmp(halfP) > 0: // y the larger root: y > (p-1)/2
		out[start] |= 0b11 << 6
	default:
		out[start] |= 0b10 << 6
	}
	return out
}

// proofDataMessage writes the proof's MSG.
func (w *writer) proofDataMessage(text string) {
	if text != "" {
		w.seg("MSG", proofDataMessage+text)
	}
}

// DecodeProof reads a MSG*DECISION PROOF DATA's text (Decision.Proof):
// the CompressedProofSize bytes of EncodeProof, in canonical unpadded
// base64url (171 characters; unused bits of the last one zero, so a proof
// has one text). It does not decompress the points: the reader does
// (verify.ParseCompressedProof).
func DecodeProof(text string) ([]byte, error) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(text)
	if len(text) != proofText || err != nil || len(b) != CompressedProofSize {
		return nil, fmt.Errorf("%w: the proof is not %d characters of base64url holding a %d-byte compressed proof", ErrInvalid, proofText, CompressedProofSize)
	}
	return b, nil
}
