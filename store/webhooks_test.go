package store_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
	"github.com/healthagents/healthagents/webhook"
)

func newKeyring(t *testing.T) *cipher.Keyring {
	t.Helper()
	k, err := cipher.GenerateKey()
	require.NoError(t, err)
	kr, err := cipher.ParseKeyring(k)
	require.NoError(t, err)
	return kr
}

var hookT0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// hookEndpoint inserts an active endpoint of owner subscribed to
// eligibility.verified.
func hookEndpoint(t *testing.T, st *store.WebhookStore, id, owner string) {
	t.Helper()
	require.NoError(t, st.InsertEndpoint(t.Context(), webhook.StoredEndpoint{Endpoint: webhook.Endpoint{
		ID: id, URL: "https://hooks.example/" + id, Events: []string{healthagents.EventEligibilityVerified},
		CreatedAt: hookT0, Status: webhook.StatusActive,
	}, Owner: owner, Secret: "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="}, 100))
}

// hookMessage enqueues a message for owner's endpoints, due at at.
func hookMessage(t *testing.T, st *store.WebhookStore, id, owner string, at time.Time) {
	t.Helper()
	n, err := st.Enqueue(t.Context(), webhook.Message{ID: id, Event: healthagents.EventEligibilityVerified, Owner: owner,
		Payload: []byte(`{}`), CreatedAt: at})
	require.NoError(t, err)
	require.Positive(t, n)
}

func claim(t *testing.T, st *store.WebhookStore, holder string, now time.Time, limit, perEndpoint int) []webhook.Job {
	t.Helper()
	jobs, err := st.Claim(t.Context(), webhook.ClaimParams{Holder: holder, Now: now, LeaseUntil: now.Add(time.Minute),
		Limit: limit, PerEndpoint: perEndpoint})
	require.NoError(t, err)
	return jobs
}

// A dispatcher whose lease ran out, and whose delivery another one
// claimed, records its attempt but changes neither the delivery (now the
// other's) nor the endpoint: a 410 it got does not disable the endpoint,
// a failure does not start its failure period.
func TestFinishAfterALostLeaseChangesNothing(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		ctx := t.Context()
		st, err := store.NewWebhookStore(db)
		require.NoError(t, err)
		hookEndpoint(t, st, "ep_1", "org:a")
		hookMessage(t, st, "msg_1", "org:a", hookT0)

		a := claim(t, st, "wrk_a", hookT0, 1, 2)
		require.Len(t, a, 1)
		later := hookT0.Add(2 * time.Minute) // a's lease (1 min) has run out
		b := claim(t, st, "wrk_b", later, 1, 2)
		require.Len(t, b, 1, "the expired lease is taken over")

		outcome := func(holder string, j webhook.Job, n int, now time.Time) webhook.Outcome {
			return webhook.Outcome{Job: j, Holder: holder, Now: now, Attempt: webhook.Attempt{
				ID: "att_" + holder + itoa(n), MessageID: j.MessageID, EndpointID: j.EndpointID, Event: j.Event,
				Number: 1, At: now, Result: webhook.ResultDisabled, StatusCode: 410, Error: webhook.ClassHTTPStatus,
			}}
		}
		gone := outcome("wrk_a", a[0], 1, later)
		gone.Disable = webhook.ReasonGone
		assert.ErrorIs(t, st.Finish(ctx, gone), webhook.ErrLeaseLost)
		failing := outcome("wrk_a", a[0], 2, later)
		failing.Attempt.Result, failing.Attempt.StatusCode, failing.NextAt = webhook.ResultRetrying, 500, later.Add(time.Minute)
		assert.ErrorIs(t, st.Finish(ctx, failing), webhook.ErrLeaseLost)

		ep, err := st.EndpointByID(ctx, "ep_1")
		require.NoError(t, err)
		assert.Equal(t, webhook.StatusActive, ep.Status, "a lost lease's 410 does not disable")
		var (
			holder   string
			attempts int
			failSet  bool
		)
		require.NoError(t, db.SQL().QueryRowContext(ctx, `SELECT d.lease_holder, d.attempts, e.failing_since IS NOT NULL
			FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id`).Scan(&holder, &attempts, &failSet))
		assert.Equal(t, "wrk_b", holder, "the delivery stays with its new holder")
		assert.Zero(t, attempts)
		assert.False(t, failSet, "a lost lease's failure does not start the failure period")
		as, total, err := st.ListAttempts(ctx, "ep_1", webhook.ListParams{Limit: 10})
		require.NoError(t, err)
		assert.Equal(t, 2, total, "the attempts were made, so they are on record")
		assert.Len(t, as, 2)

		ok := outcome("wrk_b", b[0], 3, later)
		ok.Attempt.Result, ok.Attempt.StatusCode, ok.Delivered = webhook.ResultDelivered, 200, true
		require.NoError(t, st.Finish(ctx, ok))
		assert.Empty(t, claim(t, st, "wrk_c", later.Add(time.Hour), 1, 2), "delivered by its holder")
	})
}

