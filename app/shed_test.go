package app_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/record"
)

func nilMedications(r *record.Record) { r.Medications = nil }

// TestOverloadSheds drives the whole service, real proofs on the embedded
// chain, far beyond a gate of one proof in flight (and its default queue of
// two): the excess is refused with 503 and Retry-After, nothing else fails,
// the server serves normally afterwards and no goroutine is left behind.
// Callers arrive from distinct addresses through a trusted proxy, as behind
// a load balancer, so the per-client rate limits do not answer first.
func TestOverloadSheds(t *testing.T) {
	if testing.Short() {
		t.Skip("opens a whole service and proves under load")
	}
	a, err := app.OpenWithOutput(t.Context(), app.Config{DataDir: keyedDir(t), MaxInFlight: 1, TrustedProxies: []string{"127.0.0.1"}},
		slog.New(slog.DiscardHandler), io.Discard)
	require.NoError(t, err)
	defer a.Close()
	ts := httptest.NewServer(a.Handler)
	defer ts.Close()
	transport := &http.Transport{MaxIdleConnsPerHost: 64}
	client := &http.Client{Transport: transport}
	defer transport.CloseIdleConnections()

	env := sealed(t, a, nil)
	bodies := map[string][]byte{}
	bodies["/verify-eligibility"], err = json.Marshal(map[string]any{"patient_data": env, "procedure_code": "70551"})
	require.NoError(t, err)
	bodies["/validate-prescription"], err = json.Marshal(map[string]any{"patient_data": sealed(t, a, nilMedications), "drug_code": "6809"})
	require.NoError(t, err)
	var n int
	send := func(path string) (int, http.Header) {
		n++
		req, err := http.NewRequestWithContext(t.Context(), "POST", ts.URL+path, bytes.NewReader(bodies[path]))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Forwarded-For", fmt.Sprintf("10.%d.%d.%d", n>>16&255, n>>8&255, n&255))
		resp, err := client.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, resp.Header
	}

	// Warm up (first proofs, connections), then count goroutines.
	for path := range bodies {
		status, _ := send(path)
		require.Equal(t, http.StatusOK, status, path)
	}
	transport.CloseIdleConnections()
	// Goroutines of finished requests exit soon after; a minute of polling
	// bounds a busy machine's scheduling delay, not a time the test checks.
	settled := func(limit int) bool {
		for range 6000 {
			if runtime.NumGoroutine() <= limit {
				return true
			}
			time.Sleep(10 * time.Millisecond)
		}
		return false
	}
	before := runtime.NumGoroutine()

	const concurrent = 48
	statuses := map[int]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var reqs []*http.Request
	for i := range concurrent {
		path := "/verify-eligibility"
		if i%2 == 1 {
			path = "/validate-prescription"
		}
		req, err := http.NewRequestWithContext(t.Context(), "POST", ts.URL+path, bytes.NewReader(bodies[path]))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Forwarded-For", fmt.Sprintf("10.200.%d.%d", i>>8, i&255))
		reqs = append(reqs, req)
	}
	for _, req := range reqs {
		wg.Go(func() {
			resp, err := client.Do(req)
			if !assert.NoError(t, err) {
				return
			}
			defer resp.Body.Close()
			_, _ = io.Copy(io.Discard, resp.Body)
			if resp.StatusCode == http.StatusServiceUnavailable {
				assert.Equal(t, "1", resp.Header.Get("Retry-After"))
			}
			mu.Lock()
			statuses[resp.StatusCode]++
			mu.Unlock()
		})
	}
	wg.Wait()
	t.Logf("statuses under overload: %v", statuses)
	assert.Positive(t, statuses[http.StatusOK], "the gate admits work")
	assert.Positive(t, statuses[http.StatusServiceUnavailable], "the excess is shed")
	assert.Equal(t, concurrent, statuses[http.StatusOK]+statuses[http.StatusServiceUnavailable],
		"nothing but 200 and 503: %v", statuses)

	// Afterwards the server serves normally, and no goroutine is left over.
	for path := range bodies {
		status, _ := send(path)
		require.Equal(t, http.StatusOK, status, path)
	}
	transport.CloseIdleConnections()
	assert.True(t, settled(before+2), "goroutines settle back (before %d, now %d)", before, runtime.NumGoroutine())
}

// TestBurstOfTwelveRealProofs: the whole service on a gate sized for 2
// cores with the default queue (16) answers a burst of 12 parallel
// eligibility calls, each a real Groth16 proof verified on the embedded
// chain, all with 200. ADMISSION_WAIT is raised to a minute so a slow,
// shared machine cannot turn the burst into sheds: the queue's depth, not
// its deadline, is what this test is about (TestBurstQueuesThenSheds in
// server shows the deadline and the shedding).
func TestBurstOfTwelveRealProofs(t *testing.T) {
	if testing.Short() {
		t.Skip("proves twelve times")
	}
	t.Parallel()
	a, err := app.OpenWithOutput(t.Context(), app.Config{DataDir: keyedDir(t), MaxInFlight: 2, AdmissionWait: time.Minute,
		TrustedProxies: []string{"127.0.0.1"}}, slog.New(slog.DiscardHandler), io.Discard)
	require.NoError(t, err)
	defer a.Close()
	ts := httptest.NewServer(a.Handler)
	defer ts.Close()
	body, err := json.Marshal(map[string]any{"patient_data": sealed(t, a, nil), "procedure_code": "70551"})
	require.NoError(t, err)
	const burst = 12
	statuses := make(chan int, burst)
	var wg sync.WaitGroup
	for i := range burst {
		wg.Go(func() {
			req, err := http.NewRequestWithContext(t.Context(), "POST", ts.URL+"/verify-eligibility", bytes.NewReader(body))
			if !assert.NoError(t, err) {
				return
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Forwarded-For", fmt.Sprintf("10.12.0.%d", i+1))
			resp, err := http.DefaultClient.Do(req)
			if !assert.NoError(t, err) {
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses <- resp.StatusCode
		})
	}
	wg.Wait()
	close(statuses)
	counts := map[int]int{}
	for s := range statuses {
		counts[s]++
	}
	assert.Equal(t, map[int]int{http.StatusOK: burst}, counts)
}
