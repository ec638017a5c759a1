package openapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi/datamodel"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/internal/openapi"
)

// validateDocument checks spec with libopenapi-validator against the
// official OpenAPI 3.1 schema (embedded in github.com/pb33f/libopenapi, so
// no network), and has libopenapi resolve every $ref while building its
// model. It returns the problems found.
func validateDocument(t *testing.T, spec []byte) []string {
	t.Helper()
	doc, err := libopenapi.NewDocumentWithConfiguration(spec, &datamodel.DocumentConfiguration{
		Logger: slog.New(slog.DiscardHandler), // the problems are returned, not logged
	})
	require.NoError(t, err)
	require.Equal(t, "3.1.0", doc.GetVersion())
	var problems []string
	if _, err := doc.BuildV3Model(); err != nil {
		problems = append(problems, "model: "+err.Error())
	}
	v, errs := validator.NewValidator(doc)
	for _, e := range errs {
		problems = append(problems, "validator: "+e.Error())
	}
	if v == nil {
		return problems
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			problems = append(problems, e.Error())
			for _, se := range e.SchemaValidationErrors {
				problems = append(problems, fmt.Sprintf("  %s: %s", se.FieldPath, se.Reason))
			}
		}
	}
	return problems
}

// compileSchemas compiles every schema of spec (components, parameters,
// bodies, headers) as JSON Schema 2020-12 with santhosh-tekuri/jsonschema,
// which first validates each against the 2020-12 meta-schema: the OAS
// schema leaves Schema Objects unchecked. It returns the compiler so
// instance tests can compile "doc.json#/components/schemas/<Name>".
func compileSchemas(t *testing.T, spec []byte) (*jsonschema.Compiler, error) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(spec))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource("doc.json", v); err != nil {
		return nil, err
	}
	var pointers []string
	walkSchemas(v, "", false, &pointers)
	require.NotEmpty(t, pointers)
	for _, p := range pointers {
		if _, err := c.Compile("doc.json#" + p); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	return c, nil
}

// walkSchemas collects the JSON pointers of the schema objects in an
// OpenAPI document: the values of "schema" keys and of components.schemas.
func walkSchemas(v any, at string, inSchemas bool, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			p := at + "/" + strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
			if inSchemas || k == "schema" {
				*out = append(*out, p)
				continue
			}
			walkSchemas(child, p, at == "/components" && k == "schemas", out)
		}
	case []any:
		for i, child := range x {
			walkSchemas(child, fmt.Sprintf("%s/%d", at, i), false, out)
		}
	}
}

func TestValidDocument(t *testing.T) {
	t.Parallel()
	spec, err := sampleDocument(t).JSON()
	require.NoError(t, err)
	assert.Empty(t, validateDocument(t, spec))
	_, err = compileSchemas(t, spec)
	require.NoError(t, err)
}

// TestValidatorCatchesBrokenDocuments: the validation above can fail.
func TestValidatorCatchesBrokenDocuments(t *testing.T) {
	t.Parallel()
	spec, err := sampleDocument(t).JSON()
	require.NoError(t, err)
	tests := []struct {
		name  string
		edit  func(doc map[string]any)
		check func(t *testing.T, spec []byte)
	}{
		{"fail/no info", func(d map[string]any) { delete(d, "info") }, wantDocumentInvalid},
		{"fail/bad status key", func(d map[string]any) {
			ops := d["paths"].(map[string]any)["/health"].(map[string]any)["get"].(map[string]any)
			ops["responses"].(map[string]any)["2000"] = map[string]any{"description": "x"}
		}, wantDocumentInvalid},
		{"fail/path param not required", func(d map[string]any) {
			op := d["paths"].(map[string]any)["/api/keys/{key_id}"].(map[string]any)["delete"].(map[string]any)
			op["parameters"].([]any)[0].(map[string]any)["required"] = false
		}, wantDocumentInvalid},
		{"fail/dangling ref", func(d map[string]any) {
			delete(d["components"].(map[string]any)["schemas"].(map[string]any), "patientData")
		}, wantDocumentInvalid},
		{"fail/bad schema type", func(d map[string]any) {
			s := d["components"].(map[string]any)["schemas"].(map[string]any)["health"].(map[string]any)
			s["type"] = "structure"
		}, wantSchemasInvalid},
		{"fail/bad schema keyword value", func(d map[string]any) {
			s := d["components"].(map[string]any)["schemas"].(map[string]any)["keyUsage"].(map[string]any)
			s["required"] = "errors"
		}, wantSchemasInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var doc map[string]any
			require.NoError(t, json.Unmarshal(spec, &doc))
			tt.edit(doc)
			broken, err := json.Marshal(doc)
			require.NoError(t, err)
			tt.check(t, broken)
		})
	}
}

func wantDocumentInvalid(t *testing.T, spec []byte) {
	t.Helper()
	p := validateDocument(t, spec)
	t.Log(p)
	assert.NotEmpty(t, p)
}

func wantSchemasInvalid(t *testing.T, spec []byte) {
	t.Helper()
	_, err := compileSchemas(t, spec)
	assert.Error(t, err)
}

