package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
	"github.com/healthagents/healthagents/webhook"
)

// ownedEvent is e on behalf of owner, as the Service emits it.
func ownedEvent(owner string, e healthagents.Event) healthagents.Event {
	e.Owner = owner
	return e
}

// hangingReceiver holds every request open until released, and counts the
// requests in flight per path.
type hangingReceiver struct {
	*httptest.Server
	release chan struct{}
	once    sync.Once
	mu      sync.Mutex
	cur     map[string]int
	max     map[string]int
	total   int
}

func newHangingReceiver(t *testing.T) *hangingReceiver {
	h := &hangingReceiver{release: make(chan struct{}), cur: map[string]int{}, max: map[string]int{}}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // so the server notices the client hanging up
		h.mu.Lock()
		h.cur[r.URL.Path]++
		h.max[r.URL.Path] = max(h.max[r.URL.Path], h.cur[r.URL.Path])
		h.total++
		h.mu.Unlock()
		select {
		case <-h.release:
		case <-r.Context().Done():
		}
		h.mu.Lock()
		h.cur[r.URL.Path]--
		h.mu.Unlock()
	}))
	t.Cleanup(h.Close)
	t.Cleanup(h.free) // runs first: the hung requests end, then the server closes
	return h
}

func (h *hangingReceiver) free() { h.once.Do(func() { close(h.release) }) }

func (h *hangingReceiver) stats() (total int, maxPerPath map[string]int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := map[string]int{}
	for k, v := range h.max {
		m[k] = v
	}
	return h.total, m
}

// One owner's receivers hang (older events, three endpoints, more than
// enough to fill every attempt slot); another owner's events are delivered
// meanwhile by the running dispatcher, and no endpoint ever has more than
// two deliveries in flight.
func TestHangingReceiverDoesNotDelayAnotherOwner(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		e := newEnv(t, db, webhook.WithTenants(), webhook.WithConcurrency(4), webhook.WithEndpointConcurrency(2),
			webhook.WithTimeout(time.Minute), webhook.WithPollInterval(20*time.Millisecond))
		slow := newHangingReceiver(t)
		fast := newReceiver(t)
		ctx := t.Context()
		for _, p := range []string{"/a1", "/a2", "/a3"} {
			_, err := e.reg.Create(ctx, "org:slow", webhook.CreateRequest{URL: slow.URL + p, Events: webhook.Events()})
			require.NoError(t, err)
		}
		_, err := e.reg.Create(ctx, "org:fast", webhook.CreateRequest{URL: fast.URL, Events: webhook.Events()})
		require.NoError(t, err)
		for i := range 5 {
			require.NoError(t, e.reg.Emit(ctx, ownedEvent("org:slow", eligibilityEvent("PT-S"+itoa(i)))))
		}
		e.clock.Advance(time.Second) // the other owner's events are newer
		for i := range 3 {
			require.NoError(t, e.reg.Emit(ctx, ownedEvent("org:fast", eligibilityEvent("PT-F"+itoa(i)))))
		}

		require.NoError(t, e.disp.Start(ctx))
		require.Eventually(t, func() bool { return len(fast.requests()) == 3 }, 15*time.Second, 10*time.Millisecond,
			"the other owner's events arrive while the slow receiver holds its requests")
		// The slow receiver holds every request it gets until free, so
		// its deliveries show once their requests reach it (they may land
		// after the fast receiver's, whose answers are immediate).
		require.Eventually(t, func() bool { total, _ := slow.stats(); return total > 0 }, 15*time.Second, 10*time.Millisecond,
			"the slow receiver was being delivered to")
		_, perPath := slow.stats()
		for p, n := range perPath {
			assert.LessOrEqual(t, n, 2, "at most two deliveries in flight to %s", p)
		}
		slow.free()
		require.NoError(t, e.disp.Close())
	})
}

// queueThatTakesLong advances the clock after claiming, as a slow claim
// transaction or a paused process would.
type queueThatTakesLong struct {
	webhook.Queue
	once  sync.Once
	after func()
}

func (q *queueThatTakesLong) Claim(ctx context.Context, p webhook.ClaimParams) ([]webhook.Job, error) {
	jobs, err := q.Queue.Claim(ctx, p)
	q.once.Do(q.after)
	return jobs, err
}

