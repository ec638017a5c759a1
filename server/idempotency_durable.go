package server

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// IdempotencyStore keeps Idempotency-Key answers across restarts and
// replicas; package store implements it (store.IdempotencyStore). id names
// the caller, the route and the key; answer is opaque to the store.
type IdempotencyStore interface {
	// Claim leases id's first attempt for ttl and returns "claimed", or
	// reports an unexpired record: "running", or "done" with the first
	// request's body hash and answer.
	Claim(ctx context.Context, id string, ttl time.Duration) (state string, bodyHash [32]byte, answer []byte, err error)
	// Complete keeps the answer for keep.
	Complete(ctx context.Context, id string, bodyHash [32]byte, answer []byte, keep time.Duration) error
	// Release drops a claim whose answer is not replayable.
	Release(ctx context.Context, id string) error
}

// idempotencyLease bounds how long a claim of a first attempt holds when
// its process dies before answering: longer than any request runs (proof
// 5 s, chain 10 s, the server's write timeout), short enough that a retry
// after a crash is served within minutes.
const idempotencyLease = 2 * time.Minute

// keptAnswer is the stored form of a replayable answer.
type keptAnswer struct {
	Status int         `json:"status"`
	Header http.Header `json:"header"`
	Body   []byte      `json:"body"`
}

// claimDurable asks the store about id's first attempt (e is this
// process's fresh entry). done reports that the request was answered here:
// replayed from the store, refused while another replica runs it (409), or
// 503 when the store fails. durable reports a claim to complete later.
func (s *srv) claimDurable(w http.ResponseWriter, r *http.Request, e *idemEntry, id string) (durable, done bool) {
	state, bodyHash, answer, err := s.deps.Idempotency.Claim(r.Context(), id, idempotencyLease)
	switch {
	case err != nil:
		s.logger.ErrorContext(r.Context(), "idempotency store failed", "err", err)
		s.idem.abandon(e)
		writeDetail(w, http.StatusServiceUnavailable, detailUnavailable)
		return false, true
	case state == "running":
		s.idem.abandon(e)
		w.Header().Set("Retry-After", "1")
		writeDetail(w, http.StatusConflict, "Idempotency-Key: the first request with this key is still running; retry later")
		return false, true
	case state == "done":
		var a keptAnswer
		if err := json.Unmarshal(answer, &a); err != nil {
			s.idem.abandon(e)
			writeDetail(w, http.StatusServiceUnavailable, detailUnavailable)
			return false, true
		}
		s.idem.fill(e, a.Status, a.Header, a.Body, bodyHash)
		sum, err := hashBody(w, r)
		if err != nil {
			s.writeError(w, r, err)
			return false, true
		}
		if sum != bodyHash {
			writeDetail(w, http.StatusUnprocessableEntity, "Idempotency-Key was already used with a different request body")
			return false, true
		}
		replay(w, a.Status, a.Header, a.Body)
		return false, true
	}
	return true, false
}

// completeDurable stores the first attempt's answer, or releases the claim
// when the answer is not replayable.
func (s *srv) completeDurable(r *http.Request, e *idemEntry, id string) {
	ctx := context.WithoutCancel(r.Context())
	if !e.stored {
		if err := s.deps.Idempotency.Release(ctx, id); err != nil {
			s.logger.WarnContext(ctx, "idempotency claim not released", "err", err)
		}
		return
	}
	b, err := json.Marshal(keptAnswer{Status: e.status, Header: e.header, Body: e.body})
	if err == nil {
		err = s.deps.Idempotency.Complete(ctx, id, e.bodyHash, b, idempotencyTTL)
	}
	if err != nil {
		s.logger.WarnContext(ctx, "idempotency answer not kept in the database", "err", err)
	}
}

// replay writes a kept answer, marked as replayed.
func replay(w http.ResponseWriter, status int, header http.Header, body []byte) {
	h := w.Header()
	for k, v := range header {
		h[k] = v
	}
	h.Set("Idempotent-Replayed", "true")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// abandon ends e without an answer: local waiters serve afresh.
func (m *idempotency) abandon(e *idemEntry) {
	m.mu.Lock()
	m.remove(e)
	m.mu.Unlock()
	close(e.done)
}

// fill ends e with an answer read from the store, so local retries replay
// it too.
func (m *idempotency) fill(e *idemEntry, status int, header http.Header, body []byte, bodyHash [32]byte) {
	m.mu.Lock()
	e.stored, e.status, e.header, e.body, e.bodyHash = true, status, header, body, bodyHash
	m.mu.Unlock()
	close(e.done)
}
