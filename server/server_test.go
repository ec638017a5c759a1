package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/server"
)

// syncBuffer collects log output from concurrent handlers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type fixture struct {
	url     string
	keyring *cipher.Keyring
	logs    *syncBuffer
	now     time.Time
}

type setupOpts struct {
	deps       func(*server.Deps)
	serverOpts []server.Option
	svcOpts    []healthagents.Option
}

// setup mounts server.New in an httptest server with real agents and a fresh
// key. The service date is fixed at 2026-11-21.
func setup(t *testing.T, so ...setupOpts) *fixture {
	t.Helper()
	key, err := cipher.GenerateKey()
	require.NoError(t, err)
	kr, err := cipher.ParseKeyring(key)
	require.NoError(t, err)
	f := &fixture{keyring: kr, logs: &syncBuffer{}, now: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
	logger := slog.New(slog.NewJSONHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	svcOpts := []healthagents.Option{healthagents.WithClock(func() time.Time { return f.now }), healthagents.WithLogger(logger)}
	var o setupOpts
	if len(so) > 0 {
		o = so[0]
	}
	svc, err := healthagents.New(kr, append(svcOpts, o.svcOpts...)...)
	require.NoError(t, err)
	deps := server.Deps{Service: svc}
	if o.deps != nil {
		o.deps(&deps)
	}
	h, err := server.New(deps, append([]server.Option{server.WithLogger(logger)}, o.serverOpts...)...)
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	f.url = ts.URL
	return f
}

// baseRecord is a record with active coverage through 2027, no exclusions,
// no allergies and no current medications.
func baseRecord() *record.Record {
	return &record.Record{
		Schema:    record.Schema,
		PatientID: "PT-000123",
		BirthDate: "1968-04-02",
		Coverage: &record.Coverage{
			PayerID: "60054", PlanID: "PPO-GOLD", MemberID: "W123456789",
			Status: "active", Start: "2026-01-01", End: "2027-12-31",
			Deductible: 1500, DeductibleMet: 1500, Copay: 25,
		},
		Conditions:   []string{"E11.9"},
		Observations: map[string]float64{"glucose": 148, "bmi": 33.6},
		Diagnosis:    "positive",
	}
}

func (f *fixture) seal(t *testing.T, r *record.Record) *cipher.Envelope {
	t.Helper()
	b, err := r.Marshal()
	require.NoError(t, err)
	env, err := cipher.Seal(r.PatientID, b, f.keyring)
	require.NoError(t, err)
	return &env
}

func (f *fixture) do(t *testing.T, method, path string, body any) (int, http.Header, map[string]any) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		buf, err := json.Marshal(b)
		require.NoError(t, err)
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, f.url+path, rd)
	require.NoError(t, err)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	if len(raw) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		require.NoError(t, json.Unmarshal(raw, &out), "body: %s", raw)
	}
	return resp.StatusCode, resp.Header, out
}

// requireDetail asserts an error response: the status, and a body that is
// exactly {"detail": want}.
func requireDetail(t *testing.T, status int, body map[string]any, wantStatus int, want string) {
	t.Helper()
	require.Equal(t, wantStatus, status, "body: %v", body)
	require.Len(t, body, 1, "error bodies hold only detail: %v", body)
	require.Equal(t, want, body["detail"])
}

func TestHealth(t *testing.T) {
	t.Parallel()
	f := setup(t)
	status, h, body := f.do(t, "GET", "/health", nil)
	require.Equal(t, 200, status)
	assert.Equal(t, "healthy", body["status"])
	assert.Equal(t, "0.1.0", body["version"])
	assert.NotEmpty(t, body["message"])
	assert.Equal(t, "application/json", h.Get("Content-Type"))
	assert.Equal(t, "nosniff", h.Get("X-Content-Type-Options"))
	assert.NotEmpty(t, h.Get("X-Request-ID"))
}

