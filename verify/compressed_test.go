package verify_test

import (
	"encoding/hex"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"github.com/healthagents/healthagents/verify"
	"github.com/healthagents/healthagents/x12"
)

// solidity is a proof's proof_data from its three points.
func solidity(a bn254.G1Affine, b bn254.G2Affine, c bn254.G1Affine) string {
	ra, rb, rc := a.RawBytes(), b.RawBytes(), c.RawBytes()
	return "0x" + hex.EncodeToString(ra[:]) + hex.EncodeToString(rb[:]) + hex.EncodeToString(rc[:])
}

// TestCompressedProof: x12.EncodeProof (math/big, so that package x12 and
// the server link no curve code) writes exactly gnark-crypto's compressed
// encoding of each point, for points whose y is either square root, and
// ParseCompressedProof reads back the words ParseProof reads from
// proof_data; the points at infinity too.
func TestCompressedProof(t *testing.T) {
	t.Parallel()
	_, _, g1, g2 := bn254.Generators()
	flags := map[byte]int{}
	for i := range 64 {
		var k fr.Element
		k.SetUint64(uint64(i)*0x9e3779b97f4a7c15 + 1)
		kb := k.BigInt(new(big.Int))
		var a, c bn254.G1Affine
		var b bn254.G2Affine
		a.ScalarMultiplication(&g1, kb)
		b.ScalarMultiplication(&g2, new(big.Int).Add(kb, big.NewInt(7)))
		c.ScalarMultiplication(&g1, new(big.Int).Add(kb, big.NewInt(11)))
		pd := solidity(a, b, c)
		text, err := x12.EncodeProof(pd)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := x12.DecodeProof(text)
		if err != nil {
			t.Fatal(err)
		}
		ca, cb, cc := a.Bytes(), b.Bytes(), c.Bytes()
		if want := string(ca[:]) + string(cb[:]) + string(cc[:]); string(raw) != want {
			t.Fatalf("point %d: EncodeProof's bytes are not gnark-crypto's compressed encoding", i)
		}
		flags[raw[0]>>6]++
		flags[raw[32]>>6]++
		got, err := verify.ParseCompressedProof(raw)
		if err != nil {
			t.Fatal(err)
		}
		want, err := verify.ParseProof(pd, nil)
		if err != nil {
			t.Fatal(err)
		}
		for w := range want.Words {
			if got.Words[w].Cmp(want.Words[w]) != 0 {
				t.Fatalf("point %d: word %d decompressed to %s, want %s", i, w, got.Words[w], want.Words[w])
			}
		}
		if got.Inputs != nil {
			t.Fatal("a compressed proof carries no public inputs")
		}
	}
	if flags[0b10] == 0 || flags[0b11] == 0 {
		t.Fatalf("the points did not cover both square roots: %v", flags)
	}

	var inf1 bn254.G1Affine
	var inf2 bn254.G2Affine
	text, err := x12.EncodeProof("0x" + hex.EncodeToString(make([]byte, 256)))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := x12.DecodeProof(text)
	ia, ib := inf1.Bytes(), inf2.Bytes()
	if string(raw) != string(ia[:])+string(ib[:])+string(ia[:]) {
		t.Fatal("the points at infinity are not gnark-crypto's encoding")
	}
	if _, err := verify.ParseCompressedProof(raw); err != nil {
		t.Fatal(err)
	}
}

// TestParseCompressedProofRefuses: a compressed proof that is not one —
// an x with no point, an uncompressed flag, a non-canonical x, a B outside
// its subgroup, the wrong length — is refused as ErrProof, naming the point.
func TestParseCompressedProofRefuses(t *testing.T) {
	t.Parallel()
	_, _, g1, g2 := bn254.Generators()
	good := func() []byte {
		a, b := g1.Bytes(), g2.Bytes()
		return append(append(append([]byte{}, a[:]...), b[:]...), a[:]...)
	}
	if _, err := verify.ParseCompressedProof(good()); err != nil {
		t.Fatal(err)
	}
	p := new(big.Int).SetBytes([]byte{0x30, 0x64, 0x4e, 0x72, 0xe1, 0x31, 0xa0, 0x29, 0xb8, 0x50, 0x45, 0xb6, 0x81, 0x81, 0x58, 0x5d,
		0x97, 0x81, 0x6a, 0x91, 0x68, 0x71, 0xca, 0x8d, 0x3c, 0x20, 0x8c, 0x16, 0xd8, 0x7c, 0xfd, 0x47})
	for name, tc := range map[string]struct {
		mut   func(b []byte)
		point string
	}{
		"x with no point": {func(b []byte) { b[31] ^= 0x01 }, "point A"},
		"uncompressed":    {func(b []byte) { b[96] &= 0x3f }, "point C is not compressed"},
		"x not canonical": {func(b []byte) {
			x := p.FillBytes(make([]byte, 32))
			x[0] |= 0x80
			copy(b[:32], x)
		}, "point A"},
		"B altered": {func(b []byte) { b[63] ^= 0x01 }, "point B"},
	} {
		t.Run(name, func(t *testing.T) {
			b := good()
			tc.mut(b)
			_, err := verify.ParseCompressedProof(b)
			if !errors.Is(err, verify.ErrProof) || !strings.Contains(err.Error(), tc.point) {
				t.Fatalf("got %v, want ErrProof naming %s", err, tc.point)
			}
		})
	}
	if _, err := verify.ParseCompressedProof(good()[:127]); !errors.Is(err, verify.ErrProof) {
		t.Fatalf("127 bytes: got %v", err)
	}
}
