package server_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/internal/openapi"
	"github.com/healthagents/healthagents/server"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// TestOpenAPIGolden keeps the served document as a golden file: an API
// change shows up in review as a diff of testdata/openapi.json. Run
// `go test ./server -run TestOpenAPIGolden -update` after an intended change.
func TestOpenAPIGolden(t *testing.T) {
	t.Parallel()
	f := setup(t)
	resp, err := http.Get(f.url + "/openapi.json")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	served, err := io.ReadAll(resp.Body)
	require.NoError(t, err)

	built, err := server.OpenAPI()
	require.NoError(t, err)
	// The served document names the server it was reached at; the rest is
	// server.OpenAPI()'s, byte for byte.
	asServed, err := openapi.WithServers(built, []openapi.Server{{URL: f.url, Description: "this server, as this document was reached"}})
	require.NoError(t, err)
	require.Equal(t, string(asServed), string(served), "server.OpenAPI() and GET /openapi.json differ")
	served = built

	golden := filepath.Join("testdata", "openapi.json")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(golden, served, 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(served), "the OpenAPI document changed: rerun with -update if intended")
}

// TestOpenAPIValid validates the document with libopenapi-validator against
// the official OpenAPI 3.1 schema, and checks that every route is in it.
func TestOpenAPIValid(t *testing.T) {
	t.Parallel()
	spec, err := server.OpenAPI()
	require.NoError(t, err)
	doc, err := libopenapi.NewDocument(spec)
	require.NoError(t, err)
	require.Equal(t, "3.1.0", doc.GetVersion())
	_, err = doc.BuildV3Model()
	require.NoError(t, err)
	v, errs := validator.NewValidator(doc)
	require.Empty(t, errs)
	valid, verrs := v.ValidateDocument()
	for _, e := range verrs {
		t.Errorf("%s", e.Error())
		for _, se := range e.SchemaValidationErrors {
			t.Errorf("  %s: %s", se.KeywordLocation, se.Reason)
		}
	}
	require.True(t, valid)

	var parsed struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(spec, &parsed))
	for _, p := range []string{"/health", "/status", "/verify-eligibility", "/validate-prescription"} {
		assert.Contains(t, parsed.Paths, p)
	}
}

// TestOpenAPIResponsesValidate checks real responses of the server against
// the document with libopenapi-validator's response validation.
func TestOpenAPIResponsesValidate(t *testing.T) {
	t.Parallel()
	f := setup(t)
	spec, err := server.OpenAPI()
	require.NoError(t, err)
	doc, err := libopenapi.NewDocument(spec)
	require.NoError(t, err)
	v, errs := validator.NewValidator(doc)
	require.Empty(t, errs)

	env := f.seal(t, baseRecord())
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/health", nil},
		{"GET", "/status", nil},
		{"POST", "/verify-eligibility", map[string]any{"patient_data": env, "procedure_code": "PROC001"}},
		{"POST", "/verify-eligibility", map[string]any{"patient_data": env, "procedure_code": "PROC999"}},
		{"POST", "/verify-eligibility", map[string]any{"procedure_code": "PROC001"}},
		{"POST", "/validate-prescription", map[string]any{"patient_data": env, "drug_code": "6809"}},
	} {
		var rd io.Reader
		if tc.body != nil {
			b, _ := json.Marshal(tc.body)
			rd = bytes.NewReader(b)
		}
		req, err := http.NewRequestWithContext(t.Context(), tc.method, f.url+tc.path, rd)
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if tc.body != nil {
			b, _ := json.Marshal(tc.body)
			req.Body = io.NopCloser(bytes.NewReader(b))
		}
		ok, verrs := v.ValidateHttpResponse(req, resp)
		for _, e := range verrs {
			t.Errorf("%s %s → %d: %s %s", tc.method, tc.path, resp.StatusCode, e.Message, e.Reason)
		}
		assert.True(t, ok, "%s %s", tc.method, tc.path)
	}
}

// TestDocsPagesOffline fetches /docs and /redoc and every script and
// stylesheet they reference: each must be served by us, none from elsewhere.
func TestDocsPagesOffline(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ref := regexp.MustCompile(`(?:src|href)="([^"]+)"`)
	for _, page := range []string{"/docs", "/redoc"} {
		resp, err := http.Get(f.url + page)
		require.NoError(t, err)
		html, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode, page)
		refs := ref.FindAllSubmatch(html, -1)
		require.NotEmpty(t, refs, page)
		base, err := url.Parse(f.url + page)
		require.NoError(t, err)
		for _, m := range refs {
			u := string(m[1])
			require.NotRegexp(t, `^(https?:)?//`, u, "%s loads %s from elsewhere", page, u)
			ref, err := base.Parse(u)
			require.NoError(t, err)
			r, err := http.Get(ref.String())
			require.NoError(t, err)
			r.Body.Close()
			assert.Equal(t, 200, r.StatusCode, "%s → %s", page, u)
		}
	}
}
