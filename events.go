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
//
// Owner is the tenant on whose behalf the request ran (see
// ContextWithOwner): a multi-tenant sink delivers the event only to that
// owner's endpoints, and an event without one to none. The Service fills it
// from the request's context.
type Event struct {
	Type      string
	Time      time.Time
	PatientID string
	Owner     string
	Data      map[string]any
}

type ownerCtxKey struct{}

// ContextWithOwner returns ctx carrying the tenant (an organization, or an
// API key's rotation chain) on whose behalf the Service works: the events of
// the call carry it as Event.Owner. The HTTP server sets it from the
// authenticated key; a program embedding the Service sets its own.
func ContextWithOwner(ctx context.Context, owner string) context.Context {
	return context.WithValue(ctx, ownerCtxKey{}, owner)
}

// OwnerFromContext returns the owner ContextWithOwner put in ctx.
func OwnerFromContext(ctx context.Context) (string, bool) {
	o, ok := ctx.Value(ownerCtxKey{}).(string)
	return o, ok && o != ""
}

// owned fills each event's Owner from ctx where it is empty.
func owned(ctx context.Context, events ...Event) []Event {
	owner, _ := OwnerFromContext(ctx)
	for i := range events {
		if events[i].Owner == "" {
			events[i].Owner = owner
		}
	}
	return events
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
	e = owned(ctx, e)[0]
	if err := s.events.Emit(ctx, e); err != nil {
		s.logger.ErrorContext(ctx, "event not recorded", "event", e.Type, "err", err)
		return WrapError(CodeUnavailable, err, "Service temporarily unavailable")
	}
	return nil
}
