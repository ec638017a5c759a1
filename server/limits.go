package server

import (
	"context"
	"net/http"
	"slices"
)

// Request body limits, per route. Each route that takes a body reads at
// most its own limit, sized to what the route needs, and a larger body gets
// 413 `Request body too large: the limit is N bytes` once the read reaches
// the limit. The limit wraps the body before anything reads it (the
// Idempotency-Key layer included), so no route can be made to hold more
// than its own limit per request. docs/decisions/server.md ("Memory") adds
// these up into the worst case.
const (
	// SmallBodyBytes bounds the bodies of the routes that take a few
	// short JSON fields: key creation, allow-lists (1000 IPv6 prefixes fit),
	// organization registration, webhook registration, round keys.
	SmallBodyBytes = 64 << 10
	// RoundBodyBytes bounds the share and reveal messages of a secure
	// aggregation round: one entry per other participant, under 1 KiB each
	// with 256-byte organization ids, so about a thousand participants.
	RoundBodyBytes = 1 << 20
	// BatchBodyBytes bounds a v1 batch validation: 25 prescriptions of at
	// most 10 medications, every string at its length limit and written
	// as \u escapes, take about 300 KiB.
	BatchBodyBytes = 1 << 20
)

// Sizes of route.Body that are settings rather than constants.
const (
	// bodySingleRecord: one envelope, WithMaxBodyBytes (default
	// DefaultMaxBodyBytes).
	bodySingleRecord int64 = -1
	// bodyGradient: FederatedAPI.MaxGradientBytes (default
	// DefaultMaxGradientBytes).
	bodyGradient int64 = -2
)

// bodyLimit is the most a route reads, or 0 for a route without a body
// (GET).
func (s *srv) bodyLimit(rt route) int64 {
	if rt.Method == http.MethodGet || rt.Method == http.MethodHead {
		return 0
	}
	switch {
	case rt.Body == bodyGradient:
		if f := s.deps.FederatedAPI; f != nil && f.MaxGradientBytes > 0 {
			return f.MaxGradientBytes
		}
		return DefaultMaxGradientBytes
	case rt.Body > 0:
		return rt.Body
	}
	return s.opts.maxBody
}

type bodyLimitKey struct{}

// limitBody caps the request body at limit before anything reads it, and
// tells read the limit so its 413 names it. It sets the body on a copy of
// the request: net/http decides after the handler, from the original
// request's own body, whether to drain what the handler left unread (a
// small rest) or close the connection (a large one), and a wrapped body
// there would make it drain whatever a client announced, up to its whole
// Content-Length, before answering (TestIdempotencyKeyReadsNoBodyBeforeTheGate).
func limitBody(limit int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(context.WithValue(r.Context(), bodyLimitKey{}, limit))
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		next.ServeHTTP(w, r)
	})
}

// routeBodyLimit is the limit limitBody set for r, or 0.
func routeBodyLimit(r *http.Request) int64 {
	n, _ := r.Context().Value(bodyLimitKey{}).(int64)
	return n
}

// withTooLarge adds 413 to the documented errors of a route with a body.
func withTooLarge(errs []int) []int {
	if slices.Contains(errs, http.StatusRequestEntityTooLarge) {
		return errs
	}
	out := append(slices.Clone(errs), http.StatusRequestEntityTooLarge)
	slices.Sort(out)
	return out
}
