package webhook

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/api"
)

// Errors. Each error a Registry returns for a caller's mistake is a
// *healthagents.Error (so the server maps it to a status) wrapping one of
// these, so errors.Is works in-process.
var (
	// ErrInvalid: a malformed registration (unknown event, bad URL, bad
	// pagination).
	ErrInvalid = errors.New("webhook: invalid request")
	// ErrUnsafeAddress: the URL resolves to an address deliveries may not
	// reach (loopback, private, link-local, metadata, …). Wraps ErrInvalid
	// at registration.
	ErrUnsafeAddress = errors.New("webhook: address not allowed")
	// ErrNotFound: no endpoint with that id belongs to the caller.
	ErrNotFound = errors.New("webhook: endpoint not found")
	// ErrTooManyEndpoints: the owner already has the most endpoints a
	// Store may insert for it.
	ErrTooManyEndpoints = errors.New("webhook: too many endpoints")
	// ErrLeaseLost: Finish was called by a holder whose lease on the
	// delivery had run out and been taken by another (or the endpoint was
	// deleted meanwhile). The attempt is recorded; neither the delivery nor
	// the endpoint is changed.
	ErrLeaseLost = errors.New("webhook: delivery lease lost")
)

// Events lists the event names an endpoint can subscribe to
// (docs/decisions/webhooks.md, "Events and payloads").
func Events() []string {
	return []string{
		healthagents.EventEligibilityVerified,
		healthagents.EventPrescriptionValidated,
		healthagents.EventPrescriptionApproved,
	}
}

// The wire types of the endpoints API are package api's, declared once for
// the server and the SDK.
type (
	// Endpoint is a registered subscriber, as the API shows it. The secret
	// is shown once, at creation ([Created]).
	Endpoint = api.WebhookEndpoint
	// Created is the answer to a registration: the endpoint and its signing
	// secret, which is never shown again.
	Created = api.WebhookCreated
	// Attempt is one delivery attempt, as GET /webhooks/{id}/deliveries
	// shows it. Response bodies are never kept beyond ResponseLimit bytes.
	Attempt = api.WebhookAttempt
	// CreateRequest is the body of POST /webhooks.
	CreateRequest = api.WebhookCreateRequest
)

// Endpoint statuses and disable reasons.
const (
	StatusActive   = "active"
	StatusDisabled = "disabled"

	ReasonGone    = "gone"
	ReasonFailing = "failing"
)

// StoredEndpoint is an endpoint with its owner and its secret, as a Store
// keeps it (the secret encrypted, "sealed:…", with WithSecretSealer).
type StoredEndpoint struct {
	Endpoint
	// Owner is the tenant the endpoint belongs to (an organization or a key
	// lineage); never shown.
	Owner  string
	Secret string
}

// Attempt results.
const (
	ResultDelivered = "delivered"
	ResultRetrying  = "retrying"
	ResultFailed    = "failed"
	ResultDisabled  = "disabled"
)

// ResponseLimit bounds the reply body kept with an attempt.
const ResponseLimit = 256

// Message is one event for the outbox: the signed body and who it is for.
type Message struct {
	// ID is the webhook-id every attempt of this message carries.
	ID    string
	Event string
	// Owner restricts delivery to that owner's endpoints; "" means every
	// endpoint subscribed to Event.
	Owner     string
	Payload   []byte
	CreatedAt time.Time
}

// Job is a claimed delivery: one message for one endpoint.
type Job struct {
	MessageID, Event string
	EndpointID, URL  string
	Secret           string
	Payload          []byte
	// Attempts made before this one.
	Attempts int
	// FailingSince is when the endpoint started failing (zero: it is not).
	FailingSince time.Time
	// LeaseUntil is when the claim on this delivery runs out; the
	// Dispatcher never starts an attempt it could not finish before.
	LeaseUntil time.Time
}

// Outcome is the result of an attempt, for the Queue to record.
type Outcome struct {
	Job     Job
	Holder  string
	Attempt Attempt
	// Delivered ends the message successfully.
	Delivered bool
	// NextAt schedules another attempt; zero with !Delivered ends the
	// message as failed.
	NextAt time.Time
	// Disable, when not "", disables the endpoint with that reason.
	Disable string
	Now     time.Time
}

// ListParams pages a list.
type ListParams struct {
	Offset, Limit int
}

// Store keeps endpoints and the outbox. Package store implements it.
type Store interface {
	// InsertEndpoint adds an endpoint unless its owner already has limit
	// endpoints (then an error wrapping ErrTooManyEndpoints). The count and
	// the insert are atomic: concurrent inserts never exceed limit.
	InsertEndpoint(ctx context.Context, e StoredEndpoint, limit int) error
	// EndpointByID returns an endpoint, or an error wrapping ErrNotFound.
	EndpointByID(ctx context.Context, id string) (StoredEndpoint, error)
	// ListEndpoints pages owner's endpoints by creation time and returns
	// the total count.
	ListEndpoints(ctx context.Context, owner string, p ListParams) ([]Endpoint, int, error)
	// DeleteEndpoint removes an endpoint with its pending deliveries and
	// attempts (ErrNotFound when absent).
	DeleteEndpoint(ctx context.Context, id string) error
	// ListAttempts pages an endpoint's attempts, newest first.
	ListAttempts(ctx context.Context, endpointID string, p ListParams) ([]Attempt, int, error)
	// Enqueue writes one outbox row per active endpoint subscribed to
	// m.Event (of m.Owner, if set), in one transaction, and returns how
	// many.
	Enqueue(ctx context.Context, m Message) (int, error)
	// PseudonymKey returns the deployment's key patient ids are hashed
	// with, storing candidate first if there is none yet (first caller
	// wins). A Store should keep it sealed at rest.
	PseudonymKey(ctx context.Context, candidate []byte) ([]byte, error)
}

// ClaimParams says what a Claim may take.
type ClaimParams struct {
	// Holder names the claimer; Finish must present it.
	Holder string
	// Now decides which deliveries are due and which leases have run out.
	Now time.Time
	// LeaseUntil is when the leases taken run out.
	LeaseUntil time.Time
	// Limit bounds how many deliveries one Claim returns.
	Limit int
	// PerEndpoint bounds how many deliveries of one endpoint are leased at
	// once, counting the unexpired leases of every holder.
	PerEndpoint int
}

// Queue is the outbox as the Dispatcher drains it. Package store
// implements it.
type Queue interface {
	// Claim leases up to p.Limit due deliveries of active endpoints to
	// p.Holder until p.LeaseUntil, never more than p.PerEndpoint of one
	// endpoint in flight, giving each slot to the owner (then, within it,
	// the endpoint) with the fewest deliveries in flight, so that one
	// owner's backlog never holds another owner's deliveries back. A
	// delivery leased by someone else whose lease has not expired is never
	// returned.
	Claim(ctx context.Context, p ClaimParams) ([]Job, error)
	// Finish records an attempt and the new state of its delivery and
	// endpoint. When o.Holder no longer holds the delivery it records the
	// attempt only and returns an error wrapping ErrLeaseLost.
	Finish(ctx context.Context, o Outcome) error
	// Prune deletes attempts made before before, delivered or failed
	// messages finished before it, and the undelivered messages of
	// endpoints disabled before it, and says how many rows went.
	Prune(ctx context.Context, before time.Time) (int, error)
}

func knownEvent(name string) bool { return slices.Contains(Events(), name) }
