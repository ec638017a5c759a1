package app_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"

	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/record"
)

// otlpSpan is one span an in-process OTLP/HTTP collector received.
type otlpSpan struct {
	name, traceID, spanID, parentID string
	attrs                           map[string]string
}

// otlpReceiver is an OTLP/HTTP collector: it decodes every protobuf
// export sent to /v1/traces.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []otlpSpan
	paths []string
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.paths = append(o.paths, r.URL.Path)
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				attrs := map[string]string{}
				for _, kv := range s.Attributes {
					attrs[kv.Key] = anyValue(kv.Value)
				}
				o.spans = append(o.spans, otlpSpan{name: s.Name, traceID: fmt.Sprintf("%x", s.TraceId),
					spanID: fmt.Sprintf("%x", s.SpanId), parentID: fmt.Sprintf("%x", s.ParentSpanId), attrs: attrs})
			}
		}
	}
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func anyValue(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	default:
		return v.String()
	}
}

// TestMetricsAndTracesOfAFullRun runs the real service with
// OTEL_EXPORTER_OTLP_ENDPOINT pointing at an in-process OTLP/HTTP collector
// through eligibility, the patient registry, a prescription validation and
// a webhook delivery, then checks: /metrics has proof and chain
// confirmation latency, the outbox depth and delivery outcomes, the
// federated round phase and the database pool; the caller's traceparent
// is honoured (the request is a span in its trace, with open, decide, prove
// and chain spans under it, the answer's traceresponse and the log line
// name it); a store span is exported; and no patient value reaches a
// metric label, a span name or a span attribute.
func TestMetricsAndTracesOfAFullRun(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	const (
		patientID = "PT-TRACE-SENTINEL-77"
		memberID  = "MBR-TRACE-SENTINEL-88"
		traceID   = "4bf92f3577b34da6a3ce929d0e0e4736"
		parentID  = "00f067aa0ba902b7"
	)
	collector := &otlpReceiver{}
	otlp := httptest.NewServer(collector)
	defer otlp.Close()
	var logs lockedBuffer
	a, err := app.OpenWithOutput(ctx, app.Config{DataDir: keyedDir(t), OTLPEndpoint: otlp.URL, LogLevel: slog.LevelDebug},
		slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), io.Discard)
	require.NoError(t, err)
	closed := false
	defer func() {
		if !closed {
			a.Close()
		}
	}()
	ts := httptest.NewServer(a.Handler)
	defer ts.Close()
	var hooks sync.WaitGroup
	hooks.Add(1)
	var once sync.Once
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		once.Do(hooks.Done)
	}))
	defer receiver.Close()
	key, _, err := a.Keys.Create(ctx, apikey.CreateParams{Env: apikey.Dev, Tier: apikey.Enterprise, Scopes: apikey.AllScopes})
	require.NoError(t, err)

	call := func(method, path string, body any, headers ...string) (*http.Response, map[string]any) {
		t.Helper()
		b, err := json.Marshal(body)
		require.NoError(t, err)
		req, err := http.NewRequestWithContext(ctx, method, ts.URL+path, bytes.NewReader(b))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		return resp, out
	}
	resp, body := call("POST", "/webhooks", map[string]any{"url": receiver.URL + "/hook", "events": []string{"eligibility.verified"}})
	require.Equal(t, 201, resp.StatusCode, "%v", body)
	env := sealed(t, a, func(r *record.Record) { r.PatientID = patientID; r.Coverage.MemberID = memberID })
	resp, body = call("POST", "/verify-eligibility", map[string]any{"patient_data": env, "procedure_code": "PROC002"},
		"Traceparent", "00-"+traceID+"-"+parentID+"-01")
	require.Equal(t, 200, resp.StatusCode, "%v", body)
	require.Equal(t, true, body["zk_proof_verified"])
	assert.Regexp(t, "^00-"+traceID+"-[0-9a-f]{16}-01$", resp.Header.Get("Traceresponse"), "the answer names its span in the caller's trace")
	resp, body = call("PUT", "/api/v1/patients/"+patientID, env)
	require.Equal(t, 200, resp.StatusCode, "%v", body)
	resp, body = call("POST", "/api/v1/prescriptions/validate", map[string]any{"patient_id": patientID, "provider_npi": "1234567893",
		"medications": []map[string]any{{"ndc_code": "0071-0155-23", "name": "atorvastatin", "strength": "20 mg", "quantity": 30, "days_supply": 30, "refills": 0}}})
	require.Equal(t, 200, resp.StatusCode, "%v", body)
	hooks.Wait() // a delivery was made; its attempt is recorded right after
	scrape := func() string {
		r, err := http.Get(ts.URL + "/metrics")
		require.NoError(t, err)
		defer r.Body.Close()
		b, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		return string(b)
	}
	metrics := scrape()
	for !strings.Contains(metrics, `healthagents_webhook_attempts_total{result="delivered"} 1`) {
		require.NoError(t, ctx.Err(), "the delivery was never counted")
		time.Sleep(20 * time.Millisecond)
		metrics = scrape()
	}
	for _, want := range []string{
		`healthagents_proof_duration_seconds_count{circuit="eligibility-v3",outcome="ok"} 1`,
		`healthagents_proof_duration_seconds_count{circuit="prescription-v4",outcome="ok"} 1`,
		`healthagents_chain_confirmation_duration_seconds_count{circuit="eligibility-v3",outcome="verified"} 1`,
		`healthagents_chain_confirmation_duration_seconds_count{circuit="prescription-v4",outcome="verified"} 1`,
		`healthagents_webhook_outbox_pending `,
		`healthagents_federated_round_phase{phase="advertise_keys"} `,
		`healthagents_federated_round `,
		`go_sql_open_connections{db_name="sqlite"} `,
		`healthagents_http_requests_total{route="PUT /api/v1/patients/{patient_id}",status="200"} 1`,
	} {
		assert.Contains(t, metrics, want)
	}

	require.NoError(t, a.Close()) // flushes the queued spans
	closed = true
	collector.mu.Lock()
	defer collector.mu.Unlock()
	require.NotEmpty(t, collector.spans, "spans were exported")
	assert.Contains(t, collector.paths, "/v1/traces")
	var server *otlpSpan
	inTrace := map[string]bool{}
	names := map[string]bool{}
	for i, s := range collector.spans {
		names[s.name] = true
		if s.traceID == traceID {
			inTrace[s.name] = true
			if s.name == "POST /verify-eligibility" {
				server = &collector.spans[i]
			}
		}
	}
	require.NotNil(t, server, "the request is a span in the caller's trace: %v", names)
	assert.Equal(t, parentID, server.parentID, "its parent is the caller's span")
	for _, step := range []string{"open", "decide", "prove", "chain"} {
		assert.True(t, inTrace[step], "a %s span in the caller's trace: %v", step, inTrace)
	}
	assert.True(t, names["store"], "a store span: %v", names)
	assert.True(t, names["PUT /api/v1/patients/{patient_id}"], "span names are route templates: %v", names)
	assert.Contains(t, logs.String(), `"trace_id":"`+traceID+`"`, "the request's log line names the caller's trace")

	// Nothing identifying in a label, a span name or an attribute.
	var spans strings.Builder
	for _, s := range collector.spans {
		spans.WriteString(s.name + "\n")
		for k, v := range s.attrs {
			spans.WriteString(k + "=" + v + "\n")
		}
	}
	labels := strings.Join(regexp.MustCompile(`\{[^}]*\}`).FindAllString(metrics, -1), "\n")
	for where, text := range map[string]string{"metric labels": labels, "spans": spans.String()} {
		for _, secret := range []string{patientID, memberID, env.EncryptedData, env.DataHash, "0071-0155-23", "00071015523", "PROC002"} {
			assert.NotContains(t, text, secret, "%s hold %q", where, secret)
		}
	}
	assert.Contains(t, spans.String(), "url.path=/api/v1/patients/{patient_id}", "the path reaches spans as its template")
}
