package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/ratelimit"
	"github.com/healthagents/healthagents/server"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

// TestV1BatchAndPharmacyGuards: batch validation draws on the prescription
// endpoint budget (shared with single validation), and the pharmacy
// attestation path needs the prescription scope at the gate.
func TestV1BatchAndPharmacyGuards(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		clock := &testClock{now: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
		p := ratelimit.DefaultPolicy()
		p.Endpoint[ratelimit.ClassPrescription] = 2
		lim, err := ratelimit.New(ratelimit.WithPolicy(p), ratelimit.WithClock(clock.Now))
		require.NoError(t, err)
		ks := newKeyServer(t, db, keyServerOpts{clock: clock, limiter: lim})
		rx, _ := ks.create(t, server.CreateKeyRequest{Scopes: []string{"prescription"}})
		elig, _ := ks.create(t, server.CreateKeyRequest{Scopes: []string{"eligibility"}})

		r := ks.call(t, "POST", "/api/v1/prescriptions/batch-validate", rx, map[string]any{})
		assert.Equal(t, "2", r.header.Get("X-RateLimit-Limit"), "the prescription figure, not the general 1000")
		assert.Equal(t, "1", r.header.Get("X-RateLimit-Remaining"))
		r = ks.call(t, "POST", "/api/v1/prescriptions/validate", rx, map[string]any{})
		assert.Equal(t, "0", r.header.Get("X-RateLimit-Remaining"), "one budget for single and batch validation")
		r = ks.call(t, "POST", "/api/v1/prescriptions/batch-validate", rx, map[string]any{})
		assert.Equal(t, http.StatusTooManyRequests, r.status)

		r = ks.call(t, "POST", "/api/v1/pharmacy/attestations", elig, map[string]any{})
		assert.Equal(t, http.StatusForbidden, r.status, "eligibility scope cannot write attestations")
		assert.Equal(t, "Forbidden: Insufficient permissions", r.detail())
		r = ks.call(t, "POST", "/api/v1/pharmacy/attestations", rx, map[string]any{})
		assert.Equal(t, http.StatusServiceUnavailable, r.status, "past the gate; no V1 in this server")
	})
}
