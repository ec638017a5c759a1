package server

import (
	"bytes"
	"container/list"
	"crypto/sha256"
	"hash"
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
// No body is ever buffered here: the first attempt's body is hashed as its
// handler reads it (and the rest, if any, just before the answer starts),
// and a retry's body is hashed as it streams in, after the first answer is
// known. A waiting retry therefore holds no body, and the request bodies in
// memory are only those the handlers read, each within its route's limit.
//
// Answers are kept in process memory, bounded in number (idempotencyMax),
// in bytes (idempotencyMaxBytes) and in time. With Deps.Idempotency they
// are also kept in the database (idempotency_durable.go): a retry after a
// restart or on another replica replays the first answer, and a duplicate
// arriving while the first runs on another replica gets 409.

const (
	idempotencyHeader = "Idempotency-Key"
	maxIdempotencyKey = 255
	idempotencyTTL    = time.Hour
	idempotencyMax    = 10000
	maxReplayBody     = 256 << 10
	// idempotencyMaxBytes bounds the answers kept for replay, counted as
	// their bodies and headers plus a fixed overhead per entry; beyond it
	// the oldest answers are dropped first.
	idempotencyMaxBytes = 32 << 20
	// idemEntryOverhead approximates an entry's bookkeeping (struct, map
	// and list entries) beyond its id, headers and body.
	idemEntryOverhead = 512
)

type idemEntry struct {
	id        string
	bodyHash  [32]byte
	done      chan struct{}
	stored    bool // false: the answer is not replayable (5xx, 429, 409)
	status    int
	header    http.Header
	body      []byte
	size      int64 // bytes charged to the budget while stored
	expires   time.Time
	listEntry *list.Element
}

type idempotency struct {
	mu       sync.Mutex
	entries  map[string]*idemEntry
	order    *list.List // oldest first
	bytes    int64      // sum of size over the entries
	maxBytes int64
	now      func() time.Time
}

func newIdempotency() *idempotency {
	return &idempotency{entries: map[string]*idemEntry{}, order: list.New(), maxBytes: idempotencyMaxBytes, now: time.Now}
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
		caller := "ip:" + s.callerIP(r)
		if k := requestKey(r); k != nil {
			caller = "key:" + k.ID
		}
		id := caller + "\x00" + r.Method + " " + r.URL.Path + "\x00" + key
		var (
			e       *idemEntry
			durable bool
		)
		for {
			var first bool
			e, first = s.idem.begin(id)
			if first {
				if s.deps.Idempotency != nil {
					var done bool
					if durable, done = s.claimDurable(w, r, e, id); done {
						return
					}
				}
				break
			}
			select {
			case <-e.done:
			case <-r.Context().Done():
				return
			}
			if !e.stored {
				// The first attempt here left no answer: it failed in a way
				// worth retrying, or another replica runs the key (the
				// store said so). Start over, through the store, so this
				// one is never run beside an attempt elsewhere.
				s.idem.forget(e)
				continue
			}
			sum, err := hashBody(w, r)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			if sum != e.bodyHash {
				writeDetail(w, http.StatusUnprocessableEntity, "Idempotency-Key was already used with a different request body")
				return
			}
			replay(w, e.status, e.header, e.body)
			return
		}
		body := &hashingBody{ReadCloser: r.Body, h: sha256.New()}
		r = r.Clone(r.Context()) // the server's own request keeps its body (see limitBody)
		r.Body = body
		rec := &captureWriter{ResponseWriter: w, body: body}
		defer func() {
			s.idem.finish(e, rec)
			if durable {
				s.completeDurable(r, e, id)
			}
		}()
		next.ServeHTTP(rec, r)
	})
}

// hashBody hashes a retry's whole body as it streams in, within the
// route's limit.
func hashBody(w http.ResponseWriter, r *http.Request) ([32]byte, error) {
	h := sha256.New()
	var sum [32]byte
	if _, err := io.Copy(h, r.Body); err != nil {
		return sum, bodyReadError(err)
	}
	h.Sum(sum[:0])
	return sum, nil
}

