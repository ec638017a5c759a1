package chain_test

import (
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/chain"
)

// revertingContract is the creation code of a contract whose every call
// reverts: it copies the 5-byte runtime PUSH1 0 PUSH1 0 REVERT and returns it.
var revertingContract = hexutil.MustDecode("0x6005600c60003960056000f3" + "60006000fd")

// TestTransactor sends with a key of its own over a simulated Ledger's
// Client: the pipeline the Ledger and the pharmacy oracle share.
func TestTransactor(t *testing.T) {
	t.Parallel()
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	from := crypto.PubkeyToAddress(key.PublicKey)
	l, err := chain.NewSimulated(t.Context(), chain.WithFunded(from))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, l.Close()) })
	ctx := t.Context()

	_, err = chain.NewTransactor(ctx, l.Client(), nil, 0)
	require.Error(t, err, "no key")

	tr, err := chain.NewTransactor(ctx, l.Client(), key, 0)
	require.NoError(t, err)
	assert.Equal(t, from, tr.Account())

	// Concurrent sends from one Transactor get distinct nonces and are all
	// mined (the simulated chain seals only on request).
	const n = 4
	receipts := make([]*types.Receipt, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { receipts[i], errs[i] = tr.Transact(ctx, nil, revertingContract, 0) })
	}
	wg.Wait()
	seen := map[common.Address]bool{}
	for i := range n {
		require.NoError(t, errs[i])
		assert.Equal(t, types.ReceiptStatusSuccessful, receipts[i].Status)
		seen[receipts[i].ContractAddress] = true
	}
	assert.Len(t, seen, n, "one contract per transaction")
	addr := receipts[0].ContractAddress

	// A revert found while estimating: ErrReverted, no receipt.
	r, err := tr.Transact(ctx, &addr, nil, 0)
	require.ErrorIs(t, err, chain.ErrReverted)
	assert.Nil(t, r)

	// With a fixed gas limit the transaction is mined and fails: its
	// receipt comes back with ErrReverted.
	r, err = tr.Transact(ctx, &addr, nil, 100_000)
	require.ErrorIs(t, err, chain.ErrReverted)
	require.NotNil(t, r)
	assert.Equal(t, types.ReceiptStatusFailed, r.Status)

	// The Ledger's own account is untouched by the other key's nonces.
	_, err = l.Transact(ctx, nil, revertingContract, 0)
	require.NoError(t, err)
}
