package store_test

import (
	"crypto/sha256"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

func stored(id string, created time.Time) apikey.StoredKey {
	return apikey.StoredKey{
		Key: apikey.Key{
			ID: id, Env: apikey.Live, Tier: apikey.Pro, Scopes: []apikey.Scope{apikey.ScopeEligibility},
			AllowedIPs: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, CreatedAt: created, Lineage: id,
		},
		Hash: sha256.Sum256([]byte(id)),
	}
}

func TestKeyStoreRoundTrip(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		ctx := t.Context()
		ks, err := store.NewKeyStore(db)
		require.NoError(t, err)
		now := time.Date(2026, 11, 21, 12, 0, 0, 123000, time.UTC)
		in := stored("AAAAAAAAAA", now)
		require.NoError(t, ks.InsertKey(ctx, in))
		require.ErrorIs(t, ks.InsertKey(ctx, in), apikey.ErrConflict)
		out, err := ks.KeyByID(ctx, in.ID)
		require.NoError(t, err)
		assert.Equal(t, in, out, "every field survives the round trip")
		_, err = ks.KeyByID(ctx, "BBBBBBBBBB")
		require.ErrorIs(t, err, apikey.ErrNotFound)

		// Two concurrent rotations of one key: exactly one successor.
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() {
				next := stored(string(rune('C'+i))+"000000000", now)
				errs[i] = ks.RotateKey(ctx, in.ID, now.Add(24*time.Hour), next)
			})
		}
		wg.Wait()
		wins := 0
		for _, err := range errs {
			if err == nil {
				wins++
			} else {
				require.ErrorIs(t, err, apikey.ErrNotFound)
			}
		}
		require.Equal(t, 1, wins)
		_, total, err := ks.ListKeys(ctx, apikey.ListOptions{Limit: 100})
		require.NoError(t, err)
		assert.Equal(t, 2, total, "the losers inserted nothing")
		old, err := ks.KeyByID(ctx, in.ID)
		require.NoError(t, err)
		assert.Equal(t, now.Add(24*time.Hour), old.ExpiresAt)
		assert.NotEmpty(t, old.RotatedTo)

		// Usage of a key that no longer exists is skipped, not an error.
		require.NoError(t, ks.AddUsage(ctx, []apikey.UsageCount{
			{KeyID: in.ID, Minute: 10, Bucket: 3, Requests: 2, Errors: 1},
			{KeyID: "ZZZZZZZZZZ", Minute: 10, Bucket: 3, Requests: 5},
		}))
		require.NoError(t, ks.AddUsage(ctx, []apikey.UsageCount{{KeyID: in.ID, Minute: 11, Bucket: 3, Requests: 1}}))
		counts, err := ks.UsageCounts(ctx, in.ID, 10, 11)
		require.NoError(t, err)
		assert.Equal(t, []apikey.UsageCount{{KeyID: in.ID, Bucket: 3, Requests: 3, Errors: 1}}, counts)
	})
}
