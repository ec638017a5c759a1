package chain_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/chain"
)

// TestEmbeddedChainPersists: a recorded statement's receipt and event, the
// funded accounts and the registry survive a restart; blocks continue above the old head.
func TestEmbeddedChainPersists(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	owner, err := crypto.GenerateKey()
	require.NoError(t, err)
	ownerAddr := crypto.PubkeyToAddress(owner.PublicKey)

	l, err := chain.NewSimulated(ctx, chain.WithDataDir(dir), chain.WithFunded(ownerAddr))
	require.NoError(t, err)
	registry := l.Registry()
	account := l.Account()
	require.NoError(t, setUp(ctx, l, fixtureVK(t)))
	ps := prove(t, 3)
	rc, err := l.Submit(ctx, fixtureKind, ps.proof, ps.inputs)
	require.NoError(t, err)
	require.True(t, rc.Verified)
	old, err := l.Client().TransactionReceipt(ctx, rc.TxHash)
	require.NoError(t, err)
	oldHead, err := l.Client().HeaderByNumber(ctx, nil)
	require.NoError(t, err)
	require.NoError(t, l.Close())

	l2, err := chain.NewSimulated(ctx, chain.WithDataDir(dir))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, l2.Close()) })
	assert.Equal(t, registry, l2.Registry())
	assert.Equal(t, account, l2.Account())
	head2, err := l2.Client().HeaderByNumber(ctx, nil)
	require.NoError(t, err)
	t.Logf("old head %d, head after restart %d, dir %v", oldHead.Number, head2.Number, dir)
	again, err := l2.Client().TransactionReceipt(ctx, rc.TxHash)
	require.NoError(t, err)
	assert.Equal(t, old.BlockHash, again.BlockHash)
	require.Len(t, again.Logs, len(old.Logs))
	_, err = l2.Statement(ctx, rc.TxHash)
	require.NoError(t, err, "the old event decodes after the restart")
	v, err := l2.Verifier(ctx, fixtureKind)
	require.NoError(t, err)
	assert.NotZero(t, v, "registered verifier kept")

	// New blocks continue above the old head, and the funded owner still has funds.
	rc2, err := l2.Submit(ctx, fixtureKind, ps.proof, ps.inputs)
	require.NoError(t, err)
	assert.Greater(t, rc2.BlockNumber, oldHead.Number.Uint64())
	_, err = keySender(t, l2.Client(), owner).Transact(ctx, &account, nil, 21000)
	require.NoError(t, err)
}

// TestEmbeddedChainFromBeforeGovernance: a chain kept by an earlier version
// (embedded.json names no GovernedRegistry, and there is no owner key) gets a
// GovernedRegistry, owned by a newly generated (and funded) owner key, at the
// next start. The StatementRegistry such a version recorded in is no longer
// read (docs/decisions.md).
func TestEmbeddedChainFromBeforeGovernance(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	l, err := chain.NewSimulated(ctx, chain.WithDataDir(dir))
	require.NoError(t, err)
	first := l.Registry()
	require.NoError(t, l.Close())

	// Make the kept state look like the earlier version's.
	path := filepath.Join(dir, "embedded.json")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var st map[string]any
	require.NoError(t, json.Unmarshal(b, &st))
	delete(st, "governed_registry")
	st["registry"] = common.Address{0x5e}.Hex()
	b, err = json.Marshal(st)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o600))
	require.NoError(t, os.Remove(filepath.Join(dir, "owner.key")))

	l2, err := chain.NewSimulated(ctx, chain.WithDataDir(dir))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, l2.Close()) })
	assert.NotEqual(t, common.Address{}, l2.Registry())
	assert.NotEqual(t, first, l2.Registry())
	assert.True(t, l2.HoldsOwnerKey())
	info, err := os.Stat(filepath.Join(dir, "owner.key"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	// The new owner was funded and governs, and the registry records.
	require.NoError(t, setUp(ctx, l2, fixtureVK(t)))
	ps := prove(t, 4)
	rc, err := l2.Submit(ctx, fixtureKind, ps.proof, ps.inputs)
	require.NoError(t, err)
	assert.True(t, rc.Verified)
}
