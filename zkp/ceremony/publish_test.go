package ceremony

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPublishModes: the files a key directory's writer leaves (0600, as
// zkp.System.Save writes DATA_DIR's keys, with its .lock beside them) are
// published 0644 into dir, and neither the lock nor the staging directory
// stays behind. (Install runs this with zkp.System.Save;
// TestCeremonyRealCircuits checks the real output, gated for time.)
func TestPublishModes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	save := func(_ context.Context, stage string) error {
		for _, name := range []string{".lock", "alpha.pk", "alpha.vk", "alpha.json"} {
			if err := os.WriteFile(filepath.Join(stage, name), []byte(name), 0o600); err != nil {
				return err
			}
		}
		return nil
	}
	require.NoError(t, publish(t.Context(), dir, save))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		fi, err := e.Info()
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), e.Name())
	}
	assert.Equal(t, []string{"alpha.json", "alpha.pk", "alpha.vk"}, names, "no .lock, no staging directory")
	b, err := os.ReadFile(filepath.Join(dir, "alpha.pk"))
	require.NoError(t, err)
	assert.Equal(t, "alpha.pk", string(b))

	// A failed save publishes nothing and leaves nothing.
	dir2 := t.TempDir()
	require.Error(t, publish(t.Context(), dir2, func(context.Context, string) error { return os.ErrPermission }))
	entries, err = os.ReadDir(dir2)
	require.NoError(t, err)
	assert.Empty(t, entries)
}
