package app_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

// TestFederatedLeaderLease: two replicas of one database open the
// federated coordinator under the task's lease: the first leads, the
// second answers round operations with 503 and reports the round from the
// database. When the leader stops renewing (its database is cut off: it is
// as good as dead), the second takes the lease over within its ttl and
// resumes the same round; the old leader stops coordinating. A clean Close
// hands over at once.
func TestFederatedLeaderLease(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		ctx := t.Context()
		cfg := federated.Config{DisablePrivacy: true}
		const ttl = 3 * time.Second
		dbA, err := store.Open(ctx, b.DSN)
		require.NoError(t, err)
		a, err := app.OpenFederated(ctx, dbA, cfg, nil, app.WithLeaderLease("replica-a", ttl))
		require.NoError(t, err)
		bf, err := app.OpenFederated(ctx, db, cfg, nil, app.WithLeaderLease("replica-b", ttl))
		require.NoError(t, err)
		t.Cleanup(func() { bf.Close() })

		require.NotNil(t, a.Coordinator, "the first replica leads")
		require.Nil(t, bf.Coordinator, "one coordinator per task")
		stA, err := a.API.Coordinator.Status(ctx)
		require.NoError(t, err)
		stB, err := bf.API.Coordinator.Status(ctx)
		require.NoError(t, err, "a follower reads the round from the database")
		assert.Equal(t, stA.Round, stB.Round)
		assert.Equal(t, stA.Version, stB.Version)
		_, err = bf.API.Coordinator.View(ctx, "org-x")
		var he *healthagents.Error
		require.ErrorAs(t, err, &he)
		assert.Equal(t, healthagents.CodeUnavailable, he.Code)
		assert.Contains(t, he.Detail, "runs on another replica")

		// The leader loses its database: it cannot renew, stops leading
		// before its lease runs out, and the follower takes over.
		require.NoError(t, dbA.Close())
		require.Eventually(t, func() bool {
			_, err := bf.API.Coordinator.View(ctx, "org-x")
			return !errors.Is(err, app.ErrNotLeader)
		}, 10*ttl, 20*time.Millisecond, "taken over within the lease")
		_, err = a.API.Coordinator.View(ctx, "org-x")
		require.ErrorIs(t, err, app.ErrNotLeader, "the old leader stopped coordinating")
		st, err := bf.API.Coordinator.Status(ctx)
		require.NoError(t, err)
		assert.Equal(t, stA.Round, st.Round, "the same round, resumed from the database")
		a.Close()

		// A clean Close hands over at once (long ttl: no expiry involved).
		c, err := app.OpenFederated(ctx, db, cfg, nil, app.WithLeaderLease("replica-c", time.Hour))
		require.NoError(t, err)
		defer c.Close()
		_, err = c.API.Coordinator.View(ctx, "org-x")
		require.ErrorIs(t, err, app.ErrNotLeader)
		bf.Close()
		require.Eventually(t, func() bool {
			_, err := c.API.Coordinator.View(ctx, "org-x")
			return !errors.Is(err, app.ErrNotLeader)
		}, 30*time.Second, 20*time.Millisecond)
	})
}
