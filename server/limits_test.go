package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/api"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/server"
	"github.com/healthagents/healthagents/store/storetest"
)

// padded is a JSON object of exactly n bytes.
func padded(n int) json.RawMessage {
	const frame = len(`{"pad":""}`)
	return json.RawMessage(`{"pad":"` + strings.Repeat("a", n-frame) + `"}`)
}

func tooLarge(limit int) string {
	return fmt.Sprintf("Request body too large: the limit is %d bytes", limit)
}

// TestSmallRoutesHaveSmallBodyLimits: the routes that take a few short
// fields read at most 64 KiB (the round share and reveal messages 1 MiB),
// not the 2 MiB of a single-record route, with or without an
// Idempotency-Key; a body at the limit is read whole.
func TestSmallRoutesHaveSmallBodyLimits(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)})
	ks := newKeyServer(t, db, keyServerOpts{noLimiter: true})
	key, keyID := ks.create(t, api.CreateKeyRequest{})
	fed := newFedServer(t, storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)}), testFedConfig(), nil, nil, nil)
	fed.register(t, "hospital-a")
	fedKey := fed.keys["hospital-a"]
	hooks := webhookServer(t, storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)}))
	hookKey, _ := hooks.create(t, api.CreateKeyRequest{Organization: "clinic-a"})

	for _, tc := range []struct {
		name, base, path, token string
		limit                   int
	}{
		{"key creation", ks.url, "/auth/keys", adminToken, server.SmallBodyBytes},
		{"whitelist", ks.url, "/api/keys/" + keyID + "/whitelist", key, server.SmallBodyBytes},
		{"organizations", fed.url, "/api/v1/federated/organizations", fedKey, server.SmallBodyBytes},
		{"round keys", fed.url, "/api/v1/federated/rounds/0/keys", fedKey, server.SmallBodyBytes},
		{"round shares", fed.url, "/api/v1/federated/rounds/0/shares", fedKey, server.RoundBodyBytes},
		{"round reveals", fed.url, "/api/v1/federated/rounds/0/reveals", fedKey, server.RoundBodyBytes},
		{"webhook registration", hooks.url, "/webhooks", hookKey, server.SmallBodyBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &keyServer{url: tc.base}
			for _, idem := range [][]string{nil, {"Idempotency-Key: over-" + tc.name}} {
				r := c.call(t, "POST", tc.path, tc.token, padded(tc.limit+1), idem...)
				assert.Equal(t, http.StatusRequestEntityTooLarge, r.status, "%s %v", idem, r.body)
				assert.Equal(t, tooLarge(tc.limit), r.detail())
			}
			// At the limit the body is read and judged on its content.
			for _, idem := range [][]string{nil, {"Idempotency-Key: at-" + tc.name}} {
				r := c.call(t, "POST", tc.path, tc.token, padded(tc.limit), idem...)
				assert.NotEqual(t, http.StatusRequestEntityTooLarge, r.status, "%s %v", idem, r.body)
			}
		})
	}

	// 1000 allow-list entries, the most a key takes, fit the limit even as
	// IPv6 prefixes in their longest form; the 1001st is refused.
	ips := make([]string, 1001)
	ips[0] = "127.0.0.1/32" // the test client, so the key still works
	for i := 1; i < len(ips); i++ {
		ips[i] = fmt.Sprintf("fd00:ffff:ffff:ffff:ffff:ffff:ffff:%04x/128", i)
	}
	r := ks.call(t, "POST", "/api/keys/"+keyID+"/whitelist", key, map[string]any{"ips": ips[:1000]})
	require.Equal(t, http.StatusOK, r.status, r.body)
	assert.Len(t, r.body["ips"], 1000)
	r = ks.call(t, "POST", "/api/keys/"+keyID+"/whitelist", key, map[string]any{"ips": ips})
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.Equal(t, "Validation error: at most 1000 allow-list entries", r.detail())
}

