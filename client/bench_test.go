package client_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/healthagents/healthagents/client"
)

// BenchmarkVerifyEligibility measures the client's own cost per call (encode,
// headers, retry policy, decode) over loopback HTTP against a server that
// answers at once.
func BenchmarkVerifyEligibility(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, eligibleBody)
	}))
	defer srv.Close()
	c, err := client.New(srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.VerifyEligibility(b.Context(), testEnv, "PROC001"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkErrorResponse measures a call answered with an error body.
func BenchmarkErrorResponse(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Limit", "100")
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset", "1795000000")
		writeJSON(w, http.StatusNotFound, `{"detail":"PATIENT_NOT_FOUND: patient is not registered"}`)
	}))
	defer srv.Close()
	c, err := client.New(srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Health(b.Context()); !client.IsNotFound(err) {
			b.Fatal(err)
		}
	}
}
