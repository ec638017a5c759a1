package openapi_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	redoc "github.com/mvrilo/go-redoc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/internal/openapi"
)

const testSpec = `{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{}}`

// docsServer mounts the spec and both pages as a service would.
func docsServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	swagger, err := openapi.SwaggerUI("/openapi.json", openapi.WithTitle("Test API"))
	require.NoError(t, err)
	ref, err := openapi.Redoc("/openapi.json", openapi.WithTitle("Test API"))
	require.NoError(t, err)
	mux.Handle("GET /openapi.json", openapi.SpecHandler([]byte(testSpec)))
	mux.Handle("GET /docs", swagger)
	mux.Handle("GET /docs/", swagger)
	mux.Handle("/redoc", ref)
	mux.Handle("/redoc/", ref)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

var (
	// attrURL finds the URLs a page makes the browser load.
	attrURL = regexp.MustCompile(`(?i)\b(?:src|href|spec-url)\s*=\s*["']([^"']+)["']`)
	// absURL finds any absolute URL with a host, anywhere in the page.
	absURL = regexp.MustCompile(`(?i)(?:https?:)?//[a-z0-9][a-z0-9.-]*\.[a-z]{2,}`)
	// cssRemote finds a stylesheet's url() or @import of another host.
	cssRemote = regexp.MustCompile(`(?i)(?:url\(\s*["']?|@import\s+["'])(?:https?:)?//`)
	// swaggerSpec finds the spec URL in Swagger UI's inline configuration.
	swaggerSpec = regexp.MustCompile(`"swaggerJsonUrl":"([^"]+)"`)
	// redocSpec finds the spec URL in the Redoc page's script.
	redocSpec = regexp.MustCompile(`Redoc\.init\(new URL\("([^"]+)"`)
)

func get(t *testing.T, rawURL string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, rawURL, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, body
}

// TestPagesOffline fetches each page, then every script, stylesheet, icon
// and spec URL it references, and requires each to be served by the same
// server: nothing comes from a CDN or any other host. The pages are also
// mounted under a prefix by http.StripPrefix, as a host program would:
// every reference must resolve under the prefix, never at the root (the
// root serves nothing there).
func TestPagesOffline(t *testing.T) {
	t.Parallel()
	srv := docsServer(t)
	outer := http.NewServeMux()
	inner := srv.Config.Handler
	outer.Handle("/healthagents/v2/", http.StripPrefix("/healthagents/v2", inner))
	mounted := httptest.NewServer(outer)
	t.Cleanup(mounted.Close)
	tests := []struct {
		name, page string
		minRefs    int
		specRe     *regexp.Regexp
	}{
		{"ok/swagger", "/docs", 4, swaggerSpec},
		{"ok/swagger with slash", "/docs/", 4, swaggerSpec},
		{"ok/redoc", "/redoc", 1, redocSpec},
		{"ok/redoc with slash", "/redoc/", 1, redocSpec},
	}
	for _, base := range []string{srv.URL, mounted.URL + "/healthagents/v2"} {
		for _, tt := range tests {
			t.Run(tt.name+" at "+base, func(t *testing.T) {
				t.Parallel()
				checkPageOffline(t, base+tt.page, tt.minRefs, tt.specRe)
			})
		}
	}
}

func checkPageOffline(t *testing.T, page string, minRefs int, specRe *regexp.Regexp) {
	t.Helper()
	{
		pageURL, err := url.Parse(page)
		require.NoError(t, err)
		resp, body := get(t, pageURL.String())
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Contains(t, resp.Header.Get("Content-Type"), "text/html")
		assert.Contains(t, string(body), "Test API")
		assert.Empty(t, absURL.FindAllString(string(body), -1), "page names another host")

		refs := attrURL.FindAllStringSubmatch(string(body), -1)
		if specRe != nil {
			m := specRe.FindStringSubmatch(string(body))
			require.NotNil(t, m, "spec URL in page config")
			refs = append(refs, m)
		}
		require.GreaterOrEqual(t, len(refs), minRefs+1)
		for _, m := range refs {
			ref, err := pageURL.Parse(m[1])
			require.NoError(t, err)
			assert.Equal(t, pageURL.Host, ref.Host, "%s is not local", m[1])
			if strings.Contains(page, "/healthagents/v2/") {
				assert.True(t, strings.HasPrefix(ref.Path, "/healthagents/v2/"), "%s resolves outside the mount: %s", m[1], ref.Path)
			}
			r, b := get(t, ref.String())
			assert.Equal(t, http.StatusOK, r.StatusCode, ref.String())
			assert.NotEmpty(t, b, ref.String())
			if strings.Contains(r.Header.Get("Content-Type"), "css") {
				assert.NotRegexp(t, cssRemote, string(b), "stylesheet %s loads from another host", ref)
			}
		}
	}
}