// hashingBody hashes what is read through it.
type hashingBody struct {
	io.ReadCloser
	h   hash.Hash
	err error // a read error other than EOF: the hash is not of the body
}

func (b *hashingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.h.Write(p[:n])
	if err != nil && err != io.EOF && b.err == nil {
		b.err = err
	}
	return n, err
}

// finishHash reads the rest of the body into the hash (the handler may
// have stopped early) and reports the hash of the whole body, or false
// when the body could not be read to its end within the route's limit.
func (b *hashingBody) finishHash() (sum [32]byte, ok bool) {
	if b.err == nil {
		_, _ = io.Copy(io.Discard, b)
	}
	if b.err != nil {
		return sum, false
	}
	b.h.Sum(sum[:0])
	return sum, true
}

// begin returns the entry for id, creating it (first=true) when absent or
// expired.
func (m *idempotency) begin(id string) (e *idemEntry, first bool) {
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
		m.remove(oldest)
	}
evicted:
	if e, ok := m.entries[id]; ok && now.Before(e.expires) {
		return e, false
	} else if ok {
		m.remove(e)
	}
	e = &idemEntry{id: id, done: make(chan struct{}), expires: now.Add(idempotencyTTL)}
	e.listEntry = m.order.PushBack(e)
	m.entries[id] = e
	return e, true
}

// forget drops e if it is still id's entry, so the next begin starts afresh.
func (m *idempotency) forget(e *idemEntry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries[e.id] == e {
		m.remove(e)
	}
}

// remove drops e; m.mu is held.
func (m *idempotency) remove(e *idemEntry) {
	m.order.Remove(e.listEntry)
	if m.entries[e.id] == e {
		delete(m.entries, e.id)
	}
	m.bytes -= e.size
	e.size = 0
}

func (m *idempotency) finish(e *idemEntry, rec *captureWriter) {
	rec.start(http.StatusOK) // a handler that wrote nothing answers 200
	status := rec.status
	keep := rec.keep && !rec.overflow
	var size int64
	if keep {
		size = int64(idemEntryOverhead + len(e.id) + rec.buf.Len())
		for k, vs := range rec.Header() {
			for _, v := range vs {
				size += int64(len(k) + len(v))
			}
		}
		keep = size <= m.maxBytes
	}
	m.mu.Lock()
	if keep {
		e.stored, e.status, e.header, e.body = true, status, rec.Header().Clone(), rec.buf.Bytes()
		e.header.Del("X-Request-ID")
		e.bodyHash, e.size = rec.bodyHash, size
		m.bytes += size
		// Over the byte budget: drop the oldest finished entries.
		for el := m.order.Front(); el != nil && m.bytes > m.maxBytes; {
			old := el.Value.(*idemEntry)
			el = el.Next()
			if old != e && old.size > 0 {
				m.remove(old)
			}
		}
	}
	m.mu.Unlock()
	close(e.done)
}

// captureWriter passes a response through and keeps a copy of it. Just
// before a replayable answer starts, it finishes hashing the request body.
type captureWriter struct {
	http.ResponseWriter
	body     *hashingBody
	started  bool
	status   int
	keep     bool     // the answer may be replayed
	bodyHash [32]byte // of the whole request body, when keep
	buf      bytes.Buffer
	overflow bool
}

// start runs once, before the first byte of the answer: the status decides
// whether the answer is kept, and a kept one needs the hash of the whole
// request body, read now (after the answer starts, an HTTP/1 request body
// may no longer be readable).
func (c *captureWriter) start(status int) {
	if c.started {
		return
	}
	c.started, c.status = true, status
	if status >= 500 || status == http.StatusTooManyRequests || status == http.StatusConflict {
		return
	}
	c.bodyHash, c.keep = c.body.finishHash()
}

func (c *captureWriter) WriteHeader(status int) {
	c.start(status)
	c.ResponseWriter.WriteHeader(status)
}

func (c *captureWriter) Write(b []byte) (int, error) {
	c.start(http.StatusOK)
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
