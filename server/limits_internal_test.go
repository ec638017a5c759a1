package server

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBodyLimitsCoverRoutes: every route that documents a request body
// states its own limit (a size, or the single-record or gradient setting),
// documents 413 and reads a positive amount; the single-record routes are
// exactly the envelope routes.
func TestBodyLimitsCoverRoutes(t *testing.T) {
	t.Parallel()
	s := &srv{opts: options{maxBody: DefaultMaxBodyBytes}}
	rs, err := s.routeTable()
	require.NoError(t, err)
	served := map[string]route{}
	var singleRecord []string
	for _, rt := range rs {
		pattern := rt.Method + " " + rt.Path
		served[pattern] = rt
		if rt.Body == bodySingleRecord {
			singleRecord = append(singleRecord, pattern)
		}
	}
	assert.ElementsMatch(t, []string{"POST /verify-eligibility", "POST /validate-prescription", "PUT /api/v1/patients/{patient_id}"}, singleRecord)
	for pattern, rt := range served {
		if rt.Doc.Request == nil {
			continue
		}
		assert.NotZero(t, rt.Body, "route %s takes a body but states no limit", pattern)
		assert.Contains(t, rt.Doc.Errors, http.StatusRequestEntityTooLarge, "%s documents 413", pattern)
		assert.Positive(t, s.bodyLimit(rt), pattern)
	}
	assert.EqualValues(t, SmallBodyBytes, s.bodyLimit(served["POST /api/v1/federated/organizations"]))
	assert.EqualValues(t, DefaultMaxGradientBytes, s.bodyLimit(served["POST /api/v1/federated/gradients"]))
	assert.EqualValues(t, DefaultMaxBodyBytes, s.bodyLimit(served["POST /verify-eligibility"]))
	assert.Zero(t, s.bodyLimit(served["GET /health"]))
}

// keep runs one request through the cache: a 200 with a body of n bytes
// under id.
func keep(t *testing.T, m *idempotency, id string, n int) *idemEntry {
	t.Helper()
	e, first := m.begin(id)
	require.True(t, first)
	rec := &captureWriter{ResponseWriter: httptest.NewRecorder(), body: &hashingBody{ReadCloser: http.NoBody, h: sha256.New()}}
	rec.WriteHeader(http.StatusOK)
	_, _ = rec.Write([]byte(strings.Repeat("x", n)))
	m.finish(e, rec)
	return e
}

// TestIdempotencyByteBudget: the kept answers never exceed the byte budget
// however few they are; the oldest go first, a running entry is never
// dropped for bytes, and an answer larger than the whole budget is not
// kept at all.
func TestIdempotencyByteBudget(t *testing.T) {
	t.Parallel()
	m := newIdempotency()
	m.maxBytes = 40 << 10
	running, first := m.begin("running")
	require.True(t, first)
	var kept []*idemEntry
	for i := range 30 {
		kept = append(kept, keep(t, m, fmt.Sprint("answer-", i), 8<<10))
		assert.LessOrEqual(t, m.bytes, m.maxBytes, "after answer %d", i)
	}
	var total int64
	stored := 0
	for _, e := range m.entries {
		total += e.size
		if e.stored {
			stored++
		}
	}
	assert.Equal(t, m.bytes, total, "the count of bytes matches the entries")
	assert.Less(t, stored, 5, "four answers of 8 KiB fit 40 KiB")
	assert.Contains(t, m.entries, "answer-29", "the newest answer is kept")
	assert.NotContains(t, m.entries, "answer-0", "the oldest went first")
	assert.Contains(t, m.entries, "running", "a running entry holds no bytes and stays")
	assert.Zero(t, running.size)

	big := keep(t, m, "too-big", 64<<10)
	assert.False(t, big.stored, "an answer beyond the whole budget is not kept")
	assert.LessOrEqual(t, m.bytes, m.maxBytes)
	assert.Positive(t, len(kept))
}
