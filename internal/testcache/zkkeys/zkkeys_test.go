package zkkeys_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/internal/testcache"
	"github.com/healthagents/healthagents/internal/testcache/zkkeys"
	"github.com/healthagents/healthagents/zkp"
)

// TestDataDirLoads: the keys handed out load as a DATA_DIR's own, for the
// circuits this binary compiles.
func TestDataDirLoads(t *testing.T) {
	dir := zkkeys.DataDir(t)
	sys, err := zkp.LoadOrSetup(t.Context(), filepath.Join(dir, "zkp"))
	require.NoError(t, err)
	for _, name := range zkp.CircuitNames() {
		info, ok := sys.Info(name)
		require.True(t, ok)
		digest, err := zkp.CircuitDigest(name)
		require.NoError(t, err)
		assert.Equal(t, digest, info.CCSSHA256)
		assert.Equal(t, zkp.OriginSetup, info.Origin)
	}
}

// TestBadEntryRebuilt: in a cache holding a good entry for one circuit and
// a corrupt one for the other, the corrupt one is set up again and
// replaced, and the good one is handed out as it was.
func TestBadEntryRebuilt(t *testing.T) {
	shared, err := zkkeys.Files()
	require.NoError(t, err)
	c, err := testcache.OpenDir(t.TempDir())
	require.NoError(t, err)
	set := zkkeys.Set()
	good, bad := zkp.CircuitPrescriptionV4, zkp.CircuitEligibilityV3 // the smaller circuit is set up again

	// The good entry: the shared cache's files, stored by a build that
	// copies them.
	seed := set
	seed.Names = []string{good}
	seed.Build = func(_ context.Context, dir string) error {
		for _, f := range set.Files(good) {
			if err := os.WriteFile(filepath.Join(dir, f), shared[f], 0o600); err != nil {
				return err
			}
		}
		return nil
	}
	_, err = c.KeyFiles(t.Context(), seed)
	require.NoError(t, err)
	badKey, err := set.Key(bad)
	require.NoError(t, err)
	require.NoError(t, c.Store(badKey, []byte("not a packed key pair")))

	files, err := c.KeyFiles(t.Context(), set)
	require.NoError(t, err)
	for _, f := range set.Files(good) {
		assert.Equal(t, shared[f], files[f], f)
	}
	assert.NotEqual(t, shared[bad+".vk"], files[bad+".vk"], "a new set-up")
	// The rebuilt entry replaced the bad one: a second call builds nothing.
	again, err := c.KeyFiles(t.Context(), testcache.KeySet{Format: set.Format, Names: set.Names, Digest: set.Digest, Files: set.Files,
		Build: func(context.Context, string) error { return nil }})
	require.NoError(t, err)
	assert.Equal(t, files, again)
}
