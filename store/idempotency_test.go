package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

// TestIdempotencyStore: a claim is leased; a second claim sees it running;
// a lease whose process died is taken over once it ends; a completed
// answer is replayed with its body hash and kept sealed at rest.
func TestIdempotencyStore(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		ctx := t.Context()
		s, err := store.NewIdempotencyStore(db, newKeyring(t))
		require.NoError(t, err)
		now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
		store.SetIdempotencyClock(s, func() time.Time { return now })

		state, _, _, err := s.Claim(ctx, "caller/route/k1", 2*time.Minute)
		require.NoError(t, err)
		assert.Equal(t, store.IdemClaimed, state)
		now = now.Add(time.Minute)
		state, _, _, err = s.Claim(ctx, "caller/route/k1", 2*time.Minute)
		require.NoError(t, err)
		assert.Equal(t, store.IdemRunning, state, "the first attempt still holds its lease")
		now = now.Add(2 * time.Minute)
		state, _, _, err = s.Claim(ctx, "caller/route/k1", 2*time.Minute)
		require.NoError(t, err)
		assert.Equal(t, store.IdemClaimed, state, "a dead attempt's lease is taken over")

		hash := [32]byte{1, 2, 3}
		answer := []byte(`{"status":200,"body":"c2tfZGV2X1NFQ1JFVA=="}`)
		require.NoError(t, s.Complete(ctx, "caller/route/k1", hash, answer, time.Hour))
		state, gotHash, got, err := s.Claim(ctx, "caller/route/k1", 2*time.Minute)
		require.NoError(t, err)
		assert.Equal(t, store.IdemDone, state)
		assert.Equal(t, hash, gotHash)
		assert.Equal(t, answer, got)

		var raw string
		require.NoError(t, db.SQL().QueryRowContext(ctx, `SELECT answer FROM idempotency_answers`).Scan(&raw))
		assert.NotContains(t, raw, "c2tfZGV2X1NFQ1JFVA", "the answer is sealed at rest")

		now = now.Add(2 * time.Hour)
		n, err := s.PruneIdempotency(ctx)
		require.NoError(t, err)
		assert.EqualValues(t, 1, n)
	})
}