// Slots go to the least loaded owner first: an owner whose backlog is
// older and spread over many endpoints does not take every slot.
func TestClaimGivesSlotsToTheLeastLoadedOwner(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		st, err := store.NewWebhookStore(db)
		require.NoError(t, err)
		for _, id := range []string{"ep_a1", "ep_a2", "ep_a3"} {
			hookEndpoint(t, st, id, "org:a")
		}
		hookEndpoint(t, st, "ep_b1", "org:b")
		for i := range 4 {
			hookMessage(t, st, "msg_a"+itoa(i), "org:a", hookT0.Add(time.Duration(i)*time.Second)) // older
		}
		hookMessage(t, st, "msg_b", "org:b", hookT0.Add(time.Minute))
		now := hookT0.Add(time.Hour)

		first := claim(t, st, "wrk_1", now, 1, 2)
		require.Len(t, first, 1)
		assert.Equal(t, "msg_a0", first[0].MessageID, "the oldest due delivery when no one is loaded")
		second := claim(t, st, "wrk_2", now, 1, 2)
		require.Len(t, second, 1)
		assert.Equal(t, "ep_b1", second[0].EndpointID, "org:b has nothing in flight, org:a has one")

		rest := claim(t, st, "wrk_3", now, 100, 2)
		perEndpoint := map[string]int{first[0].EndpointID: 1}
		for _, j := range rest {
			perEndpoint[j.EndpointID]++
		}
		assert.Equal(t, map[string]int{"ep_a1": 2, "ep_a2": 2, "ep_a3": 2}, perEndpoint, "at most two in flight per endpoint")
		assert.Len(t, rest, 5)
	})
}

// The per-owner endpoint cap holds under concurrent inserts from several
// pools (replicas): exactly limit endpoints, the rest refused.
func TestInsertEndpointCapIsAtomic(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		const limit = 5
		st, err := store.NewWebhookStore(db)
		require.NoError(t, err)
		for i := range limit - 2 {
			hookEndpoint(t, st, "ep_seq"+itoa(i), "org:cap")
		}
		const racers = 10
		errs := make([]error, racers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range racers {
			rs, err := store.NewWebhookStore(storetest.Open(t, b))
			require.NoError(t, err)
			wg.Go(func() {
				<-start
				errs[i] = rs.InsertEndpoint(context.Background(), webhook.StoredEndpoint{Endpoint: webhook.Endpoint{
					ID: "ep_race" + itoa(i), URL: "https://hooks.example/", Events: []string{healthagents.EventEligibilityVerified},
					CreatedAt: hookT0, Status: webhook.StatusActive,
				}, Owner: "org:cap", Secret: "s"}, limit)
			})
		}
		close(start)
		wg.Wait()
		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
			} else {
				assert.ErrorIs(t, err, webhook.ErrTooManyEndpoints)
			}
		}
		assert.Equal(t, 2, ok)
		_, total, err := st.ListEndpoints(t.Context(), "org:cap", webhook.ListParams{Limit: 100})
		require.NoError(t, err)
		assert.Equal(t, limit, total)
		hookEndpoint(t, st, "ep_other", "org:other") // another owner is not affected
	})
}

// With a sealer the pseudonym key is kept sealed; every store with the
// same sealer reads the same key, one without it reads nothing.
func TestPseudonymKeyIsSealedAtRest(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		ctx := t.Context()
		kr := newKeyring(t)
		st, err := store.NewWebhookStore(db, store.WithKeySealer(kr))
		require.NoError(t, err)
		cand := []byte(strings.Repeat("k", 32))
		key, err := st.PseudonymKey(ctx, cand)
		require.NoError(t, err)
		assert.Equal(t, cand, key)
		again, err := st.PseudonymKey(ctx, []byte(strings.Repeat("x", 32)))
		require.NoError(t, err)
		assert.Equal(t, cand, again, "the first key is kept")

		v := storedPseudonymKey(t, db)
		assert.True(t, strings.HasPrefix(v, "sealed:"), v)
		assert.NotContains(t, v, "6b6b6b6b", "no hex of the key")

		as, err := store.NewAuditStore(db, store.WithKeySealer(kr))
		require.NoError(t, err)
		ak, err := as.PseudonymKey(ctx, nil)
		require.NoError(t, err)
		assert.Equal(t, cand, ak, "the audit log reads the same key")

		blind, err := store.NewWebhookStore(db)
		require.NoError(t, err)
		_, err = blind.PseudonymKey(ctx, cand)
		assert.ErrorContains(t, err, "sealed")
		other, err := store.NewWebhookStore(db, store.WithKeySealer(newKeyring(t)))
		require.NoError(t, err)
		_, err = other.PseudonymKey(ctx, cand)
		assert.Error(t, err, "another keyring cannot open it")
	})
}

