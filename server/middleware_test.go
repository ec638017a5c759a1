package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/server"
	"github.com/healthagents/healthagents/store/storetest"
)

// TestRequestIDIsRestricted: a client's X-Request-ID is kept only when it
// is 1-64 characters of [A-Za-z0-9._-]; anything else is replaced by a
// fresh id, in the response and in the request log (and so in the audit
// log, which takes the response's id).
func TestRequestIDIsRestricted(t *testing.T) {
	t.Parallel()
	f := setup(t)
	fresh := regexp.MustCompile(`^[0-9a-f]{16}$`)
	for _, tc := range []struct {
		name, id string
		kept     bool
	}{
		{"ok/plain", "req-0042", true},
		{"ok/every allowed character", "Az09._-", true},
		{"ok/64 characters", strings.Repeat("a", 64), true},
		{"fail/65 characters", strings.Repeat("a", 65), false},
		{"fail/space", "req 42", false},
		{"fail/quote", `req"42`, false},
		{"fail/json breaking", `x","status":200,"y":"`, false},
		{"fail/tab", "req\t42", false},
		{"fail/non-ASCII", "réq-42", false},
		{"fail/slash", "a/b", false},
		{"fail/absent", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), "GET", f.url+"/health", nil)
			require.NoError(t, err)
			if tc.id != "" {
				req.Header.Set("X-Request-ID", tc.id)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			got := resp.Header.Get("X-Request-ID")
			if tc.kept {
				assert.Equal(t, tc.id, got)
			} else {
				assert.Regexp(t, fresh, got, "a fresh id replaces %q", tc.id)
			}
			assert.Contains(t, f.logs.String(), `"request_id":"`+got+`"`)
		})
	}
	for _, bad := range []string{strings.Repeat("a", 65), `x","status":200,"y":"`, "réq-42"} {
		raw, _ := json.Marshal(bad)
		assert.NotContains(t, f.logs.String(), string(raw[1:len(raw)-1]), "the refused id never reaches the log")
	}
}

// TestSecurityHeaders: every API answer, success or error, carries the
// security headers; the documentation pages may be framed and cached; HSTS
// only over TLS.
func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	f := setup(t)
	api := map[string]string{
		"X-Content-Type-Options": "nosniff",
		"Referrer-Policy":        "no-referrer",
		"Cache-Control":          "no-store",
		"X-Frame-Options":        "DENY",
	}
	for _, tc := range []struct {
		method, path string
		body         any
		status       int
	}{
		{"GET", "/health", nil, 200},
		{"GET", "/status", nil, 200},
		{"GET", "/no-such-path", nil, 404},
		{"DELETE", "/health", nil, 405},
		{"POST", "/verify-eligibility", "{", 400},
		{"GET", "/api/keys", nil, 401},
	} {
		status, h, _ := f.do(t, tc.method, tc.path, tc.body)
		require.Equal(t, tc.status, status, tc.path)
		for k, v := range api {
			assert.Equal(t, v, h.Get(k), "%s %s: %s", tc.method, tc.path, k)
		}
		assert.Empty(t, h.Get("Strict-Transport-Security"), "no HSTS over plain HTTP")
		assert.Equal(t, "application/json", h.Get("Content-Type"), tc.path)
	}
	status, h, _ := f.do(t, "GET", "/docs", nil)
	require.Equal(t, 200, status)
	assert.Equal(t, "nosniff", h.Get("X-Content-Type-Options"))
	assert.Equal(t, "no-referrer", h.Get("Referrer-Policy"))
	assert.Empty(t, h.Get("X-Frame-Options"), "the documentation pages are not the API")

	svc, err := healthagents.New(f.keyring)
	require.NoError(t, err)
	handler, err := server.New(server.Deps{Service: svc})
	require.NoError(t, err)
	tls := httptest.NewTLSServer(handler)
	defer tls.Close()
	resp, err := tls.Client().Get(tls.URL + "/health")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, "max-age=31536000", resp.Header.Get("Strict-Transport-Security"))
	assert.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"))
}

