package secagg

import (
	"fmt"
)

// Group is the arithmetic that inputs and masks live in. A vector of Dim
// elements is encoded as Dim*Words() uint64 words; masks are added with
// Expand and cancel in the sum. The zero encoding is the zero vector.
//
// Ring64 (Z_2^64 with a ChaCha20 PRG) is the default. A group whose masking
// can be proved in zero knowledge (package federated/normproof: the BN254
// scalar field with a Poseidon2 PRG) lets a coordinator check each masked
// input before it joins the sum.
type Group interface {
	// Words is the number of uint64 words per element.
	Words() int
	// Check reports whether v (any length multiple of Words) is a valid
	// encoding.
	Check(v []uint64) error
	// Add sets dst to dst + src, element-wise.
	Add(dst, src []uint64)
	// Expand adds (sign > 0) or subtracts (sign < 0) the PRG stream of seed
	// into v. Every seed is used for one vector only.
	Expand(seed *[SeedSize]byte, v []uint64, sign int) error
	// Encode maps integers (int64 in two's complement, one word each) to
	// the group; Decode reads a sum back, an error when an element is out of
	// the int64 range.
	Encode(x []uint64) []uint64
	Decode(v []uint64) ([]uint64, error)
	// Commit is the public commitment to seed within session (the self-mask
	// seed's is checked when the seed is reconstructed).
	Commit(session []byte, seed *[SeedSize]byte) []byte
}

// Ring64 is Z_2^64: every addition wraps, which is Go's uint64 arithmetic;
// the PRG is ChaCha20 and commitments are SHA-256.
type Ring64 struct{}

var _ Group = Ring64{}

// Words implements Group.
func (Ring64) Words() int { return 1 }

// Check implements Group: every word is a valid element.
func (Ring64) Check([]uint64) error { return nil }

// Add implements Group.
func (Ring64) Add(dst, src []uint64) {
	for i, w := range src {
		dst[i] += w
	}
}

// Encode implements Group: the identity.
func (Ring64) Encode(x []uint64) []uint64 { return append([]uint64(nil), x...) }

// Decode implements Group: the identity.
func (Ring64) Decode(v []uint64) ([]uint64, error) { return append([]uint64(nil), v...), nil }

// Expand implements Group.
func (Ring64) Expand(seed *[SeedSize]byte, v []uint64, sign int) error {
	return expandInto(seed, v, sign)
}

// Commit implements Group.
func (Ring64) Commit(session []byte, seed *[SeedSize]byte) []byte {
	return commitment(session, seed[:])
}

// group returns the session's group, Ring64 by default.
func (p Params) group() Group {
	if p.Group == nil {
		return Ring64{}
	}
	return p.Group
}

// Words is the encoded length of a vector of the session.
func (p Params) Words() int { return p.Dim * p.group().Words() }

// CheckVector reports whether v is a vector of the session in a valid
// encoding.
func (p Params) CheckVector(v []uint64) error {
	if len(v) != p.Words() {
		return fmt.Errorf("%w: %d words, the session's vectors have %d", ErrMalformedVector, len(v), p.Words())
	}
	return p.group().Check(v)
}

// PairSeed is the pairwise seed a participant shares with Peer, and whether
// its mask enters the participant's input added (Plus) or subtracted.
type PairSeed struct {
	Peer string
	Seed [SeedSize]byte
	Plus bool
}

// Seeds returns this participant's self-mask seed and its pairwise seeds
// with every other member of the roster, in roster order. They are the
// participant's own secrets: it needs them to prove what its masked input
// hides, and must never send them. Valid once ShareKeys has run.
func (c *Client) Seeds() ([SeedSize]byte, []PairSeed, error) {
	if c.state == stateKeys {
		return [SeedSize]byte{}, nil, fmt.Errorf("%w: Seeds before ShareKeys", ErrProtocol)
	}
	out := make([]PairSeed, 0, len(c.order)-1)
	for _, v := range c.order {
		if v == c.id {
			continue
		}
		seed, err := pairwiseSeed(c.params.Session, c.mask, c.id, v, c.roster[v].Mask)
		if err != nil {
			return [SeedSize]byte{}, nil, err
		}
		out = append(out, PairSeed{Peer: v, Seed: *seed, Plus: maskSign(c.id, v) > 0})
	}
	return c.selfKey, out, nil
}
