package normproof

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
)

// KnownKeys is where a process finds, decoded, keys that a test harness
// set up itself (internal/testcache.Cache is one): Load returns the bytes
// stored under key, found false when there are none. No setting or flag
// of a deployment gives one; a Service without it decodes every key it
// reads or fetches with every check (DecodeKeys).
type KnownKeys interface {
	Load(key string) (data []byte, found bool, err error)
}

// Option configures a Service.
type Option func(*Service)

// WithKnownKeys makes the Service look keys it reads (NewServiceDir) or
// fetches (NewServiceFetching) up in known before decoding them: an entry
// is named by the shape and the SHA-256 of the very bytes read or fetched
// (KnownKeysEntry), and holds the same keys in gnark's raw encoding, which
// decodes without the per-point work (decompression, subgroup checks)
// that is most of DecodeKeys. An entry is used only when its keys encode
// back to exactly the bytes read or fetched; anything else (no entry, a
// damaged one, another key's) and the keys are decoded with every check.
// The bytes are still read or fetched as without it.
func WithKnownKeys(known KnownKeys) Option {
	return func(v *Service) { v.known = known }
}

// knownFormat versions KnownKeysEntry's names and bytes.
const knownFormat = "healthagents/normproof-known-keys/v1"

// KnownKeysName names the KnownKeys entry of s's keys encoded as pk and vk
// (EncodeKeys).
func KnownKeysName(s Shape, pk, vk []byte) string {
	h := sha256.New()
	for _, p := range [][]byte{[]byte(knownFormat), []byte(s.Name()), digest(pk), digest(vk)} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func digest(b []byte) []byte {
	d := sha256.Sum256(b)
	return d[:]
}

// KnownKeysEntry is the KnownKeys entry of k, keys a harness set up itself:
// its name and its bytes (the SHA-256 of what follows, the raw proving
// key's length, the raw proving key, the raw verifying key).
func KnownKeysEntry(k *Keys) (name string, data []byte, err error) {
	pk, vk, err := k.EncodeKeys()
	if err != nil {
		return "", nil, err
	}
	var raw bytes.Buffer
	raw.Write(make([]byte, sha256.Size+8))
	if _, err := k.PK.WriteRawTo(&raw); err != nil {
		return "", nil, fmt.Errorf("normproof: encoding the proving key: %w", err)
	}
	b := raw.Bytes()
	binary.BigEndian.PutUint64(b[sha256.Size:], uint64(len(b)-sha256.Size-8))
	if _, err := k.VK.WriteRawTo(&raw); err != nil {
		return "", nil, fmt.Errorf("normproof: encoding the verifying key: %w", err)
	}
	b = raw.Bytes()
	sum := sha256.Sum256(b[sha256.Size:])
	copy(b, sum[:])
	return KnownKeysName(k.Shape, pk, vk), b, nil
}

// decode is DecodeKeys, or the known keys of exactly pk and vk.
func (v *Service) decode(s Shape, pk, vk []byte) (*Keys, error) {
	if v.known != nil {
		if k := fromKnown(v.known, s, pk, vk); k != nil {
			return k, nil
		}
	}
	return DecodeKeys(s, pk, vk)
}

// fromKnown returns the known keys of s encoded as pk and vk, or nil.
func fromKnown(known KnownKeys, s Shape, pk, vk []byte) (k *Keys) {
	if s.Validate() != nil {
		return nil
	}
	data, found, err := known.Load(KnownKeysName(s, pk, vk))
	if err != nil || !found || len(data) < sha256.Size+8 {
		return nil
	}
	if sum := sha256.Sum256(data[sha256.Size:]); !bytes.Equal(sum[:], data[:sha256.Size]) {
		return nil // damaged
	}
	data = data[sha256.Size:]
	n := binary.BigEndian.Uint64(data[:8])
	if n > uint64(len(data)-8) {
		return nil
	}
	rawPK, rawVK := data[8:8+n], data[8+n:]
	defer func() {
		if recover() != nil { // bytes that are no raw key: decode with every check
			k = nil
		}
	}()
	p, q := groth16.NewProvingKey(ecc.BN254), groth16.NewVerifyingKey(ecc.BN254)
	if m, err := p.UnsafeReadFrom(bytes.NewReader(rawPK)); err != nil || m != int64(len(rawPK)) {
		return nil
	}
	if m, err := q.UnsafeReadFrom(bytes.NewReader(rawVK)); err != nil || m != int64(len(rawVK)) {
		return nil
	}
	cs, err := Compile(s)
	if err != nil {
		return nil
	}
	k = &Keys{Shape: s, CS: cs, PK: p, VK: q}
	// The entry must hold the very keys read or fetched.
	epk, evk, err := k.EncodeKeys()
	if err != nil || !bytes.Equal(epk, pk) || !bytes.Equal(evk, vk) {
		return nil
	}
	return k
}
