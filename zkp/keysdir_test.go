package zkp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLoadKeysDir: LoadKeysDir reads a key directory in place, reports the
// setup its manifests record, and refuses a directory lacking a circuit's
// pair or holding keys of another circuit, without writing anything.
func TestLoadKeysDir(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	assert.Equal(t, SetupDevelopment, testSys.Setup())

	dir := copyKeyDir(t)
	sys, err := LoadKeysDir(ctx, dir)
	require.NoError(t, err)
	assert.Equal(t, SetupDevelopment, sys.Setup())
	for _, name := range CircuitNames() {
		assert.Equal(t, vkBytes(t, testSys, name), vkBytes(t, sys, name), name)
	}

	// Every manifest recording a ceremony: Setup says so.
	for _, name := range CircuitNames() {
		setOrigin(t, filepath.Join(dir, name+".json"), OriginCeremony)
	}
	// With a table store (the first load of these ceremony keys in the
	// process): the circuits take their prover tables from it, as
	// LoadOrSetup's do.
	tables := &memTables{entries: map[string][]byte{}}
	sys, err = LoadKeysDir(ctx, dir, WithTableStore(tables))
	require.NoError(t, err)
	assert.Equal(t, SetupCeremony, sys.Setup())
	for _, name := range CircuitNames() {
		assert.Equal(t, TableStore(tables), sys.circuits[name].tables, name)
	}
	// One circuit's keys from a single-party setup: development.
	setOrigin(t, filepath.Join(dir, CircuitNames()[1]+".json"), OriginSetup)
	sys, err = LoadKeysDir(ctx, dir)
	require.NoError(t, err)
	assert.Equal(t, SetupDevelopment, sys.Setup())

	// The first circuit's pair under the second's name: refused.
	for _, ext := range []string{".pk", ".vk", ".json"} {
		b, err := os.ReadFile(filepath.Join(dir, CircuitNames()[0]+ext))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, CircuitNames()[1]+ext), b, 0o600))
	}
	_, err = LoadKeysDir(ctx, dir)
	assert.ErrorIs(t, err, ErrKeyMismatch)

	// An empty (or missing) directory: refused, nothing set up or written.
	empty := t.TempDir()
	_, err = LoadKeysDir(ctx, empty)
	assert.ErrorIs(t, err, ErrKeyMismatch)
	entries, err := os.ReadDir(empty)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

func setOrigin(t *testing.T, path, origin string) {
	t.Helper()
	var m manifest
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &m))
	m.Origin = origin
	b, err = json.Marshal(&m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o600))
}
