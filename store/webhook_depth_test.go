package store_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
	"github.com/healthagents/healthagents/webhook"
)

// TestPendingDeliveries: the outbox depth counts pending deliveries only;
// a delivered one leaves it.
func TestPendingDeliveries(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		st, err := store.NewWebhookStore(db)
		require.NoError(t, err)
		count := func() int {
			n, err := st.PendingDeliveries(t.Context())
			require.NoError(t, err)
			return n
		}
		require.Zero(t, count())
		hookEndpoint(t, st, "ep_a", "own_a")
		hookEndpoint(t, st, "ep_b", "own_a")
		hookMessage(t, st, "msg_1", "own_a", hookT0)
		require.Equal(t, 2, count(), "one delivery per subscribed endpoint")
		jobs := claim(t, st, "h1", hookT0, 10, 10)
		require.Len(t, jobs, 2)
		require.NoError(t, st.Finish(t.Context(), webhook.Outcome{Job: jobs[0], Holder: "h1", Now: hookT0, Delivered: true,
			Attempt: webhook.Attempt{ID: "att_1", MessageID: jobs[0].MessageID, EndpointID: jobs[0].EndpointID, Event: jobs[0].Event,
				Number: 1, At: hookT0, StatusCode: 200, Result: webhook.ResultDelivered}}))
		require.Equal(t, 1, count(), "the delivered one left the outbox")
	})
}
