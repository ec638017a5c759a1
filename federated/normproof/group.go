package normproof

import (
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"github.com/healthagents/healthagents/federated/secagg"
)

const labelFieldSeed = "healthagents/normproof/v1/field-seed"

// Field is the BN254 scalar field as a secagg.Group: each element is four
// little-endian uint64 limbs of its canonical value (an encoding >= r is
// invalid), the PRG is the Poseidon2 compression of a field seed derived
// from the 32-byte secagg seed, and a seed's commitment is Commit of that
// field seed, big-endian. Masks made in this group are what the circuit
// proves.
type Field struct{}

var _ secagg.Group = Field{}

// Limbs is the number of uint64 words per element.
const Limbs = 4

// Words implements secagg.Group.
func (Field) Words() int { return Limbs }

func decodeElem(w []uint64) (fr.Element, error) {
	var b [fr.Bytes]byte
	for i := range Limbs {
		binary.BigEndian.PutUint64(b[fr.Bytes-8*(i+1):], w[i])
	}
	var e fr.Element
	if err := e.SetBytesCanonical(b[:]); err != nil {
		return e, fmt.Errorf("%w: element not below the field modulus", secagg.ErrMalformedVector)
	}
	return e, nil
}

func encodeElem(e *fr.Element, w []uint64) {
	b := e.Bytes()
	for i := range Limbs {
		w[i] = binary.BigEndian.Uint64(b[fr.Bytes-8*(i+1):])
	}
}

// Elements decodes a vector.
func Elements(v []uint64) ([]fr.Element, error) {
	if len(v)%Limbs != 0 {
		return nil, fmt.Errorf("%w: %d words", secagg.ErrMalformedVector, len(v))
	}
	out := make([]fr.Element, len(v)/Limbs)
	for i := range out {
		e, err := decodeElem(v[Limbs*i:])
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
		out[i] = e
	}
	return out, nil
}

// Words encodes a vector.
func Words(es []fr.Element) []uint64 {
	out := make([]uint64, Limbs*len(es))
	for i := range es {
		encodeElem(&es[i], out[Limbs*i:])
	}
	return out
}

// Check implements secagg.Group.
func (Field) Check(v []uint64) error {
	_, err := Elements(v)
	return err
}

// Add implements secagg.Group. Both vectors must be valid encodings.
func (Field) Add(dst, src []uint64) {
	for i := 0; i+Limbs <= len(src); i += Limbs {
		a, _ := decodeElem(dst[i:])
		b, _ := decodeElem(src[i:])
		a.Add(&a, &b)
		encodeElem(&a, dst[i:])
	}
}

// FieldSeed derives the field seed of a secagg seed.
func FieldSeed(seed *[secagg.SeedSize]byte) Seed {
	k, err := hkdf.Key(sha256.New, seed[:], nil, labelFieldSeed, 48)
	if err != nil {
		panic(err) // 48 bytes of SHA-256 HKDF never fail
	}
	s, _ := SeedFromBytes(k)
	return s
}

// Expand implements secagg.Group.
func (Field) Expand(seed *[secagg.SeedSize]byte, v []uint64, sign int) error {
	es, err := Elements(v)
	if err != nil {
		return err
	}
	m := Expand(FieldSeed(seed), len(es))
	for i := range es {
		if sign > 0 {
			es[i].Add(&es[i], &m[i])
		} else {
			es[i].Sub(&es[i], &m[i])
		}
	}
	copy(v, Words(es))
	return nil
}

// Encode implements secagg.Group.
func (Field) Encode(x []uint64) []uint64 {
	es := make([]fr.Element, len(x))
	for i, w := range x {
		es[i] = FromInt64(int64(w))
	}
	return Words(es)
}

// Decode implements secagg.Group.
func (Field) Decode(v []uint64) ([]uint64, error) {
	es, err := Elements(v)
	if err != nil {
		return nil, err
	}
	out := make([]uint64, len(es))
	for i, e := range es {
		n, err := ToInt64(e)
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
		out[i] = uint64(n)
	}
	return out, nil
}

// Commit implements secagg.Group: the seeds are bound to their session
// already (pairwise by key derivation, self-mask seeds fresh per round).
func (Field) Commit(_ []byte, seed *[secagg.SeedSize]byte) []byte {
	c := Commit(FieldSeed(seed))
	b := c.Bytes()
	return b[:]
}
