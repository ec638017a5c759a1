package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/server"
)

// TestProbes: /livez answers whatever the dependencies do; /readyz runs the
// checks now (no cache) and names them; /health says what it checked.
func TestProbes(t *testing.T) {
	t.Parallel()
	var down atomic.Bool
	f := setup(t, setupOpts{deps: func(d *server.Deps) {
		d.Checks = []server.Check{
			{Name: "database", Ping: func(context.Context) error { return nil }},
			{Name: "chain", Ping: func(context.Context) error {
				if down.Load() {
					return errors.New("dial tcp: connection refused")
				}
				return nil
			}},
		}
	}})
	status, _, body := f.do(t, "GET", "/readyz", nil)
	require.Equal(t, 200, status)
	assert.Equal(t, map[string]any{"status": "ready", "checks": map[string]any{"database": "ok", "chain": "ok"}}, body)
	status, _, body = f.do(t, "GET", "/health", nil)
	require.Equal(t, 200, status)
	assert.Equal(t, []any{"database", "chain"}, body["checked"])

	down.Store(true)
	status, _, body = f.do(t, "GET", "/readyz", nil)
	requireDetail(t, status, body, 503, "Service temporarily unavailable: not answering: chain")
	assert.NotContains(t, fmt.Sprint(body), "connection refused", "the error text stays in the log")
	status, _, body = f.do(t, "GET", "/livez", nil)
	require.Equal(t, 200, status)
	assert.Equal(t, "alive", body["status"])
}

// TestMetrics: with WithMetrics, /metrics serves request counts and
// latency by route template and status, and a path's values (a patient id)
// never become a label.
func TestMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	f := setup(t, setupOpts{serverOpts: []server.Option{server.WithMetrics(reg)}})
	for range 3 {
		status, _, _ := f.do(t, "GET", "/health", nil)
		require.Equal(t, 200, status)
	}
	status, _, _ := f.do(t, "DELETE", "/api/v1/patients/PT-SECRET-77", nil)
	require.Equal(t, 401, status)
	status, _, _ = f.do(t, "POST", "/verify-eligibility", map[string]any{"procedure_code": "PROC001"})
	require.Equal(t, 400, status)

	resp, err := http.Get(f.url + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	text := string(b)
	assert.Contains(t, text, `healthagents_http_requests_total{route="GET /health",status="200"} 3`)
	assert.Contains(t, text, `healthagents_http_requests_total{route="DELETE /api/v1/patients/{patient_id}",status="401"} 1`)
	assert.Contains(t, text, `healthagents_http_requests_total{route="POST /verify-eligibility",status="400"} 1`)
	assert.Contains(t, text, `healthagents_http_request_duration_seconds_count{route="GET /health",status="200"} 3`)
	assert.Contains(t, text, `healthagents_admission_queue_depth{gate="proof"} 0`)
	assert.NotContains(t, text, "PT-SECRET-77")
	assert.NotContains(t, text, "PROC001")

	// Without WithMetrics there is no /metrics.
	plain := setup(t)
	status, _, _ = plain.do(t, "GET", "/metrics", nil)
	assert.Equal(t, 404, status)
	assert.False(t, strings.Contains(text, "healthagents_rate_limited_total{"), "no refusal counted yet")
}
