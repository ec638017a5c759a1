package server_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

// TestIdempotencyAcrossReplicas: two servers (replicas, or one before and
// after a restart) on one database. A POST retried with the same
// Idempotency-Key on the other replica replays the first answer (the same
// new key, Idempotent-Replayed: true) instead of minting a second key; a
// different body is 422; a duplicate while the first is still running on
// another replica is 409.
func TestIdempotencyAcrossReplicas(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		fk, err := cipher.GenerateKey()
		require.NoError(t, err)
		kr, err := cipher.ParseKeyring(fk)
		require.NoError(t, err)
		idem, err := store.NewIdempotencyStore(db, kr)
		require.NoError(t, err)
		a := newKeyServer(t, db, keyServerOpts{idem: idem})
		other := newKeyServer(t, db, keyServerOpts{idem: idem})

		body := map[string]any{"name": "replica-test"}
		first := a.call(t, "POST", "/auth/keys", adminToken, body, "Idempotency-Key: k-1")
		require.Equal(t, 200, first.status, first.body)
		again := other.call(t, "POST", "/auth/keys", adminToken, body, "Idempotency-Key: k-1")
		require.Equal(t, 200, again.status, again.body)
		assert.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
		assert.Equal(t, first.body["api_key"], again.body["api_key"], "the same key, not a second one")
		list, _, err := a.keys.List(t.Context(), apikey.ListOptions{Limit: 100})
		require.NoError(t, err)
		assert.Len(t, list, 1, "one key minted")

		changed := other.call(t, "POST", "/auth/keys", adminToken, map[string]any{"name": "other"}, "Idempotency-Key: k-1")
		assert.Equal(t, 422, changed.status)

		// A first attempt still running on another replica: its claim is
		// held (the server's id: caller, route, key).
		state, _, _, err := idem.Claim(t.Context(), "ip:127.0.0.1\x00POST /auth/keys\x00k-2", time.Minute)
		require.NoError(t, err)
		require.Equal(t, store.IdemClaimed, state)
		busy := a.call(t, "POST", "/auth/keys", adminToken, body, "Idempotency-Key: k-2")
		assert.Equal(t, 409, busy.status, busy.body)
		list, _, err = a.keys.List(t.Context(), apikey.ListOptions{Limit: 100})
		require.NoError(t, err)
		assert.Len(t, list, 1, "the duplicate did not run")

		// A plain retry of a refused (not kept) answer runs afresh: the
		// claim of a 4xx-free failure is released.
		require.NoError(t, idem.Release(t.Context(), "ip:127.0.0.1\x00POST /auth/keys\x00k-2"))
		fresh := other.call(t, "POST", "/auth/keys", adminToken, body, "Idempotency-Key: k-2")
		assert.Equal(t, 200, fresh.status, fresh.body)
	})
}

// TestIdempotencyLocalWaitersDuringARemoteRun: while another replica runs
// a key's first attempt, concurrent duplicates on this replica all get 409
// — the ones that waited here behind the one refused by the store too —
// and none runs.
func TestIdempotencyLocalWaitersDuringARemoteRun(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		fk, err := cipher.GenerateKey()
		require.NoError(t, err)
		kr, err := cipher.ParseKeyring(fk)
		require.NoError(t, err)
		idem, err := store.NewIdempotencyStore(db, kr)
		require.NoError(t, err)
		a := newKeyServer(t, db, keyServerOpts{idem: idem})
		body := map[string]any{"name": "waiters"}
		for round := range 5 {
			k := fmt.Sprintf("remote-%d", round)
			state, _, _, err := idem.Claim(t.Context(), "ip:127.0.0.1\x00POST /auth/keys\x00"+k, time.Minute)
			require.NoError(t, err)
			require.Equal(t, store.IdemClaimed, state, "running on the other replica")
			var wg sync.WaitGroup
			start := make(chan struct{})
			statuses := make([]int, 8)
			for i := range statuses {
				wg.Go(func() {
					<-start
					statuses[i] = a.call(t, "POST", "/auth/keys", adminToken, body, "Idempotency-Key: "+k).status
				})
			}
			close(start)
			wg.Wait()
			for _, st := range statuses {
				assert.Equal(t, 409, st, "round %d: %v", round, statuses)
			}
		}
		list, _, err := a.keys.List(t.Context(), apikey.ListOptions{Limit: 100})
		require.NoError(t, err)
		assert.Empty(t, list, "no duplicate ran")
	})
}
