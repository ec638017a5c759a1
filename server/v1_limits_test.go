package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/api"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/ratelimit"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/server"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

// TestV1BatchAndPharmacyGuards: batch validation draws on the prescription
// endpoint budget (shared with single validation), one unit per
// prescription, and the pharmacy attestation path needs the prescription
// scope at the gate.
func TestV1BatchAndPharmacyGuards(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		clock := &testClock{now: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
		p := ratelimit.DefaultPolicy()
		p.Endpoint[ratelimit.ClassPrescription] = 2
		lim, err := ratelimit.New(ratelimit.WithPolicy(p), ratelimit.WithClock(clock.Now))
		require.NoError(t, err)
		ks := newKeyServer(t, db, keyServerOpts{clock: clock, limiter: lim})
		rx, _ := ks.create(t, api.CreateKeyRequest{Scopes: []string{"prescription"}})
		elig, _ := ks.create(t, api.CreateKeyRequest{Scopes: []string{"eligibility"}})
		defaults, _ := ks.create(t, api.CreateKeyRequest{})
		pharm, _ := ks.create(t, api.CreateKeyRequest{Scopes: []string{"pharmacy"}})

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
		for name, key := range map[string]string{"prescription": rx, "default": defaults} {
			r = ks.call(t, "POST", "/api/v1/pharmacy/attestations", key, map[string]any{})
			assert.Equal(t, http.StatusForbidden, r.status, "a %s-scoped key cannot write attestations", name)
		}
		r = ks.call(t, "POST", "/api/v1/pharmacy/attestations", pharm, map[string]any{})
		assert.Equal(t, http.StatusServiceUnavailable, r.status, "past the gate; no V1 in this server")
		r = ks.call(t, "POST", "/api/v1/prescriptions/validate", pharm, map[string]any{})
		assert.Equal(t, http.StatusForbidden, r.status, "a pharmacy key validates no prescriptions")
	})

	t.Run("a batch of n costs n", func(t *testing.T) {
		t.Parallel()
		testBatchCostsN(t)
	})
}

// testBatchCostsN runs real validations (v1SharedApp) under a prescription
// limit of 10/min on a frozen clock. The prescriptions are rejected ones
// (a major interaction), which are stored and emit prescription.validated
// but need no proof.
func testBatchCostsN(t *testing.T) {
	db := storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)})
	clock := &testClock{now: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
	p := ratelimit.DefaultPolicy()
	p.Endpoint[ratelimit.ClassPrescription] = 10
	lim, err := ratelimit.New(ratelimit.WithPolicy(p), ratelimit.WithClock(clock.Now))
	require.NoError(t, err)
	e := newV1EnvWithLimiter(t, db, lim)
	ks := &keyServer{url: e.url}
	// The registry is per owner: the keys below share an organization.
	c := e.client(t, apikey.CreateParams{Organization: "clinic-b"})
	require.NoError(t, c.PutPatient(t.Context(), e.seal(t, v1Record("PT-B1", func(r *record.Record) { r.Medications = []string{"11289"} })))) // warfarin
	key, _, err := e.keys.Create(t.Context(), apikey.CreateParams{Env: apikey.Dev, Organization: "clinic-b"})
	require.NoError(t, err)
	batch := func(n int) map[string]any {
		rxs := make([]healthagents.V1PrescriptionRequest, n)
		for i := range rxs {
			rxs[i] = healthagents.V1PrescriptionRequest{PatientID: "PT-B1", ProviderNPI: v1Provider, Medications: []healthagents.V1Medication{v1Med("12345-6789-0", "ibuprofen")}}
		}
		return map[string]any{"prescriptions": rxs}
	}
	validated := func() int { return e.events.count(healthagents.EventPrescriptionValidated) }

	r := ks.call(t, "POST", "/api/v1/prescriptions/batch-validate", key, batch(8))
	require.Equal(t, http.StatusOK, r.status, "%v", r.body)
	assert.Equal(t, 8, validated())
	assert.Equal(t, "10", r.header.Get("X-RateLimit-Limit"))
	assert.Equal(t, "2", r.header.Get("X-RateLimit-Remaining"), "8 units taken: the gate's and 7 more")

	r = ks.call(t, "POST", "/api/v1/prescriptions/batch-validate", key, batch(5))
	assert.Equal(t, http.StatusTooManyRequests, r.status)
	assert.Equal(t, "0", r.header.Get("X-RateLimit-Remaining"))
	assert.Equal(t, "18", r.header.Get("Retry-After"), "the 4 units past the gate's, with 1 left: 3 missing at one per 6 s")
	assertRetryAgrees(t, r.header, r.detail())
	assert.Equal(t, 8, validated(), "no validation ran")

	// The refused batch's gate unit is not given back: 1 left.
	single := batch(1)["prescriptions"].([]healthagents.V1PrescriptionRequest)[0]
	r = ks.call(t, "POST", "/api/v1/prescriptions/validate", key, single)
	require.Equal(t, http.StatusOK, r.status, "%v", r.body)
	assert.Equal(t, "0", r.header.Get("X-RateLimit-Remaining"))
	assert.Equal(t, 9, validated())
	r = ks.call(t, "POST", "/api/v1/prescriptions/validate", key, single)
	assert.Equal(t, http.StatusTooManyRequests, r.status)

	// A batch larger than the limit can never fit: 400, nothing run.
	other, _, err := e.keys.Create(t.Context(), apikey.CreateParams{Env: apikey.Dev, Organization: "clinic-b"})
	require.NoError(t, err)
	r = ks.call(t, "POST", "/api/v1/prescriptions/batch-validate", other, batch(11))
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.Equal(t, "Validation error: field 'prescriptions' holds 11 items; this caller's rate limit admits at most 10 per minute", r.detail())
	assert.Equal(t, "9", r.header.Get("X-RateLimit-Remaining"), "only the gate's unit")
	assert.Equal(t, 9, validated())
	// A batch of one costs one, like a single validation.
	r = ks.call(t, "POST", "/api/v1/prescriptions/batch-validate", other, batch(1))
	require.Equal(t, http.StatusOK, r.status, "%v", r.body)
	assert.Equal(t, "8", r.header.Get("X-RateLimit-Remaining"))
	assert.Equal(t, 10, validated())
}

// newV1EnvWithLimiter is newV1Env with the given limiter.
func newV1EnvWithLimiter(t *testing.T, db *store.DB, lim *ratelimit.Limiter) *v1Env {
	t.Helper()
	a := v1SharedApp(t)
	ks, err := store.NewKeyStore(db)
	require.NoError(t, err)
	keys, err := apikey.New(ks)
	require.NoError(t, err)
	t.Cleanup(func() { keys.Close(context.Background()) })
	sink := &v1Sink{}
	svc, err := healthagents.New(a.Keyring, healthagents.WithAttestor(v1Attestor(t, a)), healthagents.WithEvents(sink))
	require.NoError(t, err)
	ps, err := store.NewPatientStore(db)
	require.NoError(t, err)
	rs, err := store.NewPrescriptionStore(db)
	require.NoError(t, err)
	v1, err := healthagents.NewV1(svc, ps, rs)
	require.NoError(t, err)
	h, err := server.New(server.Deps{Service: svc, Keys: keys, Limiter: lim, V1: v1, Chain: a.Ledger})
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return &v1Env{a: a, url: ts.URL, keys: keys, events: sink}
}