func TestRedocHandler(t *testing.T) {
	t.Parallel()
	srv := docsServer(t)

	t.Run("ok/script is go-redoc's embedded bundle", func(t *testing.T) {
		t.Parallel()
		resp, body := get(t, srv.URL+"/redoc/redoc.standalone.js")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Contains(t, resp.Header.Get("Content-Type"), "javascript")
		assert.Equal(t, redoc.JavaScript, string(body))
	})
	t.Run("ok/gzip when accepted", func(t *testing.T) {
		t.Parallel()
		resp, body := get(t, srv.URL+"/redoc/redoc.standalone.js", "Accept-Encoding", "gzip")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, "gzip", resp.Header.Get("Content-Encoding"))
		assert.Less(t, len(body), len(redoc.JavaScript)/2)
		zr, err := gzip.NewReader(bytes.NewReader(body))
		require.NoError(t, err)
		plain, err := io.ReadAll(zr)
		require.NoError(t, err)
		assert.Equal(t, redoc.JavaScript, string(plain))
	})
	t.Run("ok/conditional get", func(t *testing.T) {
		t.Parallel()
		resp, _ := get(t, srv.URL+"/redoc")
		etag := resp.Header.Get("ETag")
		require.NotEmpty(t, etag)
		resp, body := get(t, srv.URL+"/redoc", "If-None-Match", etag)
		assert.Equal(t, http.StatusNotModified, resp.StatusCode)
		assert.Empty(t, body)
	})
	t.Run("fail/unknown asset", func(t *testing.T) {
		t.Parallel()
		resp, _ := get(t, srv.URL+"/redoc/other.js")
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	})
	t.Run("fail/post", func(t *testing.T) {
		t.Parallel()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/redoc", strings.NewReader("x"))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	})
}

func TestSpecHandler(t *testing.T) {
	t.Parallel()
	srv := docsServer(t)
	resp, body := get(t, srv.URL+"/openapi.json")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	assert.JSONEq(t, testSpec, string(body))
}

func TestWithServers(t *testing.T) {
	t.Parallel()
	doc := openapi.New(openapi.Info{Title: "t", Version: "1", Servers: []openapi.Server{{URL: "http://localhost:8000"}}})
	require.NoError(t, doc.Add(openapi.Operation{Method: "GET", Path: "/x", Responses: map[int]openapi.Response{204: {}}}))
	spec, err := doc.JSON()
	require.NoError(t, err)

	out, err := openapi.WithServers(spec, []openapi.Server{{URL: "https://api.example.org/healthagents", Description: "here"}})
	require.NoError(t, err)
	var got, want map[string]any
	require.NoError(t, json.Unmarshal(out, &got))
	require.NoError(t, json.Unmarshal(spec, &want))
	assert.Equal(t, []any{map[string]any{"url": "https://api.example.org/healthagents", "description": "here"}}, got["servers"])
	delete(got, "servers")
	delete(want, "servers")
	assert.Equal(t, want, got, "only servers changes")

	_, err = openapi.WithServers([]byte(`{"openapi":"3.1.0"}`), nil)
	assert.Error(t, err, "no servers list")
	_, err = openapi.WithServers([]byte(`[1]`), nil)
	assert.Error(t, err, "not an object")

	h := openapi.SpecHandlerFor(spec, func(r *http.Request) []openapi.Server {
		if r.Host == "plain" {
			return nil
		}
		return []openapi.Server{{URL: "http://" + r.Host + "/p"}}
	})
	for _, host := range []string{"a.example", "b.example", "plain"} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/openapi.json", nil)
		req.Host = host
		h.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code)
		var d struct{ Servers []openapi.Server }
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &d))
		wantURL := "http://" + host + "/p"
		if host == "plain" {
			wantURL = "http://localhost:8000"
		}
		assert.Equal(t, wantURL, d.Servers[0].URL)
	}
}

func TestUIOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		spec    string
		opts    []openapi.UIOption
		wantErr bool
	}{
		{"ok/defaults", "/openapi.json", nil, false},
		{"ok/base path", "/openapi.json", []openapi.UIOption{openapi.WithBasePath("/api/docs/")}, false},
		{"fail/empty spec", "", nil, true},
		{"fail/quote in spec", `/x"onload="`, nil, true},
		{"fail/relative base", "/openapi.json", []openapi.UIOption{openapi.WithBasePath("docs")}, true},
		{"fail/root base", "/openapi.json", []openapi.UIOption{openapi.WithBasePath("/")}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err1 := openapi.SwaggerUI(tt.spec, tt.opts...)
			_, err2 := openapi.Redoc(tt.spec, tt.opts...)
			if tt.wantErr {
				assert.Error(t, err1)
				assert.Error(t, err2)
				return
			}
			assert.NoError(t, err1)
			assert.NoError(t, err2)
		})
	}
}

func TestRedocBasePath(t *testing.T) {
	t.Parallel()
	h, err := openapi.Redoc("/spec.json", openapi.WithBasePath("/api/reference"))
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/api/reference", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	// References relative to the page's directory (/api/), so they hold
	// under any prefix the handler is mounted at.
	assert.Contains(t, rec.Body.String(), `src="reference/redoc.standalone.js"`)
	assert.Contains(t, rec.Body.String(), `new URL("../spec.json"`)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/api/reference/", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Contains(t, rec.Body.String(), `src="redoc.standalone.js"`)
	assert.Contains(t, rec.Body.String(), `new URL("../../spec.json"`)
}

func TestRelativeRefs(t *testing.T) {
	t.Parallel()
	h, err := openapi.SwaggerUI("/openapi.json")
	require.NoError(t, err)
	for page, want := range map[string][]string{
		"/docs":  {`href="docs/swagger-ui.css"`, `src="docs/swagger-ui-bundle.js"`, `"swaggerJsonUrl":"openapi.json"`},
		"/docs/": {`href="./swagger-ui.css"`, `src="./swagger-ui-bundle.js"`, `"swaggerJsonUrl":"../openapi.json"`},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, page, nil))
		require.Equal(t, http.StatusOK, rec.Code)
		for _, w := range want {
			assert.Contains(t, rec.Body.String(), w, page)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/elsewhere", nil))
	assert.Equal(t, http.StatusNotFound, rec.Code)
}

// BenchmarkRedoc measures building the Redoc handler, which server.New
// does every time; the 1 MB script is only read on first request.
func BenchmarkRedoc(b *testing.B) {
	for b.Loop() {
		if _, err := openapi.Redoc("/openapi.json"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSwaggerUI(b *testing.B) {
	for b.Loop() {
		if _, err := openapi.SwaggerUI("/openapi.json"); err != nil {
			b.Fatal(err)
		}
	}
}
