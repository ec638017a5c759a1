package ipfs_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"testing"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/ipfs"
)

// kubo returns a client of the real Kubo node at HEALTHAGENTS_TEST_IPFS
// (its RPC address, e.g. http://127.0.0.1:5001), or skips. Start one with
//
//	IPFS_PATH=/tmp/kubo-test ipfs init --profile test
//	IPFS_PATH=/tmp/kubo-test ipfs daemon --offline
func kubo(t *testing.T) *ipfs.Client {
	t.Helper()
	endpoint := os.Getenv("HEALTHAGENTS_TEST_IPFS")
	if endpoint == "" {
		t.Skip("HEALTHAGENTS_TEST_IPFS is not set (a Kubo RPC address)")
	}
	c, err := ipfs.New(endpoint)
	require.NoError(t, err)
	v, err := c.Version(t.Context())
	require.NoError(t, err, "HEALTHAGENTS_TEST_IPFS is set but the node does not answer")
	t.Logf("kubo %s", v)
	return c
}

// TestKuboPutMatchesCipher: for every size class of the envelope, the CID
// the service computes (cipher.CIDFor, what Seal puts in ipfs_cid) is the
// CID a real node computes under AddOptionsFor, and Put pins it and reads
// the same bytes back.
func TestKuboPutMatchesCipher(t *testing.T) {
	node := kubo(t)
	for _, size := range []int{0, 1, 12, ipfs.ChunkSize - 1, ipfs.ChunkSize, ipfs.ChunkSize + 1, 1 << 20, 1<<20 + 7} {
		data := randomBytes(t, size)
		want := cidOf(t, data)
		require.NoError(t, node.Put(t.Context(), data, want), "size %d", size)
		back, err := node.Cat(t.Context(), want, size)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(data, back), "size %d", size)
		require.NoError(t, node.Unpin(t.Context(), want), "size %d", size)
		assert.ErrorIs(t, node.Unpin(t.Context(), want), ipfs.ErrNotPinned)
	}
}

// TestKuboLayouts: CIDs made by other `ipfs add` flags (CIDv0, dag-pb
// leaves, blake3) are accepted by cipher.Keyring.Open when it can recompute
// them and refused when it cannot (a multi-block blake3 tree), and
// reproduced and pinned by Put either way.
func TestKuboLayouts(t *testing.T) {
	node := kubo(t)
	ring, err := cipher.ParseKeyring(mustKey(t))
	require.NoError(t, err)
	for _, plainSize := range []int{40, 300 << 10} {
		plain := bytes.Repeat([]byte("z"), plainSize)
		env, err := cipher.Seal("PT-1", plain, ring)
		require.NoError(t, err)
		data := []byte(env.EncryptedData)
		for _, o := range []ipfs.AddOptions{
			{CIDVersion: 0, Hash: "sha2-256", Chunker: "size-262144"},
			{CIDVersion: 1, Hash: "sha2-256", Chunker: "size-262144"},
			{CIDVersion: 1, Hash: "sha2-256", RawLeaves: true, Chunker: "size-262144"},
			{CIDVersion: 1, Hash: "blake3", RawLeaves: true, Chunker: "size-262144"},
		} {
			o.OnlyHash = true
			c, err := node.Add(t.Context(), data, o)
			require.NoError(t, err, "%+v", o)
			env.IPFSCID = c.String()
			_, err = ring.Open(t.Context(), env)
			if o.Hash == "blake3" && len(data) > ipfs.ChunkSize {
				// A dag-pb root over blake3 blocks: cipher recomputes dag-pb
				// trees under sha2-256 only, and a CID it cannot check against
				// the bytes is refused (a CID must address the ciphertext).
				require.ErrorIs(t, err, cipher.ErrCIDUnchecked, "%s for %+v, %d bytes", c, o, len(data))
			} else {
				require.NoError(t, err, "cipher refuses kubo's %s for %+v, %d bytes", c, o, len(data))
			}
			require.NoError(t, node.Put(t.Context(), data, c), "%+v", o)
			require.NoError(t, node.Unpin(t.Context(), c))
		}
	}
	// blake3 is not recomputed by cipher, but Put compares it.
	data := []byte("blake3 bytes")
	mh, err := multihash.Sum(data, multihash.BLAKE3, 32)
	require.NoError(t, err)
	good := cid.NewCidV1(cid.Raw, mh)
	require.NoError(t, node.Put(t.Context(), data, good))
	require.NoError(t, node.Unpin(t.Context(), good))
	mh, err = multihash.Sum([]byte("other bytes"), multihash.BLAKE3, 32)
	require.NoError(t, err)
	assert.ErrorIs(t, node.Put(t.Context(), data, cid.NewCidV1(cid.Raw, mh)), ipfs.ErrCIDMismatch)
}

func TestKuboErrors(t *testing.T) {
	node := kubo(t)
	data := randomBytes(t, 100)
	err := node.Put(t.Context(), data, cidOf(t, randomBytes(t, 100)))
	require.ErrorIs(t, err, ipfs.ErrCIDMismatch)

	// Nothing was stored by the refused Put: the offline node cannot find it.
	missing := cidOf(t, randomBytes(t, 64))
	_, err = node.Cat(t.Context(), missing, 64)
	assert.ErrorIs(t, err, ipfs.ErrAPI)
	assert.ErrorIs(t, node.Unpin(t.Context(), missing), ipfs.ErrNotPinned)
}

func mustKey(t *testing.T) string {
	t.Helper()
	k, err := cipher.GenerateKey()
	require.NoError(t, err)
	return k
}

// BenchmarkKuboPut: one registration's node work (hash-only add, pinned
// add, read back) against the real node at HEALTHAGENTS_TEST_IPFS.
func BenchmarkKuboPut(b *testing.B) {
	endpoint := os.Getenv("HEALTHAGENTS_TEST_IPFS")
	if endpoint == "" {
		b.Skip("HEALTHAGENTS_TEST_IPFS is not set (a Kubo RPC address)")
	}
	node, err := ipfs.New(endpoint)
	require.NoError(b, err)
	for _, size := range []int{2 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			data := make([]byte, size)
			b.SetBytes(int64(size))
			for i := 0; b.Loop(); i++ {
				binary.BigEndian.PutUint64(data, uint64(i)) //nolint:gosec // a counter
				want, err := cipher.CIDFor(data)
				require.NoError(b, err)
				require.NoError(b, node.Put(b.Context(), data, want))
				require.NoError(b, node.Unpin(b.Context(), want))
			}
		})
	}
}
