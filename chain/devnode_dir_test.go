package chain_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/chain"
)

// TestEmbeddedChainOldLayout: a data dir laid out by an earlier version —
// the chain database under geth/<executable name>, and beside it the chain
// of only its genesis that a second program left when its start failed on
// it — opens with the first program's chain: its receipt and registry are
// served, the chain now lives under geth/healthagents and the stray one is
// moved aside, not deleted.
func TestEmbeddedChainOldLayout(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir, stray := t.TempDir(), t.TempDir()

	l, err := chain.NewSimulated(ctx, chain.WithDataDir(dir))
	require.NoError(t, err)
	registry := l.Registry()
	to := l.Account()
	sent, err := l.Transact(ctx, &to, nil, 21000)
	require.NoError(t, err)
	tx := sent.TxHash
	require.NoError(t, l.Close())

	// Another chain (another genesis), standing in for the stray one.
	other, err := chain.NewSimulated(ctx, chain.WithDataDir(stray))
	require.NoError(t, err)
	require.NoError(t, other.Close())

	geth := filepath.Join(dir, "geth")
	require.NoError(t, os.Rename(filepath.Join(geth, "healthagents"), filepath.Join(geth, "mount")))
	require.NoError(t, os.Rename(filepath.Join(stray, "geth", "healthagents"), filepath.Join(geth, "healthagents")))

	l2, err := chain.NewSimulated(ctx, chain.WithDataDir(dir))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, l2.Close()) })
	assert.Equal(t, registry, l2.Registry())
	r, err := l2.Client().TransactionReceipt(ctx, tx)
	require.NoError(t, err, "the old receipt is served")
	assert.Equal(t, uint64(1), r.Status)
	entries, err := os.ReadDir(geth)
	require.NoError(t, err)
	var names, aside []string
	for _, e := range entries {
		names = append(names, e.Name())
		if strings.HasPrefix(e.Name(), "healthagents.replaced-") {
			aside = append(aside, e.Name())
		}
	}
	assert.NotContains(t, names, "mount", "moved to geth/healthagents")
	assert.Contains(t, names, "healthagents")
	assert.Len(t, aside, 1, "the stray chain is set aside: %v", names)
}
