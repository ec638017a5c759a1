package app

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/internal/testcache"
)

// A proved run's keys exist before round 0 opens: federatedProofs sets up
// the shapes of MinParticipants to TargetParticipants organizations (and
// keeps them under DATA_DIR), so no round waits for a setup.
func TestProvedRunSetsUpItsKeysBeforeRoundZero(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := federated.Config{Task: federated.DefaultTask(), ClipNorm: 1, MinParticipants: 3, TargetParticipants: 4}
	keys, err := federatedProofs(dir, &cfg)
	require.NoError(t, err)
	require.NotNil(t, cfg.Proofs)
	for _, shape := range []string{"w5-e5-p2-b25", "w5-e5-p3-b25"} {
		for _, ext := range []string{".pk", ".vk"} {
			_, err := os.Stat(filepath.Join(dir, "federated-proofs", shape+ext))
			assert.NoError(t, err, "%s set up at the start", shape+ext)
		}
		pk, vk, err := keys(t.Context(), shape)
		require.NoError(t, err)
		assert.NotEmpty(t, pk)
		assert.NotEmpty(t, vk)
	}
	_, err = os.Stat(filepath.Join(dir, "federated-proofs", "w5-e5-p4-b25.pk"))
	assert.ErrorIs(t, err, os.ErrNotExist, "a shape beyond the target waits until a round has it")
}

// A coordinator looks its proof keys up in ZKTables when that store can
// hold them (the test cache), never in production.
func TestFederatedKnownKeysFromTables(t *testing.T) {
	t.Parallel()
	c, err := testcache.OpenDir(t.TempDir())
	require.NoError(t, err)
	assert.Len(t, (&Config{ZKTables: c}).federatedKnownKeys(), 1)
	assert.Empty(t, (&Config{ZKTables: c, Production: true}).federatedKnownKeys(), "production ignores it")
	assert.Empty(t, (&Config{}).federatedKnownKeys())
}
