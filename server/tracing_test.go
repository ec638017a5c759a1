package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/healthagents/healthagents/server"
)

// TestTracing: with a tracer provider, a request carrying a traceparent is
// a server span in the caller's trace, named by its route template, its
// url.path the template too (a patient id in the path reaches no span),
// and the answer's traceresponse names the span; probes make no span.
// Without a provider, the caller's trace id still reaches the log line.
func TestTracing(t *testing.T) {
	t.Parallel()
	const traceID, parent = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	f := setup(t, setupOpts{serverOpts: []server.Option{server.WithTracerProvider(tp)}})
	req := func(f *fixture, method, path string) *http.Response {
		r, err := http.NewRequestWithContext(t.Context(), method, f.url+path+"?q=PT-SECRET-9", nil)
		require.NoError(t, err)
		r.Header.Set("Traceparent", "00-"+traceID+"-"+parent+"-01")
		resp, err := http.DefaultClient.Do(r)
		require.NoError(t, err)
		resp.Body.Close()
		return resp
	}
	resp := req(f, "DELETE", "/api/v1/patients/PT-SECRET-9")
	assert.Equal(t, 401, resp.StatusCode)
	assert.Regexp(t, "^00-"+traceID+"-[0-9a-f]{16}-01$", resp.Header.Get("Traceresponse"))
	req(f, "GET", "/health")
	req(f, "GET", "/no/such/PT-SECRET-9")

	spans := rec.Ended()
	require.Len(t, spans, 2, "the probe made no span")
	var all strings.Builder
	for _, s := range spans {
		assert.Equal(t, traceID, s.SpanContext().TraceID().String())
		assert.Equal(t, parent, s.Parent().SpanID().String())
		all.WriteString(s.Name() + "\n")
		for _, kv := range s.Attributes() {
			all.WriteString(string(kv.Key) + "=" + kv.Value.String() + "\n")
		}
	}
	assert.Equal(t, "DELETE /api/v1/patients/{patient_id}", spans[0].Name())
	assert.Equal(t, "GET /(unmatched)", spans[1].Name())
	assert.Contains(t, all.String(), "url.path=/api/v1/patients/{patient_id}")
	assert.NotContains(t, all.String(), "PT-SECRET-9", "no path or query value in a span")

	plain := setup(t)
	resp = req(plain, "GET", "/health")
	assert.Empty(t, resp.Header.Get("Traceresponse"), "no span without a provider")
	assert.Contains(t, plain.logs.String(), `"trace_id":"`+traceID+`"`, "the caller's trace id reaches the log line")
}