// A key kept in clear (hex) by an earlier version is sealed in place the
// first time a store with a sealer reads it, and keeps its value.
func TestPlaintextPseudonymKeyIsSealedOnFirstUse(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		ctx := t.Context()
		old := strings.Repeat("ab", 32)
		_, err := db.SQL().ExecContext(ctx, db.Rebind(`INSERT INTO webhook_settings (name, value) VALUES ('pseudonym_key', ?)`), old)
		require.NoError(t, err)
		plain, err := store.NewWebhookStore(db)
		require.NoError(t, err)
		before, err := plain.PseudonymKey(ctx, []byte(strings.Repeat("x", 32)))
		require.NoError(t, err)

		kr := newKeyring(t)
		st, err := store.NewWebhookStore(db, store.WithKeySealer(kr))
		require.NoError(t, err)
		key, err := st.PseudonymKey(ctx, []byte(strings.Repeat("x", 32)))
		require.NoError(t, err)
		assert.Equal(t, before, key, "the same key, so pseudonyms do not change")
		v := storedPseudonymKey(t, db)
		assert.True(t, strings.HasPrefix(v, "sealed:"), "sealed in place: %s", v)
		assert.NotContains(t, v, old)
		key, err = st.PseudonymKey(ctx, nil)
		require.NoError(t, err)
		assert.Equal(t, before, key)
	})
}

func storedPseudonymKey(t *testing.T, db *store.DB) string {
	t.Helper()
	var v string
	require.NoError(t, db.SQL().QueryRowContext(t.Context(), `SELECT value FROM webhook_settings WHERE name = 'pseudonym_key'`).Scan(&v))
	return v
}

// Prune drops the undelivered messages of an endpoint disabled longer than
// the retention period ago, and only those.
func TestPruneDropsPendingOfLongDisabledEndpoints(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		ctx := t.Context()
		st, err := store.NewWebhookStore(db)
		require.NoError(t, err)
		hookEndpoint(t, st, "ep_gone", "org:a")
		hookEndpoint(t, st, "ep_live", "org:a")
		hookMessage(t, st, "msg_1", "org:a", hookT0)
		hookMessage(t, st, "msg_2", "org:a", hookT0)
		jobs := claim(t, st, "wrk", hookT0, 10, 2)
		var gone webhook.Job
		for _, j := range jobs {
			if j.EndpointID == "ep_gone" && j.MessageID == "msg_1" {
				gone = j
			}
		}
		require.Equal(t, "msg_1", gone.MessageID)
		require.NoError(t, st.Finish(ctx, webhook.Outcome{Job: gone, Holder: "wrk", Now: hookT0, Disable: webhook.ReasonGone,
			Attempt: webhook.Attempt{ID: "att_1", MessageID: "msg_1", EndpointID: "ep_gone", Event: gone.Event, Number: 1, At: hookT0,
				StatusCode: 410, Result: webhook.ResultDisabled}}))

		pending := func(ep string) int {
			var n int
			require.NoError(t, db.SQL().QueryRowContext(ctx, db.Rebind(`SELECT COUNT(*) FROM webhook_deliveries WHERE endpoint_id = ? AND state = 'pending'`), ep).Scan(&n))
			return n
		}
		n, err := st.Prune(ctx, hookT0.Add(-time.Hour))
		require.NoError(t, err)
		assert.Zero(t, n, "disabled after the cut-off: kept")
		assert.Equal(t, 2, pending("ep_gone"))

		n, err = st.Prune(ctx, hookT0.Add(time.Hour))
		require.NoError(t, err)
		assert.Equal(t, 3, n, "the attempt and the disabled endpoint's two pending messages")
		assert.Zero(t, pending("ep_gone"))
		assert.Equal(t, 2, pending("ep_live"), "an active endpoint's pending messages stay")
	})
}

func itoa(i int) string { return strconv.Itoa(i) }