func TestHealthUnavailableWhileADependencyFails(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	down := true
	f := setup(t, setupOpts{
		deps: func(d *server.Deps) {
			d.Checks = []server.Check{{Name: "database", Ping: func(context.Context) error {
				mu.Lock()
				defer mu.Unlock()
				if down {
					return errors.New("connection refused")
				}
				return nil
			}}}
		},
		serverOpts: []server.Option{server.WithHealthCache(time.Nanosecond)},
	})
	status, _, body := f.do(t, "GET", "/health", nil)
	requireDetail(t, status, body, 503, "Service temporarily unavailable")

	mu.Lock()
	down = false
	mu.Unlock()
	require.Eventually(t, func() bool {
		status, _, _ := f.do(t, "GET", "/health", nil)
		return status == 200
	}, 5*time.Second, 5*time.Millisecond)
}

type chainInfo struct{}

func (chainInfo) Network() (string, string) { return "embedded", "simulated" }

type fedInfo struct{}

func (fedInfo) FederatedStatus(context.Context) (healthagents.FederatedStatus, bool, error) {
	return healthagents.FederatedStatus{CurrentRound: 3, Participants: 2}, true, nil
}

// chainWithRegistry is a ChainInfo that also names its registry, as
// *chain.Ledger does.
type chainWithRegistry struct{ chainInfo }

func (chainWithRegistry) RegistryHex() string { return "0x5FbDB2315678afecb367f032d93F642f64180aa3" }
func (chainWithRegistry) ChainID() *big.Int   { return big.NewInt(1337) }

func TestStatusNamesRegistry(t *testing.T) {
	t.Parallel()
	f := setup(t, setupOpts{deps: func(d *server.Deps) { d.Chain = chainWithRegistry{} }})
	status, _, body := f.do(t, "GET", "/status", nil)
	require.Equal(t, 200, status)
	assert.Equal(t, map[string]any{"endpoint": "embedded", "network": "simulated",
		"registry": "0x5FbDB2315678afecb367f032d93F642f64180aa3", "chain_id": "1337"}, body["blockchain"])
}

func TestStatus(t *testing.T) {
	t.Parallel()
	f := setup(t, setupOpts{deps: func(d *server.Deps) { d.Chain = chainInfo{}; d.Federated = fedInfo{} }})
	status, _, body := f.do(t, "GET", "/status", nil)
	require.Equal(t, 200, status)
	assert.Equal(t, "operational", body["status"])
	assert.Equal(t, map[string]any{"eligibility": "active", "prescription": "active", "diagnosis_model": "trained"}, body["agents"])
	assert.Equal(t, map[string]any{"current_round": float64(3), "participants": float64(2)}, body["federated_learning"])
	assert.Equal(t, map[string]any{"endpoint": "embedded", "network": "simulated"}, body["blockchain"])
}

func TestVerifyEligibilityCatalogue(t *testing.T) {
	t.Parallel()
	f := setup(t)
	env := f.seal(t, baseRecord())
	for _, tc := range []struct {
		code    string
		pct     float64
		preAuth bool
	}{
		{"PROC001", 80, true},
		{"PROC002", 60, false},
		{"PROC003", 100, true},
		{"PROC004", 90, false},
		{"PROC005", 85, true},
		{"70551", 80, true},  // MRI brain → PROC001
		{"71046", 60, false}, // chest X-ray → PROC002
		{"85025", 90, false}, // CBC → PROC004
	} {
		t.Run(tc.code, func(t *testing.T) {
			t.Parallel()
			status, _, body := f.do(t, "POST", "/verify-eligibility", map[string]any{"patient_data": env, "procedure_code": tc.code})
			require.Equal(t, 200, status, "body: %v", body)
			assert.Equal(t, map[string]any{
				"eligible":               true,
				"coverage_pct":           tc.pct,
				"privacy_preserved":      true,
				"procedure_code":         tc.code,
				"requires_authorization": tc.preAuth,
				"zk_proof_verified":      false, // no attestor in this test: never true without a verified proof
				"reason":                 nil,
			}, body)
		})
	}
}

