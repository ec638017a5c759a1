package server

import (
	"bytes"
	"container/list"
	"crypto/sha256"
	"io"
	"net/http"
	"sync"
	"time"
)

// Idempotency-Key handling, as payment APIs do it: the first answer to a
// POST carrying `Idempotency-Key` is kept for a while and replayed to a
// retry with the same key from the same caller, so a retried request never
// repeats work (a second proof and chain transaction, a second key). A
// retry that arrives while the first is still running waits for it. The
// same key with a different body is refused with 422.
//
// Answers are kept in process memory, bounded in number and time: a retry
// reaching another replica is served afresh (documented in decisions.md).

const (
	idempotencyHeader = "Idempotency-Key"
	maxIdempotencyKey = 255
	idempotencyTTL    = time.Hour
	idempotencyMax    = 10000
	maxReplayBody     = 256 << 10
)

type idemEntry struct {
	id        string
	bodyHash  [32]byte
	done      chan struct{}
	stored    bool // false: the answer is not replayable (5xx, 429, 409)
	status    int
	header    http.Header
	body      []byte
	expires   time.Time
	listEntry *list.Element
}

type idempotency struct {
	mu      sync.Mutex
	entries map[string]*idemEntry
	order   *list.List // oldest first
	now     func() time.Time
}

func newIdempotency() *idempotency {
	return &idempotency{entries: map[string]*idemEntry{}, order: list.New(), now: time.Now}
}

// idempotent wraps a POST route's handler (inside authentication, so the
// caller is known and limits still count every attempt).
func (s *srv) idempotent(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get(idempotencyHeader)
		if key == "" {
			next.ServeHTTP(w, r)
			return
		}
		if len(key) > maxIdempotencyKey {
			writeDetail(w, http.StatusBadRequest, "Invalid request format: Idempotency-Key is longer than 255 characters")
			return
		}
		// Buffer at most the single-record limit. A larger body passes
		// through untouched, unprotected: the handler applies its own limit.
		body, err := io.ReadAll(io.LimitReader(r.Body, s.opts.maxBody+1))
		if err != nil {
			writeDetail(w, http.StatusBadRequest, "Invalid request format: could not read body")
			return
		}
		if int64(len(body)) > s.opts.maxBody {
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
			next.ServeHTTP(w, r)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		caller := "ip:" + s.callerIP(r)
		if k := requestKey(r); k != nil {
			caller = "key:" + k.ID
		}
		id := caller + "\x00" + r.Method + " " + r.URL.Path + "\x00" + key
		e, first := s.idem.begin(id, sha256.Sum256(body))
		if !first {
			select {
			case <-e.done:
			case <-r.Context().Done():
				return
			}
			if e.bodyHash != sha256.Sum256(body) {
				writeDetail(w, http.StatusUnprocessableEntity, "Idempotency-Key was already used with a different request body")
				return
			}
			if e.stored {
				h := w.Header()
				for k, v := range e.header {
					h[k] = v
				}
				h.Set("Idempotent-Replayed", "true")
				w.WriteHeader(e.status)
				_, _ = w.Write(e.body)
				return
			}
			// The first attempt's answer was not kept (it failed in a way
			// worth retrying): serve this one afresh.
			next.ServeHTTP(w, r)
			return
		}
		rec := &captureWriter{ResponseWriter: w}
		defer func() { s.idem.finish(e, rec) }()
		next.ServeHTTP(rec, r)
	})
}

// begin returns the entry for id, creating it (first=true) when absent or
// expired.
func (m *idempotency) begin(id string, bodyHash [32]byte) (e *idemEntry, first bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	for m.order.Len() > 0 {
		oldest := m.order.Front().Value.(*idemEntry)
		if m.order.Len() < idempotencyMax && now.Before(oldest.expires) {
			break
		}
		select {
		case <-oldest.done:
		default:
			if m.order.Len() < 2*idempotencyMax {
				goto evicted // never drop an entry still running, unless far over
			}
		}
		m.order.Remove(oldest.listEntry)
		delete(m.entries, oldest.id)
	}
evicted:
	if e, ok := m.entries[id]; ok && now.Before(e.expires) {
		return e, false
	} else if ok {
		m.order.Remove(e.listEntry)
	}
	e = &idemEntry{id: id, bodyHash: bodyHash, done: make(chan struct{}), expires: now.Add(idempotencyTTL)}
	e.listEntry = m.order.PushBack(e)
	m.entries[id] = e
	return e, true
}

func (m *idempotency) finish(e *idemEntry, rec *captureWriter) {
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	keep := status < 500 && status != http.StatusTooManyRequests && status != http.StatusConflict && !rec.overflow
	m.mu.Lock()
	if keep {
		e.stored, e.status, e.header, e.body = true, status, rec.Header().Clone(), rec.buf.Bytes()
		e.header.Del("X-Request-ID")
	}
	m.mu.Unlock()
	close(e.done)
}

// captureWriter passes a response through and keeps a copy of it.
type captureWriter struct {
	http.ResponseWriter
	status   int
	buf      bytes.Buffer
	overflow bool
}

func (c *captureWriter) WriteHeader(status int) {
	if c.status == 0 {
		c.status = status
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *captureWriter) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	if !c.overflow {
		if c.buf.Len()+len(b) > maxReplayBody {
			c.overflow = true
			c.buf.Reset()
		} else {
			c.buf.Write(b)
		}
	}
	return c.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (c *captureWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// callerIP is the client address as the limits see it.
func (s *srv) callerIP(r *http.Request) string {
	addr, _ := s.clientOf(r)
	return addr.String()
}
