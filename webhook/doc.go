// Package webhook delivers the service's events (docs/decisions/webhooks.md) to
// subscriber endpoints the way the Standard Webhooks specification
// describes: signed, durable and at least once.
//
// A [Registry] keeps endpoints (POST /webhooks and friends): it checks each
// URL against an address policy (no loopback, private, link-local, CGNAT,
// multicast or cloud-metadata destinations; HTTPS required unless allowed
// otherwise) and issues a whsec_ signing secret shown once. The Registry is
// also the service's healthagents.EventSink: Emit turns an event into the
// delivered payload — the patient id replaced by a keyed pseudonym that
// differs for each owner ([OwnerPseudonym]), only
// allow-listed non-medical fields kept — and writes one outbox row per
// subscribed endpoint in one transaction before it returns. A caller that
// stores the result an event reports uses [Registry.Prepare] instead, writes
// the message in the transaction that stores the result (package store's
// PrescriptionOutbox does, for v1 validations), and reports the committed
// rows to [Registry.Enqueued].
//
// A [Dispatcher] drains the outbox with a pool of attempt slots, claiming
// due deliveries under a lease whenever a slot frees; the [Queue] keeps at
// most two deliveries per endpoint in flight and serves the least loaded
// owner first, so a slow receiver delays no one else. It POSTs each
// delivery with the headers webhook-id (stable across
// retries and restarts), webhook-timestamp and webhook-signature, follows no
// redirect, dials only addresses the policy allows (checked again at connect
// time, so DNS rebinding cannot reach an internal address), and records every
// attempt. A 2xx is delivered; a 410 disables the endpoint; anything else is
// retried on a schedule like Svix's (each delay spread by up to ±20 %),
// honouring Retry-After, and an endpoint
// failing for five days is disabled.
//
// Storage sits behind the [Store] interface, implemented by package store.
package webhook
