// Package server serves the healthagents HTTP API over net/http.
//
// [New] returns an http.Handler for the whole endpoint set; it never opens a
// listener, so a team can mount it in its own binary beside its own routes
// (see examples/mount). Handlers decode and validate the request, call one
// agent through [healthagents.Service], and encode the result; no domain rule
// lives here.
//
// Every error body is {"detail": "..."} and nothing else. The mapping from
// [healthagents.Code] to HTTP status is the table in errors.go.
package server
