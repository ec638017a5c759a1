package store_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

// TestLeaderLease: one holder at a time, across pools (replicas): the
// holder renews, the others are refused; when the holder stops renewing
// (it died), another takes over once the lease has run out, with a higher
// epoch, and the old holder's renewal fails; a release hands over at once.
func TestLeaderLease(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		ctx := t.Context()
		var clock atomic.Int64
		clock.Store(time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC).UnixMicro())
		now := func() time.Time { return time.UnixMicro(clock.Load()) }
		replicas := make([]*store.LeaseStore, 4)
		for i := range replicas {
			d := db
			if i > 0 {
				d = storetest.Open(t, b) // its own pool
			}
			ls, err := store.NewLeaseStore(d)
			require.NoError(t, err)
			replicas[i] = ls.WithLeaseClock(now)
		}
		const name, ttl = "federated:task", 15 * time.Second

		// Concurrent first takers: exactly one wins.
		var wins atomic.Int32
		var wg sync.WaitGroup
		for i, ls := range replicas {
			wg.Go(func() {
				held, _, err := ls.Acquire(ctx, name, "replica-"+string(rune('a'+i)), ttl)
				assert.NoError(t, err)
				if held {
					wins.Add(1)
				}
			})
		}
		wg.Wait()
		require.EqualValues(t, 1, wins.Load())
		leader, err := replicas[0].Holder(ctx, name)
		require.NoError(t, err)
		require.NotEmpty(t, leader)
		other := "replica-z"

		clock.Add((10 * time.Second).Microseconds())
		held, e1, err := replicas[1].Acquire(ctx, name, leader, ttl)
		require.NoError(t, err)
		require.True(t, held, "the holder renews")
		held, _, err = replicas[2].Acquire(ctx, name, other, ttl)
		require.NoError(t, err)
		require.False(t, held, "not while the holder renews")

		clock.Add((14 * time.Second).Microseconds()) // renewed 14 s ago: still held
		held, _, err = replicas[2].Acquire(ctx, name, other, ttl)
		require.NoError(t, err)
		require.False(t, held)
		clock.Add((2 * time.Second).Microseconds()) // the leader died: run out
		held, e2, err := replicas[2].Acquire(ctx, name, other, ttl)
		require.NoError(t, err)
		require.True(t, held, "taken over")
		assert.Equal(t, e1+1, e2, "a new epoch")
		held, _, err = replicas[1].Acquire(ctx, name, leader, ttl)
		require.NoError(t, err)
		assert.False(t, held, "the old leader's renewal fails")

		require.NoError(t, replicas[3].Release(ctx, name, leader), "a non-holder's release changes nothing")
		h, err := replicas[0].Holder(ctx, name)
		require.NoError(t, err)
		assert.Equal(t, other, h)
		require.NoError(t, replicas[3].Release(ctx, name, other))
		h, err = replicas[0].Holder(ctx, name)
		require.NoError(t, err)
		assert.Empty(t, h)
		held, _, err = replicas[1].Acquire(ctx, name, leader, ttl)
		require.NoError(t, err)
		assert.True(t, held, "released: taken at once")
	})
}

// TestFederatedStoreFence: a FederatedStore fenced by a lease writes while
// its holder holds the lease at that epoch, and is refused with ErrFenced,
// writing nothing, once the lease has passed to another holder.
func TestFederatedStoreFence(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		ctx := t.Context()
		leases, err := store.NewLeaseStore(db)
		require.NoError(t, err)
		fs, err := store.NewFederatedStore(db)
		require.NoError(t, err)
		const name = "federated:fence"
		held, epoch, err := leases.Acquire(ctx, name, "a", time.Hour)
		require.NoError(t, err)
		require.True(t, held)
		fenced := fs.WithLeaseFence(name, "a", epoch)
		require.NoError(t, fenced.SaveFederated(ctx, federated.Change{Model: &federated.ModelVersion{Version: "1.0.0", Round: -1},
			Rounds: []*federated.RoundState{{Number: 0, Phase: federated.PhaseAdvertiseKeys}}}))

		require.NoError(t, leases.Release(ctx, name, "a"))
		held, _, err = leases.Acquire(ctx, name, "b", time.Hour)
		require.NoError(t, err)
		require.True(t, held)
		err = fenced.SaveFederated(ctx, federated.Change{Rounds: []*federated.RoundState{{Number: 1, Phase: federated.PhaseAdvertiseKeys}}})
		require.ErrorIs(t, err, store.ErrFenced)
		snap, err := fs.LoadFederated(ctx)
		require.NoError(t, err)
		require.NotNil(t, snap)
		require.NotNil(t, snap.Round)
		assert.Equal(t, 0, snap.Round.Number, "the fenced write left nothing")
		held, epochA, err := leases.Acquire(ctx, name, "a", time.Hour)
		require.NoError(t, err)
		assert.False(t, held)
		assert.Equal(t, epoch+1, epochA)
	})
}

// TestLeaseAddress: a lease keeps the address its holder advertised, a
// new holder's replaces it, and nobody is the leader once it ran out.
func TestLeaseAddress(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		ctx := t.Context()
		leases, err := store.NewLeaseStore(db)
		require.NoError(t, err)
		const name = "federated:address"
		a, c := leases.WithAddress("http://10.0.0.1:8000"), leases.WithAddress("")
		held, _, err := a.Acquire(ctx, name, "a", time.Hour)
		require.NoError(t, err)
		require.True(t, held)
		held, _, err = c.Acquire(ctx, name, "c", time.Hour)
		require.NoError(t, err)
		require.False(t, held)
		holder, addr, err := leases.Leader(ctx, name)
		require.NoError(t, err)
		assert.Equal(t, "a", holder)
		assert.Equal(t, "http://10.0.0.1:8000", addr, "a follower's try leaves the holder's address")

		require.NoError(t, a.Release(ctx, name, "a"))
		holder, addr, err = leases.Leader(ctx, name)
		require.NoError(t, err)
		assert.Empty(t, holder)
		assert.Empty(t, addr)
		held, _, err = c.Acquire(ctx, name, "c", time.Hour)
		require.NoError(t, err)
		require.True(t, held)
		holder, addr, err = leases.Leader(ctx, name)
		require.NoError(t, err)
		assert.Equal(t, "c", holder)
		assert.Empty(t, addr, "the new holder advertises none")
	})
}
