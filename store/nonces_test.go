package store_test

import (
	"context"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
