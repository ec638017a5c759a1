package app

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/healthagents/healthagents"
)

// OpenTelemetry traces are exported by OTLP over HTTP (protobuf) when
// OTEL_EXPORTER_OTLP_ENDPOINT is set: its URL is the collector's base, and
// spans go to <base>/v1/traces as the OpenTelemetry specification says.
// Headers (OTEL_EXPORTER_OTLP_HEADERS, e.g. a vendor's API key) and the
// timeout are read from the environment by the exporter itself. A parent
// sampled by the caller (traceparent) is recorded; a root span always is.

// checkOTLPEndpoint accepts an http(s) URL with a host.
func checkOTLPEndpoint(e string) error {
	u, err := url.Parse(e)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s):// URL of an OTLP/HTTP collector, e.g. http://otel-collector:4318 (scheme %q)", schemeOf(e))
	}
	return nil
}

// tracesURL is the OTLP/HTTP traces URL under the base endpoint.
func tracesURL(base string) string {
	return strings.TrimSuffix(base, "/") + "/v1/traces"
}

// newTracerProvider exports spans to cfg.OTLPEndpoint in batches; nil
// without one. Shut it down to flush what is queued.
func newTracerProvider(ctx context.Context, cfg Config) (*sdktrace.TracerProvider, error) {
	if cfg.OTLPEndpoint == "" {
		return nil, nil
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(tracesURL(cfg.OTLPEndpoint)))
	if err != nil {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: %w", err)
	}
	res := resource.NewSchemaless(attribute.String("service.name", "healthagents"), attribute.String("service.version", healthagents.Version))
	return sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(2*time.Second)),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())),
	), nil
}
