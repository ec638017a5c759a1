package issuers_test

import (
	"net"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/api"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/credential"
	"github.com/healthagents/healthagents/issuers"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

// TestColdOwner: on a JSON-RPC node whose registry owner's key the service
// does not hold, registering a payer keeps it and returns the owner's
// unsigned transaction; once the wallet has signed and sent it, the payer is
// active. Retiring works the same way.
func TestColdOwner(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	hotKey, err := crypto.GenerateKey()
	require.NoError(t, err)
	ownerKey, err := crypto.GenerateKey()
	require.NoError(t, err)
	node, err := chain.NewSimulated(ctx, chain.WithHTTP(addr), chain.WithKey(hotKey), chain.WithOwnerKey(ownerKey))
	require.NoError(t, err)
	t.Cleanup(func() { node.Close() })
	l, err := chain.Dial(ctx, "http://"+addr, chain.DialConfig{Key: hexutil.Encode(crypto.FromECDSA(hotKey)), Registry: node.Registry().Hex()},
		chain.WithPollInterval(20*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	require.False(t, l.HoldsOwnerKey())

	db := storetest.Open(t, storetest.Backends(t)[0])
	st, err := store.NewIssuerStore(db)
	require.NoError(t, err)
	reg, err := issuers.New(st, l)
	require.NoError(t, err)

	k, err := credential.GenerateKey()
	require.NoError(t, err)
	pub := credential.PublicKeyHex(k)
	iss, created, err := reg.Register(ctx, api.IssuerRequest{PublicKey: pub, Name: "Acme Health"})
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, "awaiting_owner", iss.Status)
	require.NotNil(t, iss.OwnerAction)
	assert.Empty(t, iss.TxHash)
	assert.Contains(t, iss.OwnerAction.Summary, "registerIssuer("+iss.KeyHash)
	assert.Equal(t, node.Owner().Hex(), iss.OwnerAction.From)

	send := func(u *api.UnsignedTransaction) {
		t.Helper()
		signed, err := chain.SignUnsigned(chain.UnsignedTx{RLPHex: u.RLP, ChainID: l.ChainID(), From: node.Owner()}, ownerKey)
		require.NoError(t, err)
		require.NoError(t, node.Client().SendTransaction(ctx, signed))
		require.Eventually(t, func() bool {
			r, err := node.Client().TransactionReceipt(ctx, signed.Hash())
			return err == nil && r.Status == 1
		}, 10*time.Second, 20*time.Millisecond)
	}
	send(iss.OwnerAction)
	got, err := reg.Get(ctx, pub)
	require.NoError(t, err)
	assert.Equal(t, "active", got.Status)

	retired, err := reg.Retire(ctx, pub)
	require.NoError(t, err)
	assert.Equal(t, "retire_awaiting_owner", retired.Status)
	require.NotNil(t, retired.OwnerAction)
	send(retired.OwnerAction)
	got, err = reg.Get(ctx, pub)
	require.NoError(t, err)
	assert.Equal(t, "retired", got.Status)
	_, _, err = reg.Register(ctx, api.IssuerRequest{PublicKey: pub, Name: "Acme Health"})
	require.ErrorIs(t, err, issuers.ErrRetired)
}
