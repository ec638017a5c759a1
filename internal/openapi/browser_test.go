package openapi_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/internal/openapi"
)

// TestPagesRenderInBrowser loads /docs and /redoc in headless Chromium with
// every host but the test server unresolvable, and checks that the pages
// rendered the sample document's operations. Opt-in (it needs Chromium and
// takes seconds): OPENAPI_BROWSER=chromium go test -run Browser.
func TestPagesRenderInBrowser(t *testing.T) {
	t.Parallel()
	browser := os.Getenv("OPENAPI_BROWSER")
	if browser == "" {
		t.Skip("set OPENAPI_BROWSER to a Chromium binary to run")
	}
	spec, err := sampleDocument(t).JSON()
	require.NoError(t, err)
	mux := http.NewServeMux()
	swagger, err := openapi.SwaggerUI("/openapi.json")
	require.NoError(t, err)
	ref, err := openapi.Redoc("/openapi.json")
	require.NoError(t, err)
	var (
		mu        sync.Mutex
		requested []string
	)
	record := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			requested = append(requested, r.URL.Path)
			mu.Unlock()
			h.ServeHTTP(w, r)
		})
	}
	mux.Handle("GET /openapi.json", record(openapi.SpecHandler(spec)))
	mux.Handle("GET /docs", record(swagger))
	mux.Handle("GET /docs/", record(swagger))
	mux.Handle("GET /redoc", record(ref))
	mux.Handle("GET /redoc/", record(ref))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	tests := []struct {
		page string
		want []string
	}{
		{"/docs", []string{"Check eligibility", "/verify-eligibility", "List keys"}},
		{"/redoc", []string{"Check eligibility", "eligibility.verified", "patient_data"}},
	}
	for _, tt := range tests {
		t.Run(tt.page, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), browser, "--headless", "--no-sandbox", "--disable-gpu",
				"--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
				"--virtual-time-budget=15000", "--dump-dom", srv.URL+tt.page)
			out, err := cmd.Output()
			require.NoError(t, err)
			dom := string(out)
			for _, w := range tt.want {
				assert.True(t, strings.Contains(dom, w), "%s: rendered page lacks %q", tt.page, w)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	t.Log("requested:", requested)
}
