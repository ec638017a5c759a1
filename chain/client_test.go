package chain_test

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/chain"
)

// TestClientSendsAreMined: a transaction another key (funded with
// WithFunded) sends through Ledger.Client is mined on the simulated chain
// without anyone else asking for a block.
func TestClientSendsAreMined(t *testing.T) {
	t.Parallel()
	other, err := crypto.GenerateKey()
	require.NoError(t, err)
	from := crypto.PubkeyToAddress(other.PublicKey)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	l, err := chain.NewSimulated(ctx, chain.WithFunded(from))
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	c := l.Client()

	nonce, err := c.PendingNonceAt(ctx, from)
	require.NoError(t, err)
	head, err := c.HeaderByNumber(ctx, nil)
	require.NoError(t, err)
	tip, err := c.SuggestGasTipCap(ctx)
	require.NoError(t, err)
	to := common.Address{0x42}
	tx, err := types.SignNewTx(other, types.LatestSignerForChainID(l.ChainID()), &types.DynamicFeeTx{
		ChainID: l.ChainID(), Nonce: nonce, GasTipCap: tip, GasFeeCap: new(big.Int).Add(tip, new(big.Int).Mul(head.BaseFee, big.NewInt(2))),
		Gas: 21_000, To: &to, Value: big.NewInt(1),
	})
	require.NoError(t, err)
	require.NoError(t, c.SendTransaction(ctx, tx), "the funded account can pay")
	r := waitReceipt(ctx, t, c, tx.Hash())
	assert.Equal(t, types.ReceiptStatusSuccessful, r.Status)
}

// TestTransactSharesNonces: transactions sent with Transact use the Ledger's
// account and nonces, so the Ledger's own transactions after them go
// through (a second nonce manager on the same key would collide).
func TestTransactSharesNonces(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	l, err := chain.NewSimulated(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	to := common.Address{0x42}
	for range 3 {
		r, err := l.Transact(ctx, &to, nil, 0)
		require.NoError(t, err)
		assert.Equal(t, types.ReceiptStatusSuccessful, r.Status)
	}
	require.NoError(t, setUp(ctx, l, fixtureVK(t)), "the Ledger's next transactions are not blocked")
	st := prove(t, 11)
	rc, err := l.Submit(ctx, fixtureKind, st.proof, st.inputs)
	require.NoError(t, err)
	assert.True(t, rc.Verified)

	_, err = l.Transact(ctx, &common.Address{}, nil, 0)
	require.Error(t, err, "the zero address is refused, not taken for a creation")
	require.NoError(t, l.Close())
	_, err = l.Transact(ctx, &to, nil, 0)
	require.ErrorIs(t, err, chain.ErrClosed)
}

func waitReceipt(ctx context.Context, t *testing.T, c chain.Backend, h common.Hash) *types.Receipt {
	t.Helper()
	for {
		r, err := c.TransactionReceipt(ctx, h)
		if err == nil {
			return r
		}
		require.ErrorIs(t, err, ethereum.NotFound)
		select {
		case <-ctx.Done():
			t.Fatalf("transaction %s not mined: %v", h.Hex(), ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}