// An attempt is never started with less than timeout + LeaseMargin of its
// lease left: another dispatcher could take the delivery over mid-attempt.
// The delivery goes once the lease has run out, under its webhook-id.
func TestAttemptIsNotStartedOnANearlyExpiredLease(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		e := newEnv(t, db)
		rc := newReceiver(t)
		ep := e.register(t, rc.URL)
		require.NoError(t, e.reg.Emit(t.Context(), eligibilityEvent("PT-1")))
		const timeout, lease = 10 * time.Second, 40 * time.Second
		q := &queueThatTakesLong{Queue: e.st, after: func() { e.clock.Advance(lease - timeout - webhook.LeaseMargin + time.Second) }}
		disp, err := webhook.NewDispatcher(q, webhook.AllowHTTP(), webhook.AllowLoopback(), webhook.WithClock(e.clock.Now),
			webhook.WithTimeout(timeout), webhook.WithLease(lease))
		require.NoError(t, err)
		n, err := disp.RunOnce(t.Context())
		require.NoError(t, err)
		assert.Zero(t, n, "claimed, but not attempted")
		assert.Empty(t, rc.requests())
		assert.Empty(t, e.attempts(t, ep.ID))

		e.clock.Advance(lease)
		n, err = disp.RunOnce(t.Context())
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		require.Len(t, rc.requests(), 1)
		assert.Equal(t, webhook.ResultDelivered, e.attempts(t, ep.ID)[0].Result)
	})
}

func TestLeaseMustCoverTheAttempt(t *testing.T) {
	t.Parallel()
	st := newEnv(t, storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)})).st
	_, err := webhook.NewDispatcher(st, webhook.WithTimeout(10*time.Second), webhook.WithLease(24*time.Second))
	assert.ErrorContains(t, err, "lease")
	_, err = webhook.NewDispatcher(st, webhook.WithLease(5*time.Second)) // default 10 s timeout
	assert.ErrorContains(t, err, "lease")
	// Exactly timeout + LeaseMargin: no attempt could ever start (the
	// lease runs from before the claim), so it is refused.
	_, err = webhook.NewDispatcher(st, webhook.WithTimeout(10*time.Second), webhook.WithLease(10*time.Second+webhook.LeaseMargin))
	assert.ErrorContains(t, err, "lease")
	_, err = webhook.NewDispatcher(st, webhook.WithTimeout(10*time.Second), webhook.WithLease(11*time.Second+webhook.LeaseMargin))
	assert.NoError(t, err)
}

// The shortest lease NewDispatcher accepts is one a dispatcher on the
// real clock delivers with.
func TestShortestLeaseDelivers(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		e := newEnv(t, db)
		rc := newReceiver(t)
		ep := e.register(t, rc.URL)
		require.NoError(t, e.reg.Emit(t.Context(), eligibilityEvent("PT-1")))
		const timeout = time.Second
		var lease time.Duration
		for d := timeout + webhook.LeaseMargin; lease == 0; d += 100 * time.Millisecond {
			if _, err := webhook.NewDispatcher(e.st, webhook.WithTimeout(timeout), webhook.WithLease(d)); err == nil {
				lease = d
			}
		}
		disp, err := webhook.NewDispatcher(e.st, webhook.AllowHTTP(), webhook.AllowLoopback(), webhook.WithTimeout(timeout), webhook.WithLease(lease))
		require.NoError(t, err)
		n, err := disp.RunOnce(t.Context())
		require.NoError(t, err)
		assert.Equal(t, 1, n, "attempted with a lease of %v", lease)
		require.Len(t, rc.requests(), 1)
		assert.Equal(t, webhook.ResultDelivered, e.attempts(t, ep.ID)[0].Result)
	})
}

// lockedRand is a deterministic, goroutine-safe random source.
type lockedRand struct {
	mu sync.Mutex
	r  *rand.ChaCha8
}

func (l *lockedRand) Read(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Read(p)
}