// TestInstancesMatchSchemas: values marshalled from the Go types validate
// against the schemas generated from those types; values that break a
// rule the schema states do not.
func TestInstancesMatchSchemas(t *testing.T) {
	t.Parallel()
	spec, err := sampleDocument(t).JSON()
	require.NoError(t, err)
	c, err := compileSchemas(t, spec)
	require.NoError(t, err)
	reason := "no active coverage"
	since := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name, schema string
		value        any // a Go value, marshalled with encoding/json
		raw          string
		wantErr      bool
	}{
		{"ok/result eligible", "eligibilityResult", eligibilityResult{Eligible: true, CoveragePct: 80, PrivacyPreserved: true, ProcedureCode: "PROC001", RequiresAuthorization: true}, "", false},
		{"ok/result with reason", "eligibilityResult", eligibilityResult{ProcedureCode: "PROC002", Reason: &reason}, "", false},
		{"ok/request", "eligibilityRequest", eligibilityRequest{PatientData: patientData{PatientID: "PT-1", EncryptedData: "gAAAA", IPFSCID: "bafy", DataHash: strings.Repeat("ab", 32)}, ProcedureCode: "PROC001"}, "", false},
		{"ok/usage", "keyUsage", keyUsage{KeyID: "k", Requests: 3, Latencies: map[string]float64{"p50": 1.5}, Since: since}, "", false},
		{"ok/usage with whitelist", "keyUsage", keyUsage{KeyID: "k", Latencies: map[string]float64{}, Since: since, Whitelist: []string{"10.0.0.1"}}, "", false},
		{"ok/page", "keyList", keyList{pageInfo: pageInfo{Limit: 10, Total: 1}, Keys: []keyUsage{{KeyID: "k", Latencies: map[string]float64{}, Since: since}}}, "", false},
		{"ok/event", "event", event{Event: "eligibility.verified", Timestamp: since, Data: eventData{PatientID: "h", CoveragePercentage: 80}}, "", false},
		{"ok/error", "ErrorBody", openapi.ErrorBody{Detail: "Procedure code X not found"}, "", false},
		{"fail/coverage over 100", "eligibilityResult", eligibilityResult{CoveragePct: 120}, "", true},
		{"fail/bad hash", "eligibilityRequest", eligibilityRequest{PatientData: patientData{DataHash: "XYZ"}}, "", true},
		{"fail/enum", "event", event{Event: "something.else", Timestamp: since}, "", true},
		{"fail/limit over 100", "keyList", keyList{pageInfo: pageInfo{Limit: 500}, Keys: []keyUsage{}}, "", true},
		{"fail/missing required", "eligibilityResult", nil, `{"eligible":true}`, true},
		{"fail/wrong type", "ErrorBody", nil, `{"detail":7}`, true},
		{"fail/bad date-time", "keyUsage", nil, `{"key_id":"k","requests":1,"errors":0,"latencies_ms":{},"since":"yesterday"}`, true},
		{"fail/nil map is null", "keyUsage", keyUsage{KeyID: "k", Since: since}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := c.Compile("doc.json#/components/schemas/" + tt.schema)
			require.NoError(t, err)
			raw := []byte(tt.raw)
			if tt.value != nil {
				raw, err = json.Marshal(tt.value)
				require.NoError(t, err)
			}
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
			require.NoError(t, err)
			err = s.Validate(inst)
			if tt.wantErr {
				assert.Error(t, err, string(raw))
				return
			}
			assert.NoError(t, err, string(raw))
		})
	}
}

// TestResponsesMatchDocument drives a handler and checks its real HTTP
// responses (status, headers, body) with libopenapi-validator against the
// operation the document declares.
func TestResponsesMatchDocument(t *testing.T) {
	t.Parallel()
	spec, err := sampleDocument(t).JSON()
	require.NoError(t, err)
	doc, err := libopenapi.NewDocument(spec)
	require.NoError(t, err)
	v, errs := validator.NewValidator(doc)
	require.Empty(t, errs)

	mux := http.NewServeMux()
	mux.HandleFunc("POST /verify-eligibility", func(w http.ResponseWriter, r *http.Request) {
		var req eligibilityRequest
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set(openapi.HeaderRateLimitLimit, "100")
		w.Header().Set(openapi.HeaderRateLimitRemaining, "99")
		w.Header().Set(openapi.HeaderRateLimitReset, "1795000000")
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(openapi.ErrorBody{Detail: "Invalid request format: malformed JSON"})
			return
		}
		if req.ProcedureCode == "BROKEN" { // a handler bug the validator must catch
			_, _ = io.WriteString(w, `{"eligible":"yes"}`)
			return
		}
		_ = json.NewEncoder(w).Encode(eligibilityResult{Eligible: true, CoveragePct: 80, PrivacyPreserved: true, ProcedureCode: req.ProcedureCode})
	})
	tests := []struct {
		name, body string
		wantValid  bool
	}{
		{"ok/200", `{"patient_data":{"patient_id":"p","encrypted_data":"e","ipfs_cid":"c","data_hash":"` + strings.Repeat("0", 64) + `"},"procedure_code":"PROC001"}`, true},
		{"ok/400", `{`, true},
		{"fail/handler breaks the schema", `{"procedure_code":"BROKEN"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "http://localhost:8000/verify-eligibility", strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, req)
			resp := rec.Result()
			defer resp.Body.Close()
			check := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "http://localhost:8000/verify-eligibility", strings.NewReader(tt.body))
			check.Header.Set("Content-Type", "application/json")
			ok, verrs := v.ValidateHttpResponse(check, resp)
			if tt.wantValid {
				assert.True(t, ok, "%v", verrs)
				return
			}
			t.Log(verrs)
			assert.False(t, ok)
		})
	}
}
