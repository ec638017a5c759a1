package chain

import (
	"bytes"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/crypto"
)

// Kind names a statement kind, e.g. "eligibility". On chain it is the
// bytes32 holding the name's bytes, left-aligned and zero-padded, so a kind
// is at most 32 bytes long and contains no NUL byte.
type Kind string

// bytes32 encodes k for the registry.
func (k Kind) bytes32() ([32]byte, error) {
	var b [32]byte
	if k == "" || len(k) > 32 || bytes.IndexByte([]byte(k), 0) >= 0 {
		return b, fmt.Errorf("chain: invalid statement kind %q: want 1..32 bytes without NUL", string(k))
	}
	copy(b[:], k)
	return b, nil
}

// kindFromBytes32 decodes a kind written by bytes32.
func kindFromBytes32(b [32]byte) Kind {
	return Kind(bytes.TrimRight(b[:], "\x00"))
}

// scalarField is the order r of BN254's scalar field, in which every public
// input of a proof lives.
var scalarField, _ = new(big.Int).SetString("21888242871839275222246405745257275088548364400416034343698204186575808495617", 10)

// CircuitID is the id under which the GovernedRegistry binds kind's
// verifier: uint256(keccak256(utf8(kind))) mod r, r the BN254 scalar field's
// order. It is also the circuit's last public input, so a proof names the
// circuit it was made for. A new circuit version is a new kind ("…-v3"),
// hence a new id; the old id keeps its verifier.
func CircuitID(kind Kind) *big.Int {
	h := crypto.Keccak256([]byte(kind))
	return new(big.Int).Mod(new(big.Int).SetBytes(h), scalarField)
}