// Retry delays are spread by up to ±20 % (deterministically here, from a
// seeded source); a Retry-After is still honoured exactly.
func TestRetryDelaysAreJittered(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		src := &lockedRand{r: rand.NewChaCha8([32]byte{7})}
		e := newEnv(t, db, webhook.WithJitter(0.2), webhook.WithRandom(src), webhook.WithEndpointConcurrency(100))
		rc := newReceiver(t)
		ep := e.register(t, rc.URL)
		const n = 20
		for range n {
			rc.reply(500)
		}
		for i := range n {
			require.NoError(t, e.reg.Emit(t.Context(), eligibilityEvent("PT-"+itoa(i))))
		}
		assert.Equal(t, n, e.runOnce(t))
		delays := map[time.Duration]bool{}
		for _, a := range e.attempts(t, ep.ID) {
			require.Equal(t, webhook.ResultRetrying, a.Result)
			d := a.NextAttempt.Sub(a.At)
			assert.GreaterOrEqual(t, d, 4*time.Second)
			assert.LessOrEqual(t, d, 6*time.Second)
			delays[d] = true
		}
		assert.Greater(t, len(delays), n/2, "the 5 s step is spread, not repeated: %v", delays)

		rc2 := newReceiver(t)
		ep2 := e.register(t, rc2.URL, healthagents.EventPrescriptionValidated)
		rc2.reply(503, "Retry-After", "120")
		require.NoError(t, e.reg.Emit(t.Context(), healthagents.Event{Type: healthagents.EventPrescriptionValidated, PatientID: "PT-R"}))
		e.clock.Advance(time.Second) // the first 20 are not due yet
		assert.Equal(t, 1, e.runOnce(t))
		a := e.attempts(t, ep2.ID)[0]
		assert.Equal(t, 120*time.Second, a.NextAttempt.Sub(a.At), "Retry-After beats the jittered step, unchanged")
	})
}

// A reply header beyond MaxResponseHeaderBytes fails the attempt.
func TestOversizedReplyHeaderFailsTheAttempt(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		e := newEnv(t, db)
		rc := newReceiver(t)
		ep := e.register(t, rc.URL)
		rc.reply(200, "X-Padding", strings.Repeat("a", webhook.MaxResponseHeaderBytes+1024))
		require.NoError(t, e.reg.Emit(t.Context(), eligibilityEvent("PT-1")))
		assert.Equal(t, 1, e.runOnce(t))
		a := e.attempts(t, ep.ID)[0]
		assert.Zero(t, a.StatusCode)
		assert.Equal(t, webhook.ClassConnection, a.Error)
		assert.Equal(t, webhook.ResultRetrying, a.Result)
		e.clock.Advance(5 * time.Second)
		assert.Equal(t, 1, e.runOnce(t))
		assert.Equal(t, webhook.ResultDelivered, e.attempts(t, ep.ID)[0].Result)
	})
}

func TestDefaultScheduleIsSvixs(t *testing.T) {
	t.Parallel()
	assert.Equal(t, []time.Duration{0, 5 * time.Second, 5 * time.Minute, 30 * time.Minute,
		2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}, webhook.DefaultSchedule())
}

// One message through every attempt of the default schedule, each due
// exactly at its step and not a second before, then failed for good.
func TestAMessageGoesThroughTheWholeScheduleToFailed(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		e := newEnv(t, db)
		rc := newReceiver(t)
		ep := e.register(t, rc.URL)
		for range 20 {
			rc.reply(500)
		}
		require.NoError(t, e.reg.Emit(t.Context(), eligibilityEvent("PT-1")))
		for i, step := range webhook.DefaultSchedule() {
			if step > 0 {
				e.clock.Advance(step - time.Second)
				assert.Zero(t, e.runOnce(t), "attempt %d not due a second early", i+1)
				e.clock.Advance(time.Second)
			}
			assert.Equal(t, 1, e.runOnce(t), "attempt %d", i+1)
		}
		e.clock.Advance(24 * time.Hour)
		assert.Zero(t, e.runOnce(t), "no ninth attempt")
		as := e.attempts(t, ep.ID)
		require.Len(t, as, 8)
		assert.Equal(t, webhook.ResultFailed, as[0].Result)
		assert.Equal(t, 8, as[0].Number)
		assert.Zero(t, as[0].NextAttempt)
		for _, a := range as[1:] {
			assert.Equal(t, webhook.ResultRetrying, a.Result)
		}
		ids := map[string]bool{}
		for _, r := range rc.requests() {
			ids[r.Header.Get("webhook-id")] = true
		}
		assert.Len(t, ids, 1, "every attempt under one webhook-id")
		got, err := e.reg.Get(t.Context(), owner, ep.ID)
		require.NoError(t, err)
		assert.Equal(t, webhook.StatusActive, got.Status, "27.5 h of failures is short of the 5 days that disable")
	})
}

