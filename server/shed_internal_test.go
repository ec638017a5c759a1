package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// blockingHandler answers 200 once release is closed, reporting each
// request that started on entered.
func blockingHandler(entered chan<- struct{}, release <-chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		w.WriteHeader(http.StatusOK)
	})
}

// eventually polls cond until it holds (the test's own deadline bounds it).
func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	for !cond() {
		if t.Context().Err() != nil {
			t.Fatal("condition never held")
		}
		time.Sleep(time.Millisecond)
	}
}

func serveAsync(h http.Handler, r *http.Request) <-chan *httptest.ResponseRecorder {
	out := make(chan *httptest.ResponseRecorder, 1)
	go func() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		out <- w
	}()
	return out
}

func requireShed(t *testing.T, w *httptest.ResponseRecorder) {
	t.Helper()
	require.Equal(t, http.StatusServiceUnavailable, w.Code)
	assert.Equal(t, "1", w.Header().Get("Retry-After"))
	assert.JSONEq(t, `{"detail":"Service temporarily unavailable"}`, w.Body.String())
}

func TestAdmissionQueueThenShed(t *testing.T) {
	t.Parallel()
	a := newAdmission(admissionOptions{maxInFlight: 1, maxQueue: 1, queueSet: true, maxWait: time.Hour})
	entered, release := make(chan struct{}, 8), make(chan struct{})
	h := a.admit(blockingHandler(entered, release))

	first := serveAsync(h, httptest.NewRequest("POST", "/", nil))
	<-entered // the slot is taken
	queued := serveAsync(h, httptest.NewRequest("POST", "/", nil))
	eventually(t, func() bool { return a.waiting.Load() == 1 })

	// Slot and queue are full: shed at once, while the others still block.
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", "/", nil))
	requireShed(t, w)
	assert.Empty(t, entered, "a shed request never reaches the handler")

	close(release)
	assert.Equal(t, http.StatusOK, (<-first).Code)
	<-entered
	assert.Equal(t, http.StatusOK, (<-queued).Code, "the queued request runs once the slot frees")
	assert.Zero(t, a.waiting.Load())

	// Afterwards the gate admits again.
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", "/", nil))
	<-entered
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Empty(t, a.slots, "every slot is given back")
}

func TestAdmissionWaitIsBounded(t *testing.T) {
	t.Parallel()
	a := newAdmission(admissionOptions{maxInFlight: 1, maxQueue: 4, queueSet: true, maxWait: 5 * time.Millisecond})
	entered, release := make(chan struct{}, 8), make(chan struct{})
	h := a.admit(blockingHandler(entered, release))
	first := serveAsync(h, httptest.NewRequest("POST", "/", nil))
	<-entered

	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", "/", nil))
	requireShed(t, w) // the slot never freed within maxWait
	assert.Zero(t, a.waiting.Load())
	close(release)
	assert.Equal(t, http.StatusOK, (<-first).Code)
}

func TestAdmissionClientGoneLeavesQueue(t *testing.T) {
	t.Parallel()
	a := newAdmission(admissionOptions{maxInFlight: 1, maxQueue: 1, queueSet: true, maxWait: time.Hour})
	entered, release := make(chan struct{}, 8), make(chan struct{})
	h := a.admit(blockingHandler(entered, release))
	first := serveAsync(h, httptest.NewRequest("POST", "/", nil))
	<-entered

	ctx, cancel := context.WithCancel(t.Context())
	gone := serveAsync(h, httptest.NewRequest("POST", "/", nil).WithContext(ctx))
	eventually(t, func() bool { return a.waiting.Load() == 1 })
	cancel()
	<-gone
	assert.Zero(t, a.waiting.Load(), "a client that went away frees its queue place")
	assert.Empty(t, entered, "its work never starts")
	close(release)
	assert.Equal(t, http.StatusOK, (<-first).Code)
}

func TestAdmissionDefaults(t *testing.T) {
	t.Parallel()
	var o options
	require.NoError(t, WithMaxInFlight(3)(&o))
	a := newAdmission(o.admission)
	assert.Equal(t, 3, cap(a.slots))
	assert.Equal(t, int64(3*AdmissionQueuePerSlot), a.maxQueue)
	assert.Equal(t, DefaultAdmissionWait, a.maxWait)

	require.NoError(t, WithAdmissionQueue(0, 0)(&o))
	assert.Equal(t, int64(0), newAdmission(o.admission).maxQueue, "an explicit empty queue sheds at once")

	assert.Error(t, WithMaxInFlight(0)(&o))
	assert.Error(t, WithAdmissionQueue(-1, time.Second)(&o))
}

// TestHeavyRoutesExist: the CPU-bound routes, and only they, pass through
// an admission gate, each of a known class.
func TestHeavyRoutesExist(t *testing.T) {
	t.Parallel()
	rs, err := (&srv{}).routeTable()
	require.NoError(t, err)
	heavy := map[string]gateClass{}
	have := map[string]bool{}
	for _, rt := range rs {
		have[rt.Method+" "+rt.Path] = true
		if rt.Gate != "" {
			heavy[rt.Method+" "+rt.Path] = rt.Gate
		}
	}
	assert.Len(t, heavy, 11, "8, the task-scoped gradients and proof keys, and the X12 270")
	for r, class := range heavy {
		assert.Contains(t, []gateClass{classProof, classFederated}, class, r)
	}
	for _, cheap := range []string{"GET /health", "GET /status", "GET /openapi.json", "POST /auth/keys"} {
		assert.True(t, have[cheap], cheap)
		_, isHeavy := heavy[cheap]
		assert.False(t, isHeavy, "%s must stay outside the gates", cheap)
	}
	// The federated routes need no chain: they must not share the proof
	// routes' gate, which a stalled chain can hold for 10 s per request.
	for _, r := range []string{"POST /submit-federated-update", "POST /api/v1/federated/gradients"} {
		assert.Equal(t, classFederated, heavy[r], r)
	}
	for _, r := range []string{"POST /verify-eligibility", "POST /validate-prescription", "POST /api/v1/eligibility/verify", "POST /api/v1/prescriptions/validate", "POST /api/v1/prescriptions/batch-validate"} {
		assert.Equal(t, classProof, heavy[r], r)
	}

	gates := newGates(admissionOptions{maxInFlight: 1})
	require.Len(t, gates, 2)
	assert.NotSame(t, gates[classProof], gates[classFederated], "each class has its own slots")
}
