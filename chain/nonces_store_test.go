package chain_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

// The store's nonce allocator is what replicas sharing a key plug in
// (app wires it with chain.WithNonceSource). It lives here, not in store,
// so that store and the packages above it (apikey, webhook) do not link
// the chain (go-ethereum, gnark) for one assertion.
var _ chain.NonceSource = (*store.NonceStore)(nil)

// TestSharedKeyTransactorsNeverCollide: two Transactors signing with one
// key (two replicas) on one JSON-RPC chain send concurrently through
// NonceStores on one database: every transaction is mined, with distinct
// nonces. Without the store each keeps its own count and they collide.
func TestSharedKeyTransactorsNeverCollide(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	node, err := chain.NewSimulated(ctx, chain.WithHTTP(addr), chain.WithKey(key))
	require.NoError(t, err)
	t.Cleanup(func() { node.Close() })

	// Backends one after the other, on one chain: the nonces go on.
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			var txs []*chain.Transactor
			for range 2 {
				db, err := store.Open(ctx, b.DSN) // two pools: two processes' view
				require.NoError(t, err)
				t.Cleanup(func() { db.Close() })
				ns, err := store.NewNonceStore(db)
				require.NoError(t, err)
				client, err := ethclient.DialContext(ctx, "http://"+addr)
				require.NoError(t, err)
				t.Cleanup(client.Close)
				tr, err := chain.NewTransactor(ctx, client, key, 50*time.Millisecond)
				require.NoError(t, err)
				tr.SetNonceSource(ns)
				txs = append(txs, tr)
			}
			to := common.HexToAddress("0x00000000000000000000000000000000000000bb")
			var (
				wg     sync.WaitGroup
				mu     sync.Mutex
				nonces = map[uint64]bool{}
			)
			const each = 8
			for _, tr := range txs {
				for range each {
					wg.Add(1)
					go func() {
						defer wg.Done()
						cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
						defer cancel()
						r, err := tr.Transact(cctx, &to, nil, 21_000)
						if !assert.NoError(t, err) {
							return
						}
						client, err := ethclient.DialContext(cctx, "http://"+addr)
						require.NoError(t, err)
						defer client.Close()
						tx, _, err := client.TransactionByHash(cctx, r.TxHash)
						require.NoError(t, err)
						mu.Lock()
						assert.False(t, nonces[tx.Nonce()], "nonce %d used twice", tx.Nonce())
						nonces[tx.Nonce()] = true
						mu.Unlock()
					}()
				}
			}
			wg.Wait()
			assert.Len(t, nonces, 2*each)
		})
	}
}
