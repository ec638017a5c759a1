package store_test

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

// TestNonceStoreAcrossReplicas: two NonceStores on two connection pools of
// one database (two replicas) allocate nonces for one account concurrently
// while the node's pending nonce lags behind (it says 0 throughout): every
// nonce is handed out once, without gaps. A failed send records nothing;
// Forget returns the account to the node's pending nonce.
func TestNonceStoreAcrossReplicas(t *testing.T) {
	t.Parallel()
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			dbA := storetest.Open(t, b)
			dbB, err := store.Open(ctx, b.DSN)
			require.NoError(t, err)
			t.Cleanup(func() { dbB.Close() })
			var replicas []*store.NonceStore
			for _, db := range []*store.DB{dbA, dbB} {
				ns, err := store.NewNonceStore(db)
				require.NoError(t, err)
				replicas = append(replicas, ns)
			}
			account := common.HexToAddress("0x00000000000000000000000000000000000000aa")
			lagging := func(context.Context) (uint64, error) { return 0, nil }

			var mu sync.Mutex
			seen := map[uint64]int{}
			var wg sync.WaitGroup
			const perReplica = 20
			for _, ns := range replicas {
				for range perReplica {
					wg.Add(1)
					go func() {
						defer wg.Done()
						assert.NoError(t, ns.WithNonce(ctx, 1337, account, lagging, func(n uint64) error {
							mu.Lock()
							seen[n]++
							mu.Unlock()
							return nil
						}))
					}()
				}
			}
			wg.Wait()
			require.Len(t, seen, 2*perReplica, "every nonce handed out once")
			for n := range uint64(2 * perReplica) {
				assert.Equal(t, 1, seen[n], "nonce %d", n)
			}

			// A failed send is not recorded; the next one gets the same nonce.
			var got []uint64
			record := func(n uint64) error { got = append(got, n); return nil }
			require.Error(t, replicas[0].WithNonce(ctx, 1337, account, lagging, func(n uint64) error { return assert.AnError }))
			require.NoError(t, replicas[1].WithNonce(ctx, 1337, account, lagging, record))
			// Another chain, another sequence; the node ahead of the store wins.
			require.NoError(t, replicas[0].WithNonce(ctx, 1, account, lagging, record))
			require.NoError(t, replicas[0].WithNonce(ctx, 1337, account, func(context.Context) (uint64, error) { return 100, nil }, record))
			require.NoError(t, replicas[1].Forget(ctx, 1337, account))
			require.NoError(t, replicas[0].WithNonce(ctx, 1337, account, func(context.Context) (uint64, error) { return 7, nil }, record))
			assert.Equal(t, []uint64{2 * perReplica, 0, 100, 7}, got)
		})
	}
}

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
