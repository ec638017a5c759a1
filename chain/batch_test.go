package chain_test

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/chain"
	zst "github.com/healthagents/healthagents/zkp/statement"
)

// TestRecordBatchContract drives the registry's recordBatch directly: a
// submitter records a root once, with its size and sorted circuit ids; the
// event, the call and batchRecordedIn read back what was sent; every shape
// the registry refuses reverts and records nothing.
func TestRecordBatchContract(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	strangerKey, err := crypto.GenerateKey()
	require.NoError(t, err)
	l := newLedger(t, chain.WithFunded(crypto.PubkeyToAddress(strangerKey.PublicKey)))
	g := l.Governed()
	to := g.Address()
	ok, err := g.SupportsBatches(ctx)
	require.NoError(t, err)
	require.True(t, ok)

	var leaves []*big.Int
	for i := range 5 {
		ps := prove(t, int64(100+i))
		leaf, err := zst.Leaf(ps.inputs[0], ps.inputs[1], ps.inputs[2])
		require.NoError(t, err)
		leaves = append(leaves, leaf)
	}
	tree, err := zst.NewTree(leaves)
	require.NoError(t, err)
	id := chain.CircuitID(fixtureKind)
	data, err := g.RecordBatch(tree.Root(), tree.Size(), []*big.Int{id, id})
	require.NoError(t, err)
	r, err := l.Transact(ctx, &to, data, 0)
	require.NoError(t, err)
	require.Equal(t, types.ReceiptStatusSuccessful, r.Status)
	t.Logf("recordBatch of 5 statements: %d gas", r.GasUsed)

	ev, err := g.DecodeBatch(r)
	require.NoError(t, err)
	assert.Equal(t, tree.Root(), ev.Root)
	assert.EqualValues(t, 5, ev.Size)
	assert.Equal(t, []*big.Int{id}, ev.CircuitIDs, "circuit ids sorted and without repeats")
	assert.True(t, ev.Covers(id))
	assert.False(t, ev.Covers(big.NewInt(1)))
	assert.Equal(t, l.Account(), ev.Submitter)
	_, err = g.DecodeRecorded(r)
	require.ErrorIs(t, err, chain.ErrNoRecord, "a batch records no single statement")

	call, err := chain.DecodeRecordBatchCall(data)
	require.NoError(t, err)
	assert.Equal(t, tree.Root(), call.Root)
	_, err = chain.DecodeRecordCall(data)
	require.ErrorIs(t, err, chain.ErrNotRecordCall)

	view := chain.NewRegistryView(l.Client(), g.Address())
	in, err := view.BatchRecordedIn(ctx, tree.Root())
	require.NoError(t, err)
	assert.Equal(t, r.BlockNumber.Uint64(), in)
	in, err = view.BatchRecordedIn(ctx, big.NewInt(12345))
	require.NoError(t, err)
	assert.Zero(t, in)

	field, _ := new(big.Int).SetString("21888242871839275222246405745257275088548364400416034343698204186575808495617", 10)
	for name, c := range map[string]struct {
		root *big.Int
		size int
		ids  []*big.Int
	}{
		"the same root again":  {tree.Root(), 5, []*big.Int{id}},
		"zero root":            {big.NewInt(0), 5, []*big.Int{id}},
		"root beyond field":    {field, 5, []*big.Int{id}},
		"empty batch":          {big.NewInt(7), 0, []*big.Int{id}},
		"oversized batch":      {big.NewInt(7), chain.MaxBatch + 1, []*big.Int{id}},
		"no circuit ids":       {big.NewInt(7), 5, nil},
		"an unbound circuit":   {big.NewInt(7), 5, []*big.Int{id, big.NewInt(3)}},
		"more ids than leaves": {big.NewInt(7), 1, []*big.Int{id, chain.CircuitID("eligibility-v3")}},
	} {
		data, err := g.RecordBatch(c.root, c.size, c.ids)
		require.NoError(t, err, name)
		_, err = l.Transact(ctx, &to, data, 200_000)
		require.ErrorIs(t, err, chain.ErrReverted, name)
	}

	// Only a submitter records a batch.
	stranger := keySender(t, l.Client(), strangerKey)
	data, err = g.RecordBatch(big.NewInt(8), 1, []*big.Int{id})
	require.NoError(t, err)
	_, err = stranger.Transact(ctx, &to, data, 200_000)
	require.Error(t, err)
}
