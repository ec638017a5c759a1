package server_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocsRenderInBrowser loads the service's /docs and /redoc, at the root
// and mounted under a prefix as examples/mount does, in headless Chromium
// with every host but the test servers unresolvable, and checks that the
// pages rendered the API's operations (a blank page has none of them).
// Opt-in: .ci/browser.sh installs Chromium and sets
// HEALTHAGENTS_TEST_BROWSER to its binary; without it the test skips.
func TestDocsRenderInBrowser(t *testing.T) {
	t.Parallel()
	browser := os.Getenv("HEALTHAGENTS_TEST_BROWSER")
	if browser == "" {
		t.Skip("set HEALTHAGENTS_TEST_BROWSER to a Chromium binary (.ci/browser.sh does) to run")
	}
	root := setup(t).url
	host := mounted(t, "/healthagents")
	pages := []struct {
		page string
		want []string
	}{
		{"/docs", []string{"Verify a registered patient's eligibility with a proof", "/api/v1/eligibility/verify", "List API keys"}},
		{"/docs/", []string{"Verify a registered patient's eligibility with a proof", "/api/v1/eligibility/verify"}},
		// Redoc shows the request and response examples beside each operation.
		{"/redoc", []string{"Verify a registered patient's eligibility with a proof", "Authorization: Bearer &lt;API_KEY&gt;", "List API keys", "W123456789", "1234567893"}},
		{"/redoc/", []string{"Verify a registered patient's eligibility with a proof", "Authorization: Bearer &lt;API_KEY&gt;"}},
	}
	for _, base := range []string{root, host + "/healthagents"} {
		for _, p := range pages {
			t.Run(strings.TrimPrefix(base, "http://")+p.page, func(t *testing.T) {
				dom := renderDOM(t, browser, base+p.page)
				for _, w := range p.want {
					assert.Contains(t, dom, w, "%s%s: the rendered page lacks %q", base, p.page, w)
				}
			})
		}
	}
}

// renderDOM runs headless Chromium on u and returns the DOM after the
// page's scripts ran. No background networking: on a closed network
// Chromium's own connections would only be refused.
func renderDOM(t *testing.T, browser, u string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), browser,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(),
		"--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
		"--virtual-time-budget=20000", "--dump-dom", u)
	out, err := cmd.Output()
	require.NoError(t, err, "%s", u)
	return string(out)
}
