package healthagents

import (
	"context"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Tracing. A request's work shows as spans under its HTTP span: open (the
// envelope decrypted and the record parsed), decide (the agent's rules),
// prove and chain (the attestor's; see app), store (a validation or a
// registration written). Spans carry no attribute: their names and timing
// are the whole story, so no patient id, code or date can reach a trace
// backend. A failed step's span has status Error with a fixed description,
// never the error's text (which may quote a field).

// tracerName is the instrumentation scope of the service's spans.
const tracerName = "github.com/healthagents/healthagents"

// WithTracerProvider records the service's spans with tp (default: none).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(s *Service) error {
		if tp != nil {
			s.tracer = tp.Tracer(tracerName)
		}
		return nil
	}
}

var noTracer = noop.NewTracerProvider().Tracer(tracerName)

// step starts the span of one step of a request; end it with its error.
func (s *Service) step(ctx context.Context, name string) (context.Context, func(error)) {
	t := s.tracer
	if t == nil {
		t = noTracer
	}
	ctx, span := t.Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal))
	return ctx, func(err error) {
		if err != nil {
			span.SetStatus(codes.Error, name+" failed")
		}
		span.End()
	}
}
