package server

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Tracing. An incoming W3C `traceparent` is honoured: the request's log
// line carries its trace id, and with WithTracerProvider the request is a
// server span (otelhttp) in that trace, parent of the service's own spans
// (open, decide, prove, chain, store), and the answer says which span it
// was in a `traceresponse` header (W3C Trace Context level 2).
//
// No path value reaches a span: otelhttp sees the request with its path
// replaced by the route's template (/api/v1/patients/{patient_id}) and no
// query, so url.path and the span name hold templates only; the handlers
// get the real request. Request and response bodies are never recorded.

// WithTracerProvider makes every request a server span recorded by tp
// (exported by whatever tp was built with, e.g. OTLP). Without it the
// incoming traceparent still reaches the log line, and no span is made.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) error { o.tracer = tp; return nil }
}

// traceContext is the only propagation format read and written.
var traceContext = propagation.TraceContext{}

type originalRequestKey struct{}

// untracedPaths are the probes and the metrics scrape: polled every few
// seconds by machines, they would drown the requests in a trace backend.
var untracedPaths = map[string]bool{"/livez": true, "/readyz": true, "/health": true, "/metrics": true}

// traced wraps next (the request logger and everything inside it).
func (s *srv) traced(next http.Handler) http.Handler {
	if s.opts.tracer == nil {
		// No spans: only the caller's trace context, for the log line.
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Traceparent") == "" {
				next.ServeHTTP(w, r)
				return
			}
			next.ServeHTTP(w, r.WithContext(traceContext.Extract(r.Context(), propagation.HeaderCarrier(r.Header))))
		})
	}
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		orig, _ := r.Context().Value(originalRequestKey{}).(*http.Request)
		if orig == nil {
			orig = r
		}
		if sc := trace.SpanContextFromContext(r.Context()); sc.IsValid() {
			w.Header().Set("Traceresponse", "00-"+sc.TraceID().String()+"-"+sc.SpanID().String()+"-"+sc.TraceFlags().String())
		}
		next.ServeHTTP(w, orig.WithContext(r.Context()))
	})
	h := otelhttp.NewHandler(inner, "http",
		otelhttp.WithTracerProvider(s.opts.tracer),
		otelhttp.WithPropagators(traceContext),
		otelhttp.WithMeterProvider(noop.NewMeterProvider()), // metrics are Prometheus' (metrics.go)
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method + " " + r.URL.Path }),
		otelhttp.WithFilter(func(r *http.Request) bool { return !untracedPaths[r.URL.Path] }),
	)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		safe := r.WithContext(context.WithValue(r.Context(), originalRequestKey{}, r))
		u := &url.URL{Scheme: r.URL.Scheme, Host: r.URL.Host, Path: s.routeTemplate(r)}
		safe.URL, safe.RequestURI = u, u.Path
		h.ServeHTTP(w, safe)
	})
}

// routeTemplate is the path template of the route r goes to
// ("/api/v1/patients/{patient_id}"), or "/(unmatched)".
func (s *srv) routeTemplate(r *http.Request) string {
	_, pattern := s.mux.Handler(r)
	if _, path, ok := strings.Cut(pattern, " "); ok {
		return path
	}
	if pattern != "" {
		return pattern
	}
	return "/(unmatched)"
}

// traceID is the trace id of r's context, or "" when it has none.
func traceID(ctx context.Context) string {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		return sc.TraceID().String()
	}
	return ""
}
