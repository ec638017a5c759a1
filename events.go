package healthagents

import (
	"context"
	"time"
)

// Event names, as webhooks deliver them (docs/decisions/webhooks.md,
// "Events and payloads").
const (
	EventEligibilityVerified   = "eligibility.verified"
	EventPrescriptionValidated = "prescription.validated"
	EventPrescriptionApproved  = "prescription.approved"
)

// Event is something the service reports to webhook subscribers. PatientID
// is the raw de-identified code: a sink must never deliver it as is (the
// webhook package replaces it with a keyed hash). Data holds only fields
// safe to deliver: no medical data.
type Event struct {
	Type      string
	Time      time.Time
	PatientID string
	Data      map[string]any
}

// EventSink takes events for delivery. Emit must make the event durable (or
// fail) before it returns: the service answers only after Emit succeeded, so
// an acknowledged result is never without its event.
type EventSink interface {
	Emit(ctx context.Context, e Event) error
}

// WithEvents sends an event for each successful decision to sink.
func WithEvents(sink EventSink) Option {
	return func(s *Service) error { s.events = sink; return nil }
}

// emitsEvents reports whether an EventSink takes the service's events.
func (s *Service) emitsEvents() bool { return s.events != nil }

// emit hands e to the sink, if any. A sink failure fails the request with
// 503: the caller may retry, and no result goes out without its event.
func (s *Service) emit(ctx context.Context, e Event) error {
	if s.events == nil {
		return nil
	}
	if e.Time.IsZero() {
		e.Time = s.serviceTime()
	}
	if err := s.events.Emit(ctx, e); err != nil {
		s.logger.ErrorContext(ctx, "event not recorded", "event", e.Type, "err", err)
		return WrapError(CodeUnavailable, err, "Service temporarily unavailable")
	}
	return nil
}
