package testcache

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newCache(t *testing.T) *Cache {
	t.Helper()
	c, err := OpenDir(t.TempDir())
	require.NoError(t, err)
	return c
}

// counted returns a build that makes data and counts its calls.
func counted(data string) (func() ([]byte, error), *atomic.Int32) {
	var n atomic.Int32
	return func() ([]byte, error) { n.Add(1); return []byte(data), nil }, &n
}

func TestGetBuildsOnceThenLoads(t *testing.T) {
	c := newCache(t)
	key := Key([]byte("a"), []byte("b"))
	build, calls := counted("payload\nwith a newline")
	for range 3 {
		got, err := c.Get(key, build)
		require.NoError(t, err)
		assert.Equal(t, "payload\nwith a newline", string(got))
	}
	assert.Equal(t, int32(1), calls.Load())
	// Parts are length-prefixed: moving a byte between them moves the key.
	assert.NotEqual(t, key, Key([]byte("ab"), []byte("")))
	assert.NotEqual(t, key, Key([]byte("a"), []byte("b"), nil))
}

// TestBadEntriesRebuilt: an entry that does not hold what its key names —
// a flipped byte, a truncated file, another key's entry copied over it, a
// foreign file — is reported by Load and built again by Get.
func TestBadEntriesRebuilt(t *testing.T) {
	for name, spoil := range map[string]func(t *testing.T, c *Cache, key string){
		"corrupt": func(t *testing.T, c *Cache, key string) {
			b, err := os.ReadFile(c.path(key))
			require.NoError(t, err)
			b[len(b)-3] ^= 1
			require.NoError(t, os.WriteFile(c.path(key), b, 0o600))
		},
		"truncated": func(t *testing.T, c *Cache, key string) {
			b, err := os.ReadFile(c.path(key))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(c.path(key), b[:len(b)-1], 0o600))
		},
		"key mismatch": func(t *testing.T, c *Cache, key string) {
			other := Key([]byte("other"))
			require.NoError(t, c.Store(other, []byte("good bytes of another key")))
			b, err := os.ReadFile(c.path(other))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(c.path(key), b, 0o600))
		},
		"foreign": func(t *testing.T, c *Cache, key string) {
			require.NoError(t, os.WriteFile(c.path(key), []byte("not an entry"), 0o600))
		},
	} {
		t.Run(name, func(t *testing.T) {
			c := newCache(t)
			key := Key([]byte(name))
			require.NoError(t, c.Store(key, []byte("the right bytes")))
			spoil(t, c, key)
			_, found, err := c.Load(key)
			assert.True(t, found)
			require.ErrorIs(t, err, ErrBadEntry)

			build, calls := counted("the right bytes")
			got, err := c.Get(key, build)
			require.NoError(t, err)
			assert.Equal(t, "the right bytes", string(got))
			assert.Equal(t, int32(1), calls.Load(), "rebuilt")
			got, found, err = c.Load(key)
			require.NoError(t, err)
			assert.True(t, found)
			assert.Equal(t, "the right bytes", string(got), "the rebuilt entry replaced the bad one")
		})
	}
}

// TestConcurrentGetBuildsOnce: callers missing the same entry at once wait
// for one build (the lock is per open file, so goroutines of one process
// contend as processes do) and leave no temporary file behind.
func TestConcurrentGetBuildsOnce(t *testing.T) {
	c := newCache(t)
	key := Key([]byte("shared"))
	build, calls := counted("built once")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			got, err := c.Get(key, build)
			assert.NoError(t, err)
			assert.Equal(t, "built once", string(got))
		})
	}
	wg.Wait()
	assert.Equal(t, int32(1), calls.Load())
	entries, err := os.ReadDir(c.Dir())
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), ".tmp-")
	}
}

func TestFailedBuildStoresNothing(t *testing.T) {
	c := newCache(t)
	key := Key([]byte("fails"))
	boom := errors.New("boom")
	_, err := c.Get(key, func() ([]byte, error) { return nil, boom })
	require.ErrorIs(t, err, boom)
	_, found, err := c.Load(key)
	require.NoError(t, err)
	assert.False(t, found)
}

func TestOpenHonoursDirEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(DirEnv, dir)
	c, err := Open()
	require.NoError(t, err)
	assert.Equal(t, dir, c.Dir())
}

func TestOpenWithoutUserCacheDir(t *testing.T) {
	t.Setenv(DirEnv, "")
	t.Setenv("HOME", "")
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("TMPDIR", t.TempDir())
	c, err := Open()
	require.NoError(t, err)
	assert.DirExists(t, c.Dir())
}