func TestVerifyEligibilityRules(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tests := []struct {
		name     string
		mutate   func(*record.Record)
		code     string
		eligible bool
		pct      float64
		reason   string
	}{
		{"expired coverage", func(r *record.Record) { r.Coverage.Start, r.Coverage.End = "2025-01-01", "2025-12-31" }, "PROC001", false, 0, "coverage not in effect on 2026-11-21"},
		{"inactive coverage", func(r *record.Record) { r.Coverage.Status = "inactive" }, "PROC002", false, 0, "coverage is inactive"},
		{"no coverage", func(r *record.Record) { r.Coverage = nil }, "PROC002", false, 0, "no insurance coverage on record"},
		{"excluded class", func(r *record.Record) { r.Coverage.ExcludedProcedures = []string{"PROC005"} }, "PROC005", false, 0, "procedure PROC005 is excluded by the plan"},
		{"override", func(r *record.Record) { r.Coverage.CoverageOverrides = map[string]int{"PROC002": 70} }, "PROC002", true, 70, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := baseRecord()
			tc.mutate(r)
			status, _, body := f.do(t, "POST", "/verify-eligibility", map[string]any{"patient_data": f.seal(t, r), "procedure_code": tc.code})
			require.Equal(t, 200, status, "body: %v", body)
			assert.Equal(t, tc.eligible, body["eligible"])
			assert.Equal(t, tc.pct, body["coverage_pct"])
			if tc.reason == "" {
				assert.Nil(t, body["reason"])
			} else {
				assert.Equal(t, tc.reason, body["reason"])
			}
		})
	}
}

func TestVerifyEligibilityErrors(t *testing.T) {
	t.Parallel()
	f := setup(t)
	env := f.seal(t, baseRecord())
	with := func(mut func(e *cipher.Envelope)) *cipher.Envelope {
		c := *env
		mut(&c)
		return &c
	}
	otherKey, _ := cipher.GenerateKey()
	otherRing, _ := cipher.ParseKeyring(otherKey)
	plain, _ := baseRecord().Marshal()
	foreign, _ := cipher.Seal("PT-000123", plain, otherRing)
	mismatched := *f.seal(t, baseRecord())
	mismatched.PatientID = "PT-999999"

	tests := []struct {
		name   string
		body   any
		status int
		detail string
	}{
		{"unknown procedure", map[string]any{"patient_data": env, "procedure_code": "PROC999"}, 404, "Procedure code PROC999 not found"},
		{"hash mismatch", map[string]any{"patient_data": with(func(e *cipher.Envelope) { e.DataHash = strings.Repeat("ab", 32) }), "procedure_code": "PROC001"}, 400, "Eligibility check failed: Data hash mismatch"},
		{"hash format", map[string]any{"patient_data": with(func(e *cipher.Envelope) { e.DataHash = "XYZ" }), "procedure_code": "PROC001"}, 400, "Eligibility check failed: Invalid data_hash"},
		{"bad base64", map[string]any{"patient_data": with(func(e *cipher.Envelope) { e.EncryptedData = "%%%not base64%%%" }), "procedure_code": "PROC001"}, 400, "Invalid encrypted data format"},
		{"wrong key", map[string]any{"patient_data": &foreign, "procedure_code": "PROC001"}, 400, "Invalid encrypted data format"},
		{"bad cid", map[string]any{"patient_data": with(func(e *cipher.Envelope) { e.IPFSCID = "Qm-not-a-cid" }), "procedure_code": "PROC001"}, 400, "Invalid the service CID format"},
		// An identity CID carries bytes (here "gAAAAABidentityholdsbytes")
		// instead of addressing encrypted_data: refused.
		{"identity cid", map[string]any{"patient_data": with(func(e *cipher.Envelope) { e.IPFSCID = "bafkqaglhifaucqkbijuwizlooruxi6lin5wgi43cpf2gk4y" }), "procedure_code": "PROC001"}, 400,
			"Invalid the service CID format: ipfs_cid is an identity CID: it holds bytes instead of addressing encrypted_data"},
		{"patient mismatch", map[string]any{"patient_data": &mismatched, "procedure_code": "PROC001"}, 400, "Eligibility check failed: patient_id does not match the encrypted record"},
		{"missing patient_data", map[string]any{"procedure_code": "PROC001"}, 400, "Invalid request format: missing field 'patient_data'"},
		{"null patient_data", `{"patient_data":null,"procedure_code":"PROC001"}`, 400, "Invalid request format: missing field 'patient_data'"},
		{"missing procedure_code", map[string]any{"patient_data": env}, 400, "Invalid request format: missing field 'procedure_code'"},
		{"empty procedure_code", map[string]any{"patient_data": env, "procedure_code": ""}, 400, "Validation error: field 'procedure_code' is required"},
		{"missing patient_id", map[string]any{"patient_data": with(func(e *cipher.Envelope) { e.PatientID = "" }), "procedure_code": "PROC001"}, 400, "Validation error: field 'patient_id' is required"},
		{"wrong type", `{"patient_data":{},"procedure_code":7}`, 400, "Invalid request format: field 'procedure_code' must be a string"},
		{"malformed json", `{"patient_data":`, 400, "Invalid request format: malformed JSON"},
		{"not an object", `[1,2]`, 400, "Invalid request format: body must be a JSON object"},
		{"empty body", ``, 400, "Invalid request format: missing field 'patient_data'"},
		{"too deep", strings.Repeat("[", 100) + strings.Repeat("]", 100), 400, "Invalid request format: JSON nested deeper than 32 levels"},
		{"too large", `{"patient_data":{"patient_id":"` + strings.Repeat("x", server.DefaultMaxBodyBytes) + `"}}`, 413, fmt.Sprintf("Request body too large: the limit is %d bytes", server.DefaultMaxBodyBytes)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			status, _, body := f.do(t, "POST", "/verify-eligibility", tc.body)
			requireDetail(t, status, body, tc.status, tc.detail)
		})
	}
}