// A receiver that never answers gets a recorded timeout and a retry.
func TestHangingReceiverTimesOutAndIsRetried(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		e := newEnv(t, db, webhook.WithTimeout(200*time.Millisecond))
		var hang atomic.Bool
		hang.Store(true)
		var ids []string
		var mu sync.Mutex
		rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body) // so the server notices the client hanging up
			mu.Lock()
			ids = append(ids, r.Header.Get("webhook-id"))
			mu.Unlock()
			if hang.Load() {
				<-r.Context().Done()
			}
		}))
		t.Cleanup(rc.Close)
		ep := e.register(t, rc.URL)
		require.NoError(t, e.reg.Emit(t.Context(), eligibilityEvent("PT-1")))
		assert.Equal(t, 1, e.runOnce(t))
		a := e.attempts(t, ep.ID)[0]
		assert.Equal(t, webhook.ClassTimeout, a.Error)
		assert.Zero(t, a.StatusCode)
		assert.Equal(t, webhook.ResultRetrying, a.Result)
		assert.Equal(t, a.At.Add(5*time.Second), a.NextAttempt)

		hang.Store(false)
		e.clock.Advance(5 * time.Second)
		assert.Equal(t, 1, e.runOnce(t))
		assert.Equal(t, webhook.ResultDelivered, e.attempts(t, ep.ID)[0].Result)
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, ids, 2)
		assert.Equal(t, ids[0], ids[1])
	})
}

// The same patient has a different data.patient_id towards each owner,
// stable for one owner, and each is OwnerPseudonym of the deployment-wide
// reference (the audit log's patient_ref).
func TestPatientPseudonymsDifferPerOwner(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		e := newEnv(t, db, webhook.WithTenants())
		rcA, rcB := newReceiver(t), newReceiver(t)
		ctx := t.Context()
		_, err := e.reg.Create(ctx, "org:a", webhook.CreateRequest{URL: rcA.URL, Events: webhook.Events()})
		require.NoError(t, err)
		_, err = e.reg.Create(ctx, "org:b", webhook.CreateRequest{URL: rcB.URL, Events: webhook.Events()})
		require.NoError(t, err)
		for range 2 {
			require.NoError(t, e.reg.Emit(ctx, ownedEvent("org:a", eligibilityEvent("PT-SAME"))))
		}
		require.NoError(t, e.reg.Emit(ctx, ownedEvent("org:b", eligibilityEvent("PT-SAME"))))
		assert.Equal(t, 3, e.runOnce(t))
		pid := func(r received) string {
			var p struct {
				Data struct {
					PatientID string `json:"patient_id"`
				} `json:"data"`
			}
			require.NoError(t, json.Unmarshal(r.Body, &p))
			return p.Data.PatientID
		}
		a, b := rcA.requests(), rcB.requests()
		require.Len(t, a, 2)
		require.Len(t, b, 1)
		assert.Equal(t, pid(a[0]), pid(a[1]), "stable for one owner")
		assert.NotEqual(t, pid(a[0]), pid(b[0]), "different between owners")

		key, err := e.st.PseudonymKey(ctx, nil)
		require.NoError(t, err)
		m := hmac.New(sha256.New, key)
		m.Write([]byte("PT-SAME"))
		ref := hex.EncodeToString(m.Sum(nil))
		assert.Equal(t, webhook.OwnerPseudonym(ref, "org:a"), pid(a[0]))
		assert.Equal(t, webhook.OwnerPseudonym(ref, "org:b"), pid(b[0]))
		assert.NotEqual(t, ref, pid(a[0]))
	})
}

// The 101st endpoint of an owner is a 400; another owner is unaffected.
func TestEndpointCapPerOwner(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)}))
	for range webhook.MaxEndpointsPerOwner {
		e.register(t, "http://127.0.0.1:9/")
	}
	_, err := e.reg.Create(t.Context(), owner, webhook.CreateRequest{URL: "http://127.0.0.1:9/", Events: webhook.Events()})
	require.Error(t, err)
	assert.ErrorIs(t, err, webhook.ErrInvalid)
	assert.Equal(t, healthagents.CodeInvalid, healthagents.ErrorCode(err))
	assert.Contains(t, healthagents.ErrorDetail(err), "at most 100 endpoints")
	_, err = e.reg.Create(t.Context(), "org-other", webhook.CreateRequest{URL: "http://127.0.0.1:9/", Events: webhook.Events()})
	assert.NoError(t, err)
}
