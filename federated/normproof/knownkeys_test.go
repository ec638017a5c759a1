package normproof

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// knownMap is a KnownKeys store in memory that counts its hits.
type knownMap struct {
	entries map[string][]byte
	hits    int
}

func (m *knownMap) Load(key string) ([]byte, bool, error) {
	b, ok := m.entries[key]
	if ok {
		m.hits++
	}
	return b, ok, nil
}

// Known keys are used only for the very bytes they were made from: a
// participant that fetches them, and a coordinator that reads them from
// its directory, get the same keys as DecodeKeys gives, and prove and
// verify with them; other bytes, or a damaged or foreign entry, are
// decoded with every check (and still refused when they are no keys).
func TestKnownKeys(t *testing.T) {
	t.Parallel()
	k := testKeys(t)
	pk, vk, err := k.EncodeKeys()
	require.NoError(t, err)
	name, data, err := KnownKeysEntry(k)
	require.NoError(t, err)
	assert.Equal(t, KnownKeysName(testShape, pk, vk), name, "named by the encoded keys")

	known := &knownMap{entries: map[string][]byte{name: data}}
	fetched := NewServiceFetching(func(Shape) ([]byte, []byte, error) { return pk, vk, nil }, WithKnownKeys(known))
	kf, err := fetched.Keys(testShape)
	require.NoError(t, err)
	assert.Equal(t, 1, known.hits)
	_, vk2, err := kf.EncodeKeys()
	require.NoError(t, err)
	assert.Equal(t, vk, vk2)
	ps := newRound(t, [3][]int64{honestUpdate(1, 8, 10), honestUpdate(0.5, 3, 10), honestUpdate(0.2, 1, 10)}, 10)
	proof, err := Prove(kf, &ps[0].st, &ps[0].sec)
	require.NoError(t, err)
	require.NoError(t, Verify(k.VK, testShape, &ps[0].st, proof), "the known keys prove what the set-up's keys verify")

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, testShape.Name()+".pk"), pk, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, testShape.Name()+".vk"), vk, 0o600))
	coord, err := NewServiceDir(dir, WithKnownKeys(known))
	require.NoError(t, err)
	kc, err := coord.Keys(testShape)
	require.NoError(t, err)
	assert.Equal(t, 2, known.hits, "read from the directory, found known")
	require.NoError(t, Verify(kc.VK, testShape, &ps[0].st, proof))

	// An entry is used for its own bytes only.
	assert.Nil(t, fromKnown(known, testShape, pk, vk[:len(vk)-1]), "other bytes: another name")
	other := Shape{Weights: testShape.Weights, Extra: testShape.Extra, Peers: testShape.Peers + 1, Bits: testShape.Bits}
	assert.Nil(t, fromKnown(known, other, pk, vk), "another shape: another name")
	assert.NotNil(t, fromKnown(known, testShape, pk, vk))
	// Another key's entry under this name (a store that mixed them up).
	otherVK := *k.VK.(*groth16bn254.VerifyingKey)
	otherVK.G1.Alpha.Neg(&otherVK.G1.Alpha)
	_, otherData, err := KnownKeysEntry(&Keys{Shape: testShape, CS: k.CS, PK: k.PK, VK: &otherVK})
	require.NoError(t, err)
	for what, bad := range map[string][]byte{
		"empty":                   {},
		"truncated":               data[:len(data)/2],
		"a flipped proving key":   flip(data, uint64(len(data))/3),
		"a flipped verifying key": flip(data, uint64(len(data))-40),
		"a flipped digest":        flip(data, 3),
		"another key's":           otherData,
	} {
		damaged := &knownMap{entries: map[string][]byte{name: bad}}
		assert.Nil(t, fromKnown(damaged, testShape, pk, vk), what)
	}
	// The Service falls back on decoding the bytes with every check when
	// fromKnown refuses the entry (whatever the damage: the refusals are
	// checked above; one full decode, ~0.6 CPU-s, stands for them all):
	// here the worst mix-up, a valid entry of another key.
	damaged := &knownMap{entries: map[string][]byte{name: otherData}}
	kd, err := NewServiceFetching(func(Shape) ([]byte, []byte, error) { return pk, vk, nil }, WithKnownKeys(damaged)).Keys(testShape)
	require.NoError(t, err)
	assert.Equal(t, 1, damaged.hits, "the entry was looked at")
	_, vkd, err := kd.EncodeKeys()
	require.NoError(t, err)
	assert.Equal(t, vk, vkd, "the fetched keys, not the entry's")
	// Bytes that are no keys are refused, known entry or not.
	_, err = NewServiceFetching(func(Shape) ([]byte, []byte, error) { return pk[:len(pk)/2], vk, nil }, WithKnownKeys(known)).Keys(testShape)
	assert.Error(t, err)
}

func flip(b []byte, i uint64) []byte {
	out := bytes.Clone(b)
	out[i] ^= 0x40
	return out
}
