package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
)

type countingSink struct {
	mu sync.Mutex
	n  int
}

func (c *countingSink) Emit(_ context.Context, _ healthagents.Event) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return nil
}

func (c *countingSink) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func postWithKey(t *testing.T, url, key string, body []byte) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// TestIdempotencyKeyReplays: a retried POST with the same Idempotency-Key
// gets the first answer again and does no work (the event sink counts the
// decisions made); another body under the same key is refused.
func TestIdempotencyKeyReplays(t *testing.T) {
	t.Parallel()
	sink := &countingSink{}
	f := setup(t, setupOpts{svcOpts: []healthagents.Option{healthagents.WithEvents(sink)}})
	body, _ := json.Marshal(map[string]any{"patient_data": f.seal(t, baseRecord()), "procedure_code": "PROC001"})

	s1, h1, b1 := postWithKey(t, f.url+"/verify-eligibility", "key-1", body)
	require.Equal(t, 200, s1, string(b1))
	assert.Empty(t, h1.Get("Idempotent-Replayed"))
	s2, h2, b2 := postWithKey(t, f.url+"/verify-eligibility", "key-1", body)
	assert.Equal(t, s1, s2)
	assert.Equal(t, string(b1), string(b2))
	assert.Equal(t, "true", h2.Get("Idempotent-Replayed"))
	assert.Equal(t, 1, sink.count(), "the retry did no work")

	// Without a key, or with another key, the work is done again.
	postWithKey(t, f.url+"/verify-eligibility", "", body)
	postWithKey(t, f.url+"/verify-eligibility", "key-2", body)
	assert.Equal(t, 3, sink.count())

	other, _ := json.Marshal(map[string]any{"patient_data": f.seal(t, baseRecord()), "procedure_code": "PROC002"})
	s3, _, b3 := postWithKey(t, f.url+"/verify-eligibility", "key-1", other)
	assert.Equal(t, 422, s3)
	assert.JSONEq(t, `{"detail":"Idempotency-Key was already used with a different request body"}`, string(b3))

	s4, _, _ := postWithKey(t, f.url+"/verify-eligibility", strings.Repeat("k", 256), body)
	assert.Equal(t, 400, s4)
}

// TestIdempotencyConcurrentRetries: retries racing the first attempt wait
// for it and replay its answer; the work happens once.
func TestIdempotencyConcurrentRetries(t *testing.T) {
	t.Parallel()
	sink := &countingSink{}
	f := setup(t, setupOpts{svcOpts: []healthagents.Option{healthagents.WithEvents(sink)}})
	body, _ := json.Marshal(map[string]any{"patient_data": f.seal(t, baseRecord()), "drug_code": "6809"})
	var wg sync.WaitGroup
	bodies := make([]string, 8)
	for i := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, _, b := postWithKey(t, f.url+"/validate-prescription", "same", body)
			assert.Equal(t, 200, s)
			bodies[i] = string(b)
		}()
	}
	wg.Wait()
	for _, b := range bodies {
		assert.Equal(t, bodies[0], b)
	}
	assert.Equal(t, 1, sink.count())
}
