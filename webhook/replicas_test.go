package webhook_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
	"github.com/healthagents/healthagents/webhook"
)

// TestTwoDispatchersDeliverOnce: two replicas' dispatchers, each on its own
// pool of one database and polling every few milliseconds, work one outbox
// of 60 messages for 3 endpoints while both replicas emit: every message
// reaches every subscribed endpoint exactly once (by webhook-id) and none
// is left pending: the claims (FOR UPDATE SKIP LOCKED under a lease on
// PostgreSQL, the write lock on SQLite) keep a delivery to one replica.
func TestTwoDispatchersDeliverOnce(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, b storetest.Backend, _ *store.DB) {
		ctx := t.Context()
		opts := []webhook.Option{webhook.AllowHTTP(), webhook.AllowLoopback(), webhook.WithPollInterval(5 * time.Millisecond)}
		rc := newReceiver(t)
		type replica struct {
			reg  *webhook.Registry
			disp *webhook.Dispatcher
		}
		var rs []replica
		for range 2 {
			st, err := store.NewWebhookStore(storetest.Open(t, b)) // a replica has its own pool
			require.NoError(t, err)
			disp, err := webhook.NewDispatcher(st, opts...)
			require.NoError(t, err)
			reg, err := webhook.NewRegistry(st, append(opts, webhook.WithEnqueueHook(disp.Notify))...)
			require.NoError(t, err)
			rs = append(rs, replica{reg, disp})
		}
		const endpoints, messages = 3, 60
		for range endpoints {
			_, err := rs[0].reg.Create(ctx, owner, webhook.CreateRequest{URL: rc.URL, Events: webhook.Events()})
			require.NoError(t, err)
		}
		for _, r := range rs {
			require.NoError(t, r.disp.Start(ctx))
			t.Cleanup(func() { r.disp.Close() })
		}
		for i := range messages {
			require.NoError(t, rs[i%2].reg.Emit(ctx, eligibilityEvent("PT-"+itoa(i))))
		}
		require.Eventually(t, func() bool { return len(rc.requests()) >= endpoints*messages }, 60*time.Second, 10*time.Millisecond)
		time.Sleep(100 * time.Millisecond) // a duplicate would arrive now
		got := rc.requests()
		assert.Len(t, got, endpoints*messages)
		perID := map[string]int{}
		for _, r := range got {
			perID[r.Header.Get("webhook-id")]++
		}
		assert.Len(t, perID, messages)
		for id, n := range perID {
			assert.Equal(t, endpoints, n, "message %s: one delivery per endpoint", id)
		}
		db := storetest.Open(t, b)
		var pending int
		require.NoError(t, db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM webhook_deliveries WHERE state <> 'delivered'`).Scan(&pending))
		assert.Zero(t, pending)
	})
}
