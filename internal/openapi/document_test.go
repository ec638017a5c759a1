package openapi_test

import (
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/internal/openapi"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestGolden(t *testing.T) {
	t.Parallel()
	got, err := sampleDocument(t).JSON()
	require.NoError(t, err)
	golden := filepath.Join("testdata", "sample.json")
	if *update {
		require.NoError(t, os.WriteFile(golden, got, 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run go test ./internal/openapi -run TestGolden -update")
	assert.Equal(t, string(want), string(got), "document changed; if intended, rerun with -update")
}

// TestDeterministic: the same operations added in another order, and a
// second JSON call, give the same bytes.
func TestDeterministic(t *testing.T) {
	t.Parallel()
	a, err := sampleDocument(t).JSON()
	require.NoError(t, err)
	d := sampleDocument(t)
	b, err := d.JSON()
	require.NoError(t, err)
	c, err := d.JSON()
	require.NoError(t, err)
	assert.Equal(t, a, b)
	assert.Equal(t, b, c)

	x := openapi.New(openapi.Info{Title: "x", Version: "1"})
	y := openapi.New(openapi.Info{Title: "x", Version: "1"})
	ops := []openapi.Operation{
		{Method: "GET", Path: "/a", Responses: map[int]openapi.Response{200: {Body: keyUsage{}}}},
		{Method: "POST", Path: "/b", Request: eligibilityRequest{}, Responses: map[int]openapi.Response{200: {Body: eligibilityResult{}}}, Errors: []int{400, 500}},
		{Method: "GET", Path: "/b", Responses: map[int]openapi.Response{200: {Body: health{}}}},
	}
	for i := range ops {
		require.NoError(t, x.Add(ops[i]))
		require.NoError(t, y.Add(ops[len(ops)-1-i]))
	}
	xj, err := x.JSON()
	require.NoError(t, err)
	yj, err := y.JSON()
	require.NoError(t, err)
	assert.Equal(t, string(xj), string(yj))
}

func TestAddErrors(t *testing.T) {
	t.Parallel()
	ok := map[int]openapi.Response{200: {Description: "ok"}}
	tests := []struct {
		name string
		op   openapi.Operation
		want error
	}{
		{"fail/relative path", openapi.Operation{Method: "GET", Path: "health", Responses: ok}, openapi.ErrInvalidOperation},
		{"fail/pattern in path", openapi.Operation{Method: "GET", Path: "GET /health", Responses: ok}, openapi.ErrInvalidOperation},
		{"fail/method", openapi.Operation{Method: "FETCH", Path: "/x", Responses: ok}, openapi.ErrInvalidOperation},
		{"fail/duplicate", openapi.Operation{Method: "get", Path: "/dup", Responses: ok}, openapi.ErrInvalidOperation},
		{"fail/duplicate id", openapi.Operation{Method: "GET", Path: "/other", OperationID: "taken", Responses: ok}, openapi.ErrInvalidOperation},
		{"fail/undeclared path param", openapi.Operation{Method: "GET", Path: "/k", PathParams: []openapi.Param{{Name: "id"}}, Responses: ok}, openapi.ErrInvalidOperation},
		{"fail/bad wildcard", openapi.Operation{Method: "GET", Path: "/k/{a-b}", Responses: ok}, openapi.ErrInvalidOperation},
		{"fail/repeated wildcard", openapi.Operation{Method: "GET", Path: "/k/{a}/{a}", Responses: ok}, openapi.ErrInvalidOperation},
		{"fail/unbalanced", openapi.Operation{Method: "GET", Path: "/k/{a", Responses: ok}, openapi.ErrInvalidOperation},
		{"fail/no responses", openapi.Operation{Method: "GET", Path: "/none"}, openapi.ErrInvalidOperation},
		{"fail/bad status", openapi.Operation{Method: "GET", Path: "/s", Responses: map[int]openapi.Response{700: {}}}, openapi.ErrInvalidOperation},
		{"fail/duplicate query", openapi.Operation{Method: "GET", Path: "/q", QueryParams: []openapi.Param{{Name: "a"}, {Name: "a"}}, Responses: ok}, openapi.ErrInvalidOperation},
		{"fail/bad auth", openapi.Operation{Method: "GET", Path: "/auth", Auth: openapi.Auth(9), Responses: ok}, openapi.ErrInvalidOperation},
		{"fail/unsupported body", openapi.Operation{Method: "POST", Path: "/c", Request: struct {
			C chan int `json:"c"`
		}{}, Responses: ok}, openapi.ErrUnsupportedType},
		{"fail/bad tag in response", openapi.Operation{Method: "GET", Path: "/t", Responses: map[int]openapi.Response{200: {Body: struct {
			N int `json:"n" maximum:"lots"`
		}{}}}}, openapi.ErrBadTag},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := openapi.New(openapi.Info{Title: "t", Version: "1"})
			require.NoError(t, d.Add(openapi.Operation{Method: "GET", Path: "/dup", OperationID: "taken", Responses: ok}))
			before, err := d.JSON()
			require.NoError(t, err)
			require.ErrorIs(t, d.Add(tt.op), tt.want)
			after, err := d.JSON()
			require.NoError(t, err)
			assert.Equal(t, string(before), string(after), "a failed Add changed the document")
		})
	}
}

// TestFailedAddForgetsComponents: a body type registered by an Add that
// then failed does not appear in components.
func TestFailedAddForgetsComponents(t *testing.T) {
	t.Parallel()
	d := openapi.New(openapi.Info{Title: "t", Version: "1"})
	err := d.Add(openapi.Operation{Method: "POST", Path: "/x", Request: health{},
		Responses: map[int]openapi.Response{200: {Body: make(chan int)}}})
	require.ErrorIs(t, err, openapi.ErrUnsupportedType)
	require.NoError(t, d.Add(openapi.Operation{Method: "GET", Path: "/y", Responses: map[int]openapi.Response{204: {}}}))
	out, err := d.JSON()
	require.NoError(t, err)
	assert.NotContains(t, string(out), `"health"`)
}

func TestOperationShapes(t *testing.T) {
	t.Parallel()
	out, err := sampleDocument(t).JSON()
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(out, &doc))
	at := func(path ...string) any {
		var cur any = doc
		for _, p := range path {
			m, ok := cur.(map[string]any)
			require.True(t, ok, "%v at %s", path, p)
			cur = m[p]
		}
		return cur
	}
	tests := []struct {
		name string
		path []string
		want string
	}{
		{"ok/optional auth allows anonymous", []string{"paths", "/health", "get", "security"}, `[{},{"bearerAuth":[]}]`},
		{"ok/required auth", []string{"paths", "/api/keys/{key_id}", "delete", "security"}, `[{"bearerAuth":[]}]`},
		{"ok/undeclared path param is a required string", []string{"paths", "/api/keys/{key_id}", "delete", "parameters"}, `[{"name":"key_id","in":"path","required":true,"schema":{"type":"string"}}]`},
		{"ok/error body", []string{"paths", "/verify-eligibility", "post", "responses", "404", "content"}, `{"application/json":{"schema":{"$ref":"#/components/schemas/ErrorBody"}}}`},
		{"ok/429 has retry-after and rate-limit headers", []string{"paths", "/verify-eligibility", "post", "responses", "429", "headers"}, `{
			"Retry-After":{"$ref":"#/components/headers/Retry-After"},
			"X-RateLimit-Limit":{"$ref":"#/components/headers/X-RateLimit-Limit"},
			"X-RateLimit-Remaining":{"$ref":"#/components/headers/X-RateLimit-Remaining"},
			"X-RateLimit-Reset":{"$ref":"#/components/headers/X-RateLimit-Reset"}}`},
		{"ok/request body required", []string{"paths", "/verify-eligibility", "post", "requestBody", "required"}, `true`},
		{"ok/bearer scheme", []string{"components", "securitySchemes", "bearerAuth", "scheme"}, `"bearer"`},
		{"ok/webhook", []string{"webhooks", "eligibility.verified", "post", "requestBody", "content", "application/json", "schema"}, `{"$ref":"#/components/schemas/event"}`},
		{"ok/embedded page info flattened", []string{"components", "schemas", "keyList", "required"}, `["keys","limit","offset","total"]`},
		{"ok/nullable reason", []string{"components", "schemas", "eligibilityResult", "properties", "reason", "type"}, `["string","null"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := json.Marshal(at(tt.path...))
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(got))
		})
	}
}

func TestCustomErrorBody(t *testing.T) {
	t.Parallel()
	type apiError struct {
		Detail string `json:"detail" doc:"Ours."`
	}
	d := openapi.New(openapi.Info{Title: "t", Version: "1", ErrorBody: apiError{}})
	require.NoError(t, d.Add(openapi.Operation{Method: http.MethodGet, Path: "/x", Errors: []int{500}}))
	out, err := d.JSON()
	require.NoError(t, err)
	assert.Contains(t, string(out), `"$ref": "#/components/schemas/apiError"`)
	assert.NotContains(t, string(out), `"ErrorBody"`)
}

func TestNameCollision(t *testing.T) {
	t.Parallel()
	type health struct {
		Other bool `json:"other"`
	}
	d := openapi.New(openapi.Info{Title: "t", Version: "1"})
	require.NoError(t, d.Add(openapi.Operation{Method: "GET", Path: "/a", Responses: map[int]openapi.Response{200: {Body: health{}}}}))
	require.NoError(t, d.Add(openapi.Operation{Method: "GET", Path: "/b", Responses: map[int]openapi.Response{200: {Body: keyUsage{}}}}))
	_, err := d.JSON()
	require.NoError(t, err)

	// Two types named health in the same package (one local to this
	// function): qualifying by package cannot tell them apart.
	require.NoError(t, d.Add(openapi.Operation{Method: "GET", Path: "/c", Responses: map[int]openapi.Response{200: {Body: healthOuter()}}}))
	_, err = d.JSON()
	require.ErrorIs(t, err, openapi.ErrNameCollision)
}

func healthOuter() any { return health{} }

// ErrorBody has the name of openapi.ErrorBody, in another package.
type ErrorBody struct {
	Message string `json:"message"`
}

func TestNameCollisionAcrossPackages(t *testing.T) {
	t.Parallel()
	d := openapi.New(openapi.Info{Title: "t", Version: "1"})
	require.NoError(t, d.Add(openapi.Operation{Method: "GET", Path: "/a",
		Responses: map[int]openapi.Response{200: {Body: ErrorBody{}}}, Errors: []int{500}}))
	out, err := d.JSON()
	require.NoError(t, err)
	assert.Contains(t, string(out), `"$ref": "#/components/schemas/OpenapiErrorBody"`)
	assert.Contains(t, string(out), `"$ref": "#/components/schemas/Openapi_testErrorBody"`)
}

// BenchmarkDocument measures building and writing the sample document, the
// work server.New does once at start.
func BenchmarkDocument(b *testing.B) {
	for b.Loop() {
		if _, err := sampleDocument(b).JSON(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSchemaOf(b *testing.B) {
	for b.Loop() {
		if _, _, err := openapi.SchemaOf(keyList{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRequestMedia: bodies of other media types, alone or beside JSON.
func TestRequestMedia(t *testing.T) {
	t.Parallel()
	d := openapi.New(openapi.Info{Title: "t", Version: "1"})
	text := &openapi.Schema{Type: openapi.Types{"string"}, Examples: []any{"ISA*..."}}
	require.NoError(t, d.Add(openapi.Operation{Method: "POST", Path: "/x12", RequestMedia: map[string]*openapi.Schema{"application/edi-x12": text},
		Responses: map[int]openapi.Response{200: {Description: "ok", Alternates: map[string]*openapi.Schema{"application/edi-x12": text}}}}))
	type body struct {
		A string `json:"a"`
	}
	require.NoError(t, d.Add(openapi.Operation{Method: "POST", Path: "/both", Request: body{}, RequestMedia: map[string]*openapi.Schema{"text/plain": text},
		Responses: map[int]openapi.Response{200: {Description: "ok"}}}))
	b, err := d.JSON()
	require.NoError(t, err)
	var doc struct {
		Paths map[string]map[string]struct {
			RequestBody struct {
				Required bool                       `json:"required"`
				Content  map[string]json.RawMessage `json:"content"`
			} `json:"requestBody"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	x := doc.Paths["/x12"]["post"].RequestBody
	assert.True(t, x.Required)
	assert.Len(t, x.Content, 1)
	assert.JSONEq(t, `{"schema":{"type":"string","examples":["ISA*..."]}}`, string(x.Content["application/edi-x12"]))
	both := doc.Paths["/both"]["post"].RequestBody.Content
	assert.Contains(t, both, "application/json")
	assert.Contains(t, both, "text/plain")
}