// TestContentTypeAndCodeLength: a body sent as anything but JSON is
// refused before it is decoded; procedure and drug codes over 64
// characters or with control characters are refused with the field named.
func TestContentTypeAndCodeLength(t *testing.T) {
	t.Parallel()
	f := setup(t)
	env := f.seal(t, baseRecord())
	body, err := json.Marshal(map[string]any{"patient_data": env, "procedure_code": "PROC001"})
	require.NoError(t, err)
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml"} {
		resp, err := http.Post(f.url+"/verify-eligibility", ct, strings.NewReader(string(body)))
		require.NoError(t, err)
		var out map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		resp.Body.Close()
		requireDetail(t, resp.StatusCode, out, 400, "Invalid request format: Content-Type must be application/json")
	}
	for _, ct := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON"} {
		resp, err := http.Post(f.url+"/verify-eligibility", ct, strings.NewReader(string(body)))
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, 200, resp.StatusCode, ct)
	}

	for _, tc := range []struct {
		path, field, code, detail string
	}{
		{"/verify-eligibility", "procedure_code", strings.Repeat("P", 65), "Validation error: field 'procedure_code' is longer than 64 characters"},
		{"/verify-eligibility", "procedure_code", "PROC\n001", "Validation error: field 'procedure_code' contains control characters"},
		{"/validate-prescription", "drug_code", strings.Repeat("1", 65), "Validation error: field 'drug_code' is longer than 64 characters"},
		{"/validate-prescription", "drug_code", "68\x0009", "Validation error: field 'drug_code' contains control characters"},
	} {
		status, _, out := f.do(t, "POST", tc.path, map[string]any{"patient_data": env, tc.field: tc.code})
		requireDetail(t, status, out, 400, tc.detail)
	}
	// 64 characters are a code like any other (unknown here: 404).
	status, _, out := f.do(t, "POST", "/verify-eligibility", map[string]any{"patient_data": env, "procedure_code": strings.Repeat("P", 64)})
	requireDetail(t, status, out, 404, "Procedure code "+strings.Repeat("P", 64)+" not found")
}

// TestEnvelopePatientIDBound: an envelope whose patient_id is over 64
// bytes or holds a control character is a 400 naming the field, on every
// route that opens envelopes, before any decryption; never a 500.
func TestEnvelopePatientIDBound(t *testing.T) {
	t.Parallel()
	f := setup(t)
	long, ctl := *f.seal(t, baseRecord()), *f.seal(t, baseRecord())
	long.PatientID = strings.Repeat("P", cipher.MaxPatientIDLength+1)
	ctl.PatientID = "PT-000123\r\nX-Forged: 1"
	const (
		tooLong = "Validation error: field 'patient_id' is longer than 64 characters"
		control = "Validation error: field 'patient_id' contains control characters"
	)
	for _, tc := range []struct {
		path, field, code string
	}{
		{"/verify-eligibility", "procedure_code", "PROC001"},
		{"/validate-prescription", "drug_code", "6809"},
	} {
		status, _, out := f.do(t, "POST", tc.path, map[string]any{"patient_data": &long, tc.field: tc.code})
		requireDetail(t, status, out, 400, tooLong)
		status, _, out = f.do(t, "POST", tc.path, map[string]any{"patient_data": &ctl, tc.field: tc.code})
		requireDetail(t, status, out, 400, control)
	}
	assert.NotContains(t, f.logs.String(), "request failed", "not logged as a server error")

	s := newFedServer(t, storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)}), testFedConfig(), nil, nil, nil)
	envs := sealCohort(t, s.kr, 0, 3)
	bad := *envs[1]
	bad.PatientID = long.PatientID
	res := s.ks.call(t, "POST", "/submit-federated-update", "", map[string]any{"patient_data_list": []any{envs[0], &bad, envs[2]}, "round_number": 0})
	assert.Equal(t, 400, res.status)
	assert.Equal(t, tooLong, res.detail())
}
