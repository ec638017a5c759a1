package api

import "time"

// Webhook endpoints: POST/GET/DELETE /webhooks and
// GET /webhooks/{id}/deliveries.

// WebhookCreateRequest is the body of POST /webhooks.
type WebhookCreateRequest struct {
	URL    string   `json:"url" doc:"HTTPS URL events are POSTed to. It may not resolve to a loopback, private, link-local, CGNAT, multicast or metadata address." format:"uri" maxLength:"2048" example:"https://hooks.example.com/healthagents"`
	Events []string `json:"events" doc:"Event names to subscribe to." enum:"eligibility.verified,prescription.validated,prescription.approved" minItems:"1"`
}

// WebhookEndpoint is a registered subscriber, as the API shows it. The
// secret is shown once, at creation ([WebhookCreated]).
type WebhookEndpoint struct {
	ID        string    `json:"id" doc:"Endpoint id." example:"ep_3j2k5m7n9p1q3r5s"`
	URL       string    `json:"url" doc:"Where events are POSTed." format:"uri" example:"https://hooks.example.com/healthagents"`
	Events    []string  `json:"events" doc:"Subscribed event names." enum:"eligibility.verified,prescription.validated,prescription.approved"`
	CreatedAt time.Time `json:"created_at" doc:"Creation time (UTC)."`
	// Status is "active" or "disabled".
	Status string `json:"status" doc:"active, or disabled (after a 410 reply or five days of failed deliveries); a disabled endpoint gets no new events." enum:"active,disabled"`
	// DisabledAt and DisabledReason say when and why an endpoint stopped
	// receiving events.
	DisabledAt     time.Time `json:"disabled_at,omitzero" doc:"When the endpoint was disabled."`
	DisabledReason string    `json:"disabled_reason,omitempty" doc:"Why: gone (the receiver answered 410) or failing (no successful delivery for the disable period)."`
}

// WebhookCreated is the answer to a registration: the endpoint and its
// signing secret, which is never shown again.
type WebhookCreated struct {
	WebhookEndpoint
	Secret string `json:"secret" doc:"Signing secret, shown once: whsec_ followed by the Base64 of 32 random bytes. Verify each delivery's webhook-signature with it (Standard Webhooks)." example:"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYo="`
}

// WebhookAttempt is one delivery attempt, as GET /webhooks/{id}/deliveries
// shows it. Response bodies are never kept beyond 256 bytes
// (webhook.ResponseLimit).
type WebhookAttempt struct {
	ID         string    `json:"id" doc:"Attempt id."`
	MessageID  string    `json:"message_id" doc:"The webhook-id header: the same for every attempt of one event to this endpoint."`
	EndpointID string    `json:"endpoint_id"`
	Event      string    `json:"event" doc:"Event name."`
	Number     int       `json:"attempt" doc:"1 for the first attempt of a message, then 2, 3, …" minimum:"1"`
	At         time.Time `json:"timestamp" doc:"When the attempt started (UTC)."`
	// StatusCode is the receiver's HTTP status, 0 when none came back.
	StatusCode int   `json:"status_code" doc:"HTTP status of the reply; 0 when there was none (timeout, refused connection)."`
	LatencyMS  int64 `json:"latency_ms" doc:"Milliseconds from sending to the reply or the failure."`
	// Result is delivered, retrying, failed (no retry left) or disabled.
	Result string `json:"result" doc:"delivered; retrying (another attempt is scheduled); failed (no attempt left); disabled (the endpoint was disabled)." enum:"delivered,retrying,failed,disabled"`
	// Error classifies a failure: timeout, connection, address_refused,
	// tls, redirect, http_status, secret; empty for a delivery.
	Error string `json:"error,omitempty" doc:"Failure class: timeout, connection, address_refused, tls, redirect, http_status, secret (the stored secret could not be opened; nothing was sent)." enum:"timeout,connection,address_refused,tls,redirect,http_status,secret"`
	// Response is the start of the reply body (at most 256 bytes).
	Response    string    `json:"response,omitempty" doc:"The first bytes of the reply body (at most 256)."`
	NextAttempt time.Time `json:"next_attempt_at,omitzero" doc:"When the next attempt is due, while retrying."`
}
