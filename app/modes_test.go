package app_test

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/app"
)

// TestDataDirModes: whatever DATA_DIR's mode was, the service makes it
// 0700 and its database file 0600.
func TestDataDirModes(t *testing.T) {
	t.Parallel()
	dir := keyedDir(t)
	require.NoError(t, os.Chmod(dir, 0o755))
	db := filepath.Join(dir, "healthagents.db")
	require.NoError(t, os.WriteFile(db, nil, 0o644)) // an earlier, too open file
	require.NoError(t, os.Chmod(db, 0o644))
	a, err := app.OpenWithOutput(t.Context(), app.Config{DataDir: dir}, slog.New(slog.DiscardHandler), io.Discard)
	require.NoError(t, err)
	defer a.Close()
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	for _, name := range []string{"healthagents.db", "fernet.key"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		require.NoError(t, err, name)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), name)
	}
}