// TestFederatedBodyLimits: a submission of more than 5000 records is 413
// naming the count, a body beyond 39 MiB is 413 naming the limit, and a
// gradient body beyond its limit (16 MiB by default) is 413.
func TestFederatedBodyLimits(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)})
	s := newFedServer(t, db, testFedConfig(), nil, nil, func(f *server.FederatedAPI) { f.MaxGradientBytes = 1 << 20 })
	s.register(t, "hospital-a")
	res := s.ks.call(t, "POST", "/submit-federated-update", "", padded(server.MaxFederatedBodyBytes+1))
	assert.Equal(t, http.StatusRequestEntityTooLarge, res.status)
	assert.Equal(t, tooLarge(server.MaxFederatedBodyBytes), res.detail())

	res = s.ks.call(t, "POST", "/api/v1/federated/gradients", s.keys["hospital-a"], padded(1<<20+1))
	assert.Equal(t, http.StatusRequestEntityTooLarge, res.status)
	assert.Equal(t, tooLarge(1<<20), res.detail())
	res = s.ks.call(t, "POST", "/api/v1/federated/gradients", s.keys["hospital-a"], padded(1<<20))
	assert.Equal(t, http.StatusBadRequest, res.status, "at the limit the body is read: %v", res.body)

	// The default gradient limit, 16 MiB.
	d := newFedServer(t, storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)}), testFedConfig(), nil, nil, nil)
	d.register(t, "hospital-a")
	res = d.ks.call(t, "POST", "/api/v1/federated/gradients", d.keys["hospital-a"], padded(server.DefaultMaxGradientBytes+1))
	assert.Equal(t, http.StatusRequestEntityTooLarge, res.status)
	assert.Equal(t, tooLarge(server.DefaultMaxGradientBytes), res.detail())
}

// TestIdempotencyKeyReadsNoBodyBeforeTheGate: a request with an
// Idempotency-Key that is shed at the admission gate is answered 503
// without the server reading its body; the client here never sends the
// body it announced, so a server that buffered it first would never
// answer. (The deadline only catches that hang; nothing is timed.)
func TestIdempotencyKeyReadsNoBodyBeforeTheGate(t *testing.T) {
	t.Parallel()
	att := &blockingAttestor{entered: make(chan struct{}, 4), release: make(chan struct{})}
	f := setup(t, setupOpts{
		svcOpts:    []healthagents.Option{healthagents.WithAttestor(att)},
		serverOpts: []server.Option{server.WithMaxInFlight(1), server.WithAdmissionQueue(0, time.Second)},
	})
	t.Cleanup(att.releaseAll)
	body := map[string]any{"patient_data": f.seal(t, baseRecord()), "procedure_code": "PROC001"}
	done := make(chan int, 1)
	go func() {
		status, _, _ := f.do(t, "POST", "/verify-eligibility", body)
		done <- status
	}()
	<-att.entered // the only proof slot is taken

	conn, err := net.Dial("tcp", strings.TrimPrefix(f.url, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(time.Minute)))
	_, err = fmt.Fprintf(conn, "POST /verify-eligibility HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"+
		"Idempotency-Key: unsent-body\r\nContent-Length: 1000000\r\n\r\n")
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "no answer: the server waited for the body")
	defer resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))

	att.releaseAll()
	assert.Equal(t, http.StatusOK, <-done)
}

// TestV1MedicationsBound: a v1 prescription of more than 10 medications is
// refused before any lookup; 10 pass that check (the unknown patient is
// what answers then).
func TestV1MedicationsBound(t *testing.T) {
	t.Parallel()
	e := newV1Env(t, storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)}))
	key, _, err := e.keys.Create(t.Context(), apikey.CreateParams{Env: apikey.Dev, Organization: "clinic-a", Scopes: []apikey.Scope{apikey.ScopePrescription}})
	require.NoError(t, err)

	rx := func(n int) map[string]any {
		meds := make([]map[string]any, n)
		for i := range meds {
			meds[i] = map[string]any{"ndc_code": fmt.Sprintf("0071-0155-%02d", 20+i), "name": "atorvastatin", "strength": "10 mg", "quantity": 30, "days_supply": 30, "refills": 0}
		}
		return map[string]any{"patient_id": "PT-000123", "provider_npi": "1234567893", "medications": meds}
	}
	c := &keyServer{url: e.url}
	r := c.call(t, "POST", "/api/v1/prescriptions/validate", key, rx(healthagents.MaxMedications+1))
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.Equal(t, "Validation error: field 'medications' holds more than 10 medications", r.detail())
	r = c.call(t, "POST", "/api/v1/prescriptions/validate", key, rx(healthagents.MaxMedications))
	assert.NotContains(t, r.detail(), "medications", "10 medications pass the bound: %v", r.body)
	assert.Equal(t, http.StatusNotFound, r.status, r.body)
}