func TestValidatePrescription(t *testing.T) {
	t.Parallel()
	f := setup(t)
	t.Run("ok", func(t *testing.T) {
		t.Parallel()
		status, _, body := f.do(t, "POST", "/validate-prescription", map[string]any{"patient_data": f.seal(t, baseRecord()), "drug_code": "6809"})
		require.Equal(t, 200, status, "body: %v", body)
		assert.Equal(t, true, body["valid"])
		assert.Equal(t, "6809", body["drug_code"])
		assert.Equal(t, true, body["interactions_checked"])
		assert.Equal(t, false, body["zk_proof_verified"])
		assert.Contains(t, body["cross_chain_oracle"], "unconfirmed")
	})
	t.Run("interaction", func(t *testing.T) {
		t.Parallel()
		r := baseRecord()
		r.Medications = []string{"5640"}                                                                                                 // ibuprofen
		status, _, body := f.do(t, "POST", "/validate-prescription", map[string]any{"patient_data": f.seal(t, r), "drug_code": "11289"}) // warfarin
		require.Equal(t, 422, status, "body: %v", body)
		assert.Regexp(t, `^Prescription validation failed: Drug interaction detected with (?i:ibuprofen)$`, body["detail"])
	})
	t.Run("allergy contraindication", func(t *testing.T) {
		t.Parallel()
		r := baseRecord()
		r.Allergies = []string{"penicillin"}
		status, _, body := f.do(t, "POST", "/validate-prescription", map[string]any{"patient_data": f.seal(t, r), "drug_code": "723"}) // amoxicillin
		require.Equal(t, 422, status, "body: %v", body)
		assert.True(t, strings.HasPrefix(body["detail"].(string), "Prescription validation failed: "), body["detail"])
	})
	t.Run("unknown drug", func(t *testing.T) {
		t.Parallel()
		status, _, body := f.do(t, "POST", "/validate-prescription", map[string]any{"patient_data": f.seal(t, baseRecord()), "drug_code": "NOPE-1"})
		requireDetail(t, status, body, 404, "Drug code NOPE-1 not found")
	})
	t.Run("missing drug_code", func(t *testing.T) {
		t.Parallel()
		status, _, body := f.do(t, "POST", "/validate-prescription", map[string]any{"patient_data": f.seal(t, baseRecord())})
		requireDetail(t, status, body, 400, "Invalid request format: missing field 'drug_code'")
	})
	t.Run("hash mismatch", func(t *testing.T) {
		t.Parallel()
		env := f.seal(t, baseRecord())
		env.DataHash = strings.Repeat("0", 64)
		status, _, body := f.do(t, "POST", "/validate-prescription", map[string]any{"patient_data": env, "drug_code": "6809"})
		requireDetail(t, status, body, 400, "Prescription validation failed: Data hash mismatch")
	})
}

