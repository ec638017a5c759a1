package app_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/record"
)

// lockedBuffer is a bytes.Buffer safe for the dispatcher's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestNoPlaintextInLogsOfAFullRun runs the real service (app.Open, JSON logs
// at debug level) through every family that takes patient data — root
// eligibility and prescription, the v1 registry, eligibility and
// prescription, a federated submission, webhook deliveries to a receiver —
// and through their refusals, then greps everything that left the service
// (all logs, every webhook body received, every response) for the
// distinctive plaintext values it put in the records.
func TestNoPlaintextInLogsOfAFullRun(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	const (
		patientID  = "PT-SENTINEL-4242"
		memberID   = "MBR-SENTINEL-5151"
		birthDate  = "1931-07-19"
		condition  = "Z99.SENTINEL"
		allergen   = "sentinelallergen"
		diagnosis  = "DX-SENTINEL-31"
		observed   = 987.654
		indication = "INDICATION-SENTINEL-bronchitis"
		badField   = "SENTINEL-NOT-A-DATE"
		// unknownMed is a medication the service cannot identify: the
		// caller's own entry comes back to it, named, in the answer (issue
		// 25), and nowhere else.
		unknownMed = "UNKNOWN-MED-SENTINEL-77"
	)
	var logs lockedBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a, err := app.OpenWithOutput(ctx, app.Config{DataDir: keyedDir(t), LogLevel: slog.LevelDebug}, logger, io.Discard)
	require.NoError(t, err)
	closed := false
	defer func() {
		if !closed {
			a.Close()
		}
	}()
	ts := httptest.NewServer(a.Handler)
	defer ts.Close()

	var hooksMu sync.Mutex
	var hooks []string
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		hooksMu.Lock()
		hooks = append(hooks, string(b))
		hooksMu.Unlock()
	}))
	defer receiver.Close()

	key, _, err := a.Keys.Create(ctx, apikey.CreateParams{Env: apikey.Dev, Organization: "clinic-phi", Tier: apikey.Enterprise, Scopes: []apikey.Scope{
		apikey.ScopeEligibility, apikey.ScopePrescription, apikey.ScopeFederated, apikey.ScopeWebhooks, apikey.ScopePatients,
	}})
	require.NoError(t, err)

	var responses strings.Builder
	call := func(method, path string, body any) (int, map[string]any) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, err := json.Marshal(body)
			require.NoError(t, err)
			rd = bytes.NewReader(b)
		}
		req, err := http.NewRequestWithContext(ctx, method, ts.URL+path, rd)
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		responses.Write(raw)
		var out map[string]any
		require.NoError(t, json.Unmarshal(raw, &out), string(raw))
		return resp.StatusCode, out
	}
	seal := func(r *record.Record) *cipher.Envelope {
		t.Helper()
		plain, err := r.Marshal()
		require.NoError(t, err)
		env, err := cipher.Seal(r.PatientID, plain, a.Keyring)
		require.NoError(t, err)
		return &env
	}
	rec := func(mut func(*record.Record)) *record.Record {
		r := &record.Record{
			Schema: "healthagents/record/v1", PatientID: patientID, BirthDate: birthDate, Sex: "female",
			Coverage: &record.Coverage{
				PayerID: "60054", PlanID: "PPO-GOLD", MemberID: memberID, Status: "active",
				Start: "2026-01-01", End: "2099-12-31", Deductible: 1500, DeductibleMet: 200, Copay: 25,
			},
			Conditions: []string{condition}, Allergies: []string{"food: " + allergen},
			Observations: map[string]float64{"glucose": observed, "bmi": 33.6}, Diagnosis: diagnosis,
		}
		if mut != nil {
			mut(r)
		}
		return r
	}

	status, body := call("POST", "/webhooks", map[string]any{"url": receiver.URL + "/hook",
		"events": []string{"eligibility.verified", "prescription.validated", "prescription.approved"}})
	require.Equal(t, 201, status, "%v", body)

	env := seal(rec(nil))
	// Root family: a success of each, and refusals.
	status, body = call("POST", "/verify-eligibility", map[string]any{"patient_data": env, "procedure_code": "PROC002"})
	require.Equal(t, 200, status, "%v", body)
	status, body = call("POST", "/validate-prescription", map[string]any{"patient_data": env, "drug_code": "6809"})
	require.Equal(t, 200, status, "%v", body)
	status, body = call("POST", "/validate-prescription", map[string]any{"patient_data": seal(rec(func(r *record.Record) {
		r.Medications = []string{unknownMed}
	})), "drug_code": "6809"})
	require.Equal(t, 200, status, "%v", body)
	assert.Equal(t, false, body["valid"], "an unidentified medication is never valid")
	bad := *env
	bad.DataHash = strings.Repeat("1", 64)
	status, _ = call("POST", "/verify-eligibility", map[string]any{"patient_data": &bad, "procedure_code": "PROC002"})
	assert.Equal(t, 400, status)
	status, _ = call("POST", "/validate-prescription", map[string]any{"patient_data": seal(rec(func(r *record.Record) {
		r.Allergies = []string{"penicillin"}
	})), "drug_code": "723"})
	assert.Equal(t, 422, status, "an allergy contraindication")
	malformed := []byte(`{"schema":"healthagents/record/v1","patient_id":"` + patientID + `","birth_date":"` + badField + `","coverage":{"member_id":"` + memberID + `"}}`)
	menv, err := cipher.Seal(patientID, malformed, a.Keyring)
	require.NoError(t, err)
	status, _ = call("POST", "/verify-eligibility", map[string]any{"patient_data": &menv, "procedure_code": "PROC002"})
	assert.Equal(t, 400, status, "a malformed record")

	// v1 family: the registry, eligibility and prescription, and refusals.
	status, body = call("PUT", "/api/v1/patients/"+patientID, env)
	require.Equal(t, 200, status, "%v", body)
	status, body = call("POST", "/api/v1/eligibility/verify", map[string]any{"patient_id": patientID, "member_id": memberID,
		"procedure_code": "PROC002", "provider_npi": "1234567893"})
	require.Equal(t, 200, status, "%v", body)
	status, _ = call("POST", "/api/v1/eligibility/verify", map[string]any{"patient_id": patientID, "member_id": "W000000000",
		"procedure_code": "PROC002", "provider_npi": "1234567893"})
	assert.GreaterOrEqual(t, status, 400, "a member id that does not match")
	status, body = call("POST", "/api/v1/prescriptions/validate", map[string]any{"patient_id": patientID, "provider_npi": "1234567893",
		"indication": indication, "medications": []map[string]any{{"ndc_code": "0071-0155-23", "name": "atorvastatin",
			"strength": "20 mg", "quantity": 30, "days_supply": 30, "refills": 3}}})
	require.Equal(t, 200, status, "%v", body)

	// Federated: one submission of labelled records.
	fedEnv := seal(rec(func(r *record.Record) { r.Diagnosis = "positive" }))
	status, body = call("POST", "/submit-federated-update", map[string]any{"patient_data_list": []any{fedEnv}, "round_number": 0})
	require.Equal(t, 200, status, "%v", body)

	// Webhook deliveries: wait for the events of the calls above.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		hooksMu.Lock()
		n := len(hooks)
		hooksMu.Unlock()
		if n >= 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	hooksMu.Lock()
	delivered := strings.Join(hooks, "\n")
	hooksMu.Unlock()
	require.Contains(t, delivered, `"eligibility.verified"`, "webhooks were delivered")
	require.Contains(t, delivered, `"patient_id"`, "deliveries carry the hashed patient id")

	require.NoError(t, a.Close())
	closed = true
	all := map[string]string{"logs": logs.String(), "webhook bodies": delivered, "responses": responses.String()}
	// The run logged at debug level (the service has few debug lines; the
	// request lines of every call are there).
	for _, route := range []string{"POST /verify-eligibility", "PUT /api/v1/patients/{patient_id}", "POST /api/v1/prescriptions/validate", "POST /submit-federated-update"} {
		require.Contains(t, all["logs"], `"route":"`+route+`"`, "the logs were captured")
	}
	for where, text := range all {
		for _, secret := range []string{memberID, birthDate, condition, allergen, diagnosis, "987.654", indication, badField, env.EncryptedData} {
			assert.NotContains(t, text, secret, "%s hold %q", where, secret)
		}
		if where != "responses" { // the v1 registry answers the caller's own id back
			assert.NotContains(t, text, patientID, "%s hold the raw patient_id", where)
			assert.NotContains(t, text, unknownMed, "%s hold the unidentified medication", where)
		} else {
			assert.Contains(t, text, unknownMed, "the answer names the caller's unidentified entry")
		}
	}
}
