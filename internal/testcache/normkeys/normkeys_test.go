package normkeys_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/federated/normproof"
	"github.com/healthagents/healthagents/internal/testcache"
	"github.com/healthagents/healthagents/internal/testcache/normkeys"
)

// tiny and other are the smallest shapes (a set-up of each takes
// milliseconds), with different public inputs.
var (
	tiny  = normproof.Shape{Weights: 1, Extra: 0, Peers: 1, Bits: 1}
	other = normproof.Shape{Weights: 2, Extra: 0, Peers: 1, Bits: 1}
)

func vkBytes(t *testing.T, k *normproof.Keys) []byte {
	t.Helper()
	_, vk, err := k.EncodeKeys()
	require.NoError(t, err)
	return vk
}

// usedKnown counts the entries a normproof.KnownKeys store found.
type usedKnown struct {
	*testcache.Cache
	found int
}

func (u *usedKnown) Load(key string) ([]byte, bool, error) {
	b, found, err := u.Cache.Load(key)
	if found && err == nil {
		u.found++
	}
	return b, found, err
}

// TestKeysCached: a shape's keys are set up once per cache and read back
// after; an entry that does not hold keys of the shape's circuit (damaged,
// or another shape's) is set up again and replaced, never used.
func TestKeysCached(t *testing.T) {
	c, err := testcache.OpenDir(t.TempDir())
	require.NoError(t, err)
	first, files, err := normkeys.Fetch(c, tiny)
	require.NoError(t, err)
	again, _, err := normkeys.Fetch(c, tiny)
	require.NoError(t, err)
	assert.Equal(t, vkBytes(t, first), vkBytes(t, again), "read back, not set up again")
	dk, err := normproof.DecodeKeys(tiny, files["pk"], files["vk"])
	require.NoError(t, err, "the compressed keys (a DATA_DIR's) decode with every check")
	assert.Equal(t, vkBytes(t, first), vkBytes(t, dk))
	// The cache knows them decoded: a process given it as its
	// normproof.KnownKeys finds the keys of exactly these bytes.
	_, found, err := c.Load(normproof.KnownKeysName(tiny, files["pk"], files["vk"]))
	require.NoError(t, err)
	assert.True(t, found, "known decoded")
	used := &usedKnown{Cache: c}
	kk, err := normproof.NewServiceFetching(func(normproof.Shape) ([]byte, []byte, error) { return files["pk"], files["vk"], nil },
		normproof.WithKnownKeys(used)).Keys(tiny)
	require.NoError(t, err)
	assert.Equal(t, vkBytes(t, first), vkBytes(t, kk))
	assert.Equal(t, 1, used.found)

	key, err := normkeys.EntryKey(tiny)
	require.NoError(t, err)
	_, otherFiles, err := normkeys.Fetch(c, other)
	require.NoError(t, err)
	for name, bad := range map[string][]byte{
		"not an entry":         []byte("garbage"),
		"another shape's keys": testcache.Pack(otherFiles),
	} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, c.Store(key, bad))
			k, _, err := normkeys.Fetch(c, tiny)
			require.NoError(t, err)
			assert.NotEqual(t, vkBytes(t, first), vkBytes(t, k), "set up again")
			stored, found, err := c.Load(key)
			require.NoError(t, err)
			require.True(t, found)
			assert.False(t, bytes.Equal(bad, stored), "the bad entry was replaced")
			back, _, err := normkeys.Fetch(c, tiny)
			require.NoError(t, err)
			assert.Equal(t, vkBytes(t, k), vkBytes(t, back))
		})
	}
}