func TestUnknownPathAndMethod(t *testing.T) {
	t.Parallel()
	f := setup(t)
	status, _, body := f.do(t, "GET", "/nope", nil)
	requireDetail(t, status, body, 404, "Not Found")
	status, h, body := f.do(t, "GET", "/verify-eligibility", nil)
	requireDetail(t, status, body, 405, "Method Not Allowed")
	assert.Contains(t, h.Get("Allow"), "POST")
	status, _, body = f.do(t, "DELETE", "/health", nil)
	requireDetail(t, status, body, 405, "Method Not Allowed")
}

func TestCORS(t *testing.T) {
	t.Parallel()
	f := setup(t)
	req, _ := http.NewRequestWithContext(t.Context(), "OPTIONS", f.url+"/verify-eligibility", nil)
	req.Header.Set("Origin", "https://app.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 204, resp.StatusCode)
	assert.Equal(t, "https://app.example", resp.Header.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, "true", resp.Header.Get("Access-Control-Allow-Credentials"))
	assert.Contains(t, resp.Header.Get("Access-Control-Allow-Methods"), "POST")
	assert.Equal(t, "authorization, content-type", resp.Header.Get("Access-Control-Allow-Headers"))

	strict := setup(t, setupOpts{serverOpts: []server.Option{server.WithCORSOrigins("https://ok.example")}})
	req, _ = http.NewRequestWithContext(t.Context(), "GET", strict.url+"/health", nil)
	req.Header.Set("Origin", "https://evil.example")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
}

// TestNoMedicalDataLeaves sends records full of recognisable values through
// every outcome and checks no response body or log line contains them.
func TestNoMedicalDataLeaves(t *testing.T) {
	t.Parallel()
	f := setup(t)
	r := baseRecord()
	r.Coverage.MemberID = "MEMBER-SENTINEL-77"
	r.Conditions = []string{"Z99.SENTINEL"}
	r.Allergies = []string{"penicillin"}
	r.Diagnosis = "DIAGNOSIS-SENTINEL"
	r.Observations = map[string]float64{"glucose": 987.654}
	env := f.seal(t, r)
	bad := *env
	bad.DataHash = strings.Repeat("1", 64)
	var seen strings.Builder
	for _, body := range []any{
		map[string]any{"patient_data": env, "procedure_code": "PROC001"},
		map[string]any{"patient_data": &bad, "procedure_code": "PROC001"},
		map[string]any{"patient_data": env, "procedure_code": "PROC404"},
	} {
		_, _, out := f.do(t, "POST", "/verify-eligibility", body)
		b, _ := json.Marshal(out)
		seen.Write(b)
	}
	for _, drug := range []string{"723", "6809", "11289"} {
		_, _, out := f.do(t, "POST", "/validate-prescription", map[string]any{"patient_data": env, "drug_code": drug})
		b, _ := json.Marshal(out)
		seen.Write(b)
	}
	all := seen.String() + f.logs.String()
	for _, secret := range []string{"MEMBER-SENTINEL-77", "Z99.SENTINEL", "DIAGNOSIS-SENTINEL", "987.654", "1968-04-02", env.EncryptedData} {
		assert.NotContains(t, all, secret)
	}
}
