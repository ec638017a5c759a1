package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/server"
)

// mounted serves the API under prefix in a host program's mux, as
// examples/mount does, and returns the host's URL.
func mounted(t *testing.T, prefix string, opts ...server.Option) string {
	t.Helper()
	key, err := cipher.GenerateKey()
	require.NoError(t, err)
	kr, err := cipher.ParseKeyring(key)
	require.NoError(t, err)
	svc, err := healthagents.New(kr)
	require.NoError(t, err)
	h, err := server.New(server.Deps{Service: svc}, opts...)
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle(prefix+"/", http.StripPrefix(prefix, h))
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestDocsUnderPrefix loads /docs and /redoc (with and without the
// trailing slash) at the root and under a mount prefix, then every asset
// and the document each page names, resolved as a browser would: all are
// served, none from the root when mounted (the root serves nothing).
func TestDocsUnderPrefix(t *testing.T) {
	t.Parallel()
	root := setup(t).url
	host := mounted(t, "/healthagents")
	ref := regexp.MustCompile(`(?:src|href)="([^"]+)"|"swaggerJsonUrl":"([^"]+)"|new URL\("([^"]+)"`)
	for _, base := range []string{root, host + "/healthagents"} {
		for _, page := range []string{"/docs", "/docs/", "/redoc", "/redoc/"} {
			pageURL, err := url.Parse(base + page)
			require.NoError(t, err)
			status, html := fetch(t, pageURL.String(), nil)
			require.Equal(t, 200, status, pageURL.String())
			refs := ref.FindAllStringSubmatch(html, -1)
			require.NotEmpty(t, refs)
			sawSpec := false
			for _, m := range refs {
				u, err := pageURL.Parse(m[1] + m[2] + m[3])
				require.NoError(t, err)
				if base != root {
					assert.True(t, strings.HasPrefix(u.Path, "/healthagents/"), "%s names %s, outside the prefix", pageURL, u)
				}
				status, body := fetch(t, u.String(), nil)
				assert.Equal(t, 200, status, "%s → %s", pageURL, u)
				if strings.HasSuffix(u.Path, "/openapi.json") {
					sawSpec = true
					assert.Contains(t, body, `"openapi": "3.1.0"`)
				}
			}
			assert.True(t, sawSpec, "%s names no document", pageURL)
		}
	}
}

// TestServedServers: the document's servers entry is the URL it was
// reached at, with the mount prefix; X-Forwarded-Proto, -Host and -Prefix
// count only from a trusted proxy.
func TestServedServers(t *testing.T) {
	t.Parallel()
	root := setup(t).url
	host := mounted(t, "/healthagents")
	trusting := mounted(t, "/healthagents", server.WithTrustedProxies("127.0.0.1"))
	fwd := map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "api.example.org", "X-Forwarded-Prefix": "/edge/"}
	for _, tc := range []struct {
		name, url string
		hdr       map[string]string
		want      string
	}{
		{"root", root + "/openapi.json", nil, root},
		{"mounted", host + "/healthagents/openapi.json", nil, host + "/healthagents"},
		{"untrusted forwarded headers", host + "/healthagents/openapi.json", fwd, host + "/healthagents"},
		{"trusted proxy", trusting + "/healthagents/openapi.json", fwd, "https://api.example.org/edge/healthagents"},
		{"bad forwarded host", trusting + "/healthagents/openapi.json", map[string]string{"X-Forwarded-Host": "evil.example/<x>"}, "http://localhost:8000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := fetch(t, tc.url, tc.hdr)
			require.Equal(t, 200, status)
			var doc struct {
				Servers []struct{ URL string } `json:"servers"`
			}
			require.NoError(t, json.Unmarshal([]byte(body), &doc))
			require.Len(t, doc.Servers, 1)
			assert.Equal(t, tc.want, doc.Servers[0].URL)
		})
	}
}

func fetch(t *testing.T, u string, hdr map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	require.NoError(t, err)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// TestDescriptionsShowAngleBrackets: Redoc renders descriptions as
// Markdown, where a bare <API_KEY> is an HTML tag and vanishes. Every
// <word> in a description must sit inside a code span.
func TestDescriptionsShowAngleBrackets(t *testing.T) {
	t.Parallel()
	spec, err := server.OpenAPI()
	require.NoError(t, err)
	var doc any
	require.NoError(t, json.Unmarshal(spec, &doc))
	tag := regexp.MustCompile(`<[A-Za-z_][^>]*>`)
	code := regexp.MustCompile("`[^`]*`")
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "description" {
					assert.Empty(t, tag.FindAllString(code.ReplaceAllString(s, ""), -1), "%s: a bare tag Redoc would swallow: %q", path, s)
				}
				walk(path+"/"+k, x)
			}
		case []any:
			for _, x := range v {
				walk(path+"[]", x)
			}
		}
	}
	walk("#", doc)
	assert.Contains(t, string(spec), "`Authorization: Bearer <API_KEY>`")
}