// TestV1BodyLimits: the v1 routes that carry no envelope read at most what
// their bounded fields can take (64 KiB; a batch 1 MiB), PUT
// /api/v1/patients one maximal envelope. A body one byte over is 413 with
// the limit named; the largest legitimate body (every string at its length
// limit, every character written as a \u escape) stays under the limit.
func TestV1BodyLimits(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)})
	e := newV1Env(t, db)
	key, _, err := e.keys.Create(t.Context(), apikey.CreateParams{Env: apikey.Dev, Organization: "clinic-l", Scopes: apikey.AllScopes})
	require.NoError(t, err)
	c := &keyServer{url: e.url}

	// Go's encoder writes '<' as \u003c: six bytes a character.
	worst := func(n int) string { return strings.Repeat("<", n) }
	maxMeds := make([]healthagents.V1Medication, 10)
	for i := range maxMeds {
		maxMeds[i] = healthagents.V1Medication{NDCCode: worst(64), Name: worst(64), Strength: worst(64),
			Quantity: 5000, DaysSupply: 365, Refills: 11}
	}
	maxRx := healthagents.V1PrescriptionRequest{PatientID: worst(64), ProviderNPI: worst(64),
		Medications: maxMeds, Indication: worst(256), PharmacyNPI: worst(64)}
	batch := make([]healthagents.V1PrescriptionRequest, healthagents.MaxBatch)
	for i := range batch {
		batch[i] = maxRx
	}
	envelope := healthagents.PatientData{PatientID: "PT-1", EncryptedData: strings.Repeat("A", cipher.MaxEncryptedSize),
		IPFSCID: worst(128), DataHash: worst(64)}

	for _, tc := range []struct {
		name, method, path string
		limit              int
		largest            any // the largest legitimate body
	}{
		{"eligibility", "POST", "/api/v1/eligibility/verify", server.SmallBodyBytes,
			healthagents.V1EligibilityRequest{PatientID: worst(64), MemberID: worst(64), ProcedureCode: worst(64), ProviderNPI: worst(64)}},
		{"prescription", "POST", "/api/v1/prescriptions/validate", server.SmallBodyBytes, maxRx},
		{"batch", "POST", "/api/v1/prescriptions/batch-validate", server.BatchBodyBytes, map[string]any{"prescriptions": batch}},
		{"pharmacy attestation", "POST", "/api/v1/pharmacy/attestations", server.SmallBodyBytes,
			map[string]any{"pharmacy_npi": worst(64), "ndc_code": worst(64), "estimated_availability": worst(64)}},
		{"patient registration", "PUT", "/api/v1/patients/PT-1", server.DefaultMaxBodyBytes, envelope},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.call(t, tc.method, tc.path, key, padded(tc.limit+1))
			assert.Equal(t, http.StatusRequestEntityTooLarge, r.status, "%v", r.body)
			assert.Equal(t, tooLarge(tc.limit), r.detail())

			b, err := json.Marshal(tc.largest)
			require.NoError(t, err)
			require.Less(t, len(b), tc.limit, "the largest legitimate body fits")
			r = c.call(t, tc.method, tc.path, key, json.RawMessage(b))
			assert.NotEqual(t, http.StatusRequestEntityTooLarge, r.status, "%v", r.body)
		})
	}
}
