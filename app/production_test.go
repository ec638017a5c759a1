package app_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/app"
)

// TestProductionRules opens the whole service with HEALTHAGENTS_ENV=production
// and checks its rules, one table per rule. Requests go straight to the
// handler so the TCP peer can be chosen: 10.9.0.0/16 are the trusted
// proxies, 192.0.2.0/24 direct clients; an https:// request URL is a TLS
// connection to the service itself. The request rules need no real
// network, so the test opens on development parts (AllowDevelopmentParts,
// test-only); TestStrictSettingsRefuseBeforeCreating shows the binary
// refusing them.
func TestProductionRules(t *testing.T) {
	t.Parallel()
	settings := map[string]string{
		"HEALTHAGENTS_ENV": "production", "DATA_DIR": keyedDir(t), "LOG_LEVEL": "debug",
		"CORS_ORIGINS": "https://portal.example.org", "TRUSTED_PROXIES": "10.9.0.0/16", "ADMIN_TOKEN": "admin-token-of-the-test",
	}
	cfg, err := app.ConfigFromEnv(func(k string) string { return settings[k] })
	require.NoError(t, err)
	app.AllowDevelopmentParts(&cfg)
	require.True(t, cfg.Production)
	var out, logs bytes.Buffer
	a, err := app.OpenWithOutput(t.Context(), cfg, slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), &out)
	require.NoError(t, err)
	defer a.Close()

	t.Run("no bootstrap token printed", func(t *testing.T) {
		assert.Empty(t, out.String(), "production never prints a bootstrap token")
		assert.NotContains(t, logs.String(), "hab_")
	})
	t.Run("no development-mode warning", func(t *testing.T) {
		assert.NotContains(t, logs.String(), "DEVELOPMENT MODE")
	})
	t.Run("no open-CORS warning with CORS_ORIGINS set", func(t *testing.T) {
		assert.NotContains(t, logs.String(), "CORS_ORIGINS is unset")
	})

	all := apikey.AllScopes
	live, _, err := a.Keys.Create(t.Context(), apikey.CreateParams{Env: apikey.Live, Scopes: all})
	require.NoError(t, err)
	dev, _, err := a.Keys.Create(t.Context(), apikey.CreateParams{Env: apikey.Dev, Scopes: all})
	require.NoError(t, err)

	type call struct {
		method, url, peer, token, body string
		headers                        []string
	}
	do := func(t *testing.T, c call) *httptest.ResponseRecorder {
		t.Helper()
		req := httptest.NewRequestWithContext(t.Context(), c.method, c.url, strings.NewReader(c.body))
		req.RemoteAddr = c.peer
		if c.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		for _, h := range c.headers {
			k, v, _ := strings.Cut(h, ": ")
			req.Header.Add(k, v)
		}
		rec := httptest.NewRecorder()
		a.Handler.ServeHTTP(rec, req)
		return rec
	}
	detail := func(t *testing.T, rec *httptest.ResponseRecorder) string {
		t.Helper()
		var b map[string]any
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &b), rec.Body.String())
		d, _ := b["detail"].(string)
		return d
	}
	const (
		proxy  = "10.9.0.7:40000"
		direct = "192.0.2.10:40000"
		plain  = "http://api.example.org/status"
		tls    = "https://api.example.org/status"
	)
	const unauthorized, forbidden = "Unauthorized: Invalid API key", "Forbidden: Insufficient permissions"
	const liveNeedsHTTPS, adminNeedsHTTPS = "Forbidden: HTTPS required for live keys", "Forbidden: HTTPS required for the admin token"
	narrow, _, err := a.Keys.Create(t.Context(), apikey.CreateParams{Env: apikey.Live, Scopes: []apikey.Scope{apikey.ScopeEligibility}})
	require.NoError(t, err)

	t.Run("sk_live_ keys only over HTTPS", func(t *testing.T) {
		for _, tt := range []struct {
			name   string
			call   call
			status int
			detail string
		}{
			{"fail/plain HTTP from a client", call{method: "GET", url: plain, peer: direct, token: live}, 403, liveNeedsHTTPS},
			{"fail/X-Forwarded-Proto https from an untrusted peer", call{method: "GET", url: plain, peer: direct, token: live, headers: []string{"X-Forwarded-Proto: https"}}, 403, liveNeedsHTTPS},
			{"fail/trusted proxy says http", call{method: "GET", url: plain, peer: proxy, token: live, headers: []string{"X-Forwarded-Proto: http"}}, 403, liveNeedsHTTPS},
			{"fail/trusted proxy without X-Forwarded-Proto", call{method: "GET", url: plain, peer: proxy, token: live}, 403, liveNeedsHTTPS},
			{"fail/client-written https left of the proxy's http", call{method: "GET", url: plain, peer: proxy, token: live, headers: []string{"X-Forwarded-Proto: https", "X-Forwarded-Proto: http"}}, 403, liveNeedsHTTPS},
			{"fail/a missing scope over TLS says so, not HTTPS", call{method: "GET", url: "https://api.example.org/api/keys", peer: direct, token: narrow}, 403, forbidden},
			{"ok/TLS to the service", call{method: "GET", url: tls, peer: direct, token: live}, 200, ""},
			{"ok/trusted proxy says https", call{method: "GET", url: plain, peer: proxy, token: live, headers: []string{"X-Forwarded-Proto: https"}}, 200, ""},
			{"ok/no key over plain HTTP (the public root family)", call{method: "GET", url: plain, peer: direct}, 200, ""},
		} {
			rec := do(t, tt.call)
			assert.Equal(t, tt.status, rec.Code, tt.name)
			if tt.detail != "" {
				assert.Equal(t, tt.detail, detail(t, rec), tt.name)
			}
		}
	})

	t.Run("ADMIN_TOKEN only over HTTPS", func(t *testing.T) {
		const create = "/auth/keys"
		for _, tt := range []struct {
			name   string
			call   call
			status int
			detail string
		}{
			{"fail/plain HTTP from a client", call{method: "POST", url: "http://api.example.org" + create, peer: direct, token: "admin-token-of-the-test", body: `{}`}, 403, adminNeedsHTTPS},
			{"fail/a wrong token over plain HTTP gets the same answer", call{method: "POST", url: "http://api.example.org" + create, peer: direct, token: "not-the-admin-token", body: `{}`}, 403, adminNeedsHTTPS},
			{"fail/X-Forwarded-Proto https from an untrusted peer", call{method: "POST", url: "http://api.example.org" + create, peer: direct, token: "admin-token-of-the-test", body: `{}`, headers: []string{"X-Forwarded-Proto: https"}}, 403, adminNeedsHTTPS},
			{"fail/trusted proxy says http", call{method: "POST", url: "http://api.example.org" + create, peer: proxy, token: "admin-token-of-the-test", body: `{}`, headers: []string{"X-Forwarded-Proto: http"}}, 403, adminNeedsHTTPS},
			{"ok/TLS to the service", call{method: "POST", url: "https://api.example.org" + create, peer: direct, token: "admin-token-of-the-test", body: `{}`}, 200, ""},
			{"ok/trusted proxy says https", call{method: "POST", url: "http://api.example.org" + create, peer: proxy, token: "admin-token-of-the-test", body: `{}`, headers: []string{"X-Forwarded-Proto: https"}}, 200, ""},
		} {
			rec := do(t, tt.call)
			assert.Equal(t, tt.status, rec.Code, "%s: %s", tt.name, rec.Body.String())
			if tt.detail != "" {
				assert.Equal(t, tt.detail, detail(t, rec), tt.name)
				assert.NotContains(t, rec.Body.String(), "sk_live_", tt.name)
			}
		}
	})

	t.Run("sk_dev_ keys refused in production", func(t *testing.T) {
		for _, tt := range []struct {
			name   string
			call   call
			status int
			detail string
			prefix string
		}{
			{"fail/dev key over TLS", call{method: "GET", url: tls, peer: direct, token: dev}, 401, unauthorized, ""},
			{"fail/dev key behind a trusted TLS proxy", call{method: "GET", url: plain, peer: proxy, token: dev, headers: []string{"X-Forwarded-Proto: https"}}, 401, unauthorized, ""},
			{"fail/dev key on a key-only route", call{method: "GET", url: "https://api.example.org/api/keys", peer: direct, token: dev}, 401, unauthorized, ""},
			{"fail/asking for a dev key", call{method: "POST", url: "https://api.example.org/auth/keys", peer: direct, token: live, body: `{"env":"dev"}`}, 400, "Validation error: sk_dev_ keys are not issued in production", ""},
			{"ok/a new key defaults to sk_live_", call{method: "POST", url: "https://api.example.org/auth/keys", peer: direct, token: live, body: `{}`}, 200, "", "sk_live_"},
		} {
			rec := do(t, tt.call)
			assert.Equal(t, tt.status, rec.Code, "%s: %s", tt.name, rec.Body.String())
			if tt.detail != "" {
				assert.Equal(t, tt.detail, detail(t, rec), tt.name)
			}
			if tt.prefix != "" {
				var b map[string]any
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &b))
				k, _ := b["api_key"].(string)
				assert.True(t, strings.HasPrefix(k, tt.prefix), "%s: %q", tt.name, k)
			}
		}
	})

	t.Run("strict CORS with CORS_ORIGINS", func(t *testing.T) {
		const good, bad = "https://portal.example.org", "https://evil.example.net"
		preflight := func(origin string) []string {
			return []string{"Origin: " + origin, "Access-Control-Request-Method: POST", "Access-Control-Request-Headers: authorization, content-type"}
		}
		for _, tt := range []struct {
			name        string
			call        call
			status      int
			allowOrigin string
			allowMethod bool
		}{
			{"ok/allowed origin", call{method: "GET", url: tls, peer: direct, headers: []string{"Origin: " + good}}, 200, good, false},
			{"ok/allowed origin's preflight", call{method: "OPTIONS", url: "https://api.example.org/verify-eligibility", peer: direct, headers: preflight(good)}, 204, good, true},
			{"fail/other origin gets no CORS headers", call{method: "GET", url: tls, peer: direct, headers: []string{"Origin: " + bad}}, 200, "", false},
			{"fail/other origin's preflight", call{method: "OPTIONS", url: "https://api.example.org/verify-eligibility", peer: direct, headers: preflight(bad)}, 204, "", false},
			{"fail/origin differing only in scheme", call{method: "GET", url: tls, peer: direct, headers: []string{"Origin: http://portal.example.org"}}, 200, "", false},
			{"fail/origin with the allowed one as a prefix", call{method: "GET", url: tls, peer: direct, headers: []string{"Origin: https://portal.example.org.evil.net"}}, 200, "", false},
			{"fail/null origin", call{method: "GET", url: tls, peer: direct, headers: []string{"Origin: null"}}, 200, "", false},
		} {
			rec := do(t, tt.call)
			assert.Equal(t, tt.status, rec.Code, tt.name)
			assert.Equal(t, tt.allowOrigin, rec.Header().Get("Access-Control-Allow-Origin"), tt.name)
			if tt.allowOrigin == "" {
				assert.Empty(t, rec.Header().Get("Access-Control-Allow-Credentials"), tt.name)
			}
			assert.Equal(t, tt.allowMethod, rec.Header().Get("Access-Control-Allow-Methods") != "", tt.name)
			assert.Contains(t, rec.Header().Values("Vary"), "Origin", tt.name)
		}
	})

	t.Run("webhook URLs must be https", func(t *testing.T) {
		for _, tt := range []struct {
			name   string
			url    string
			status int
		}{
			{"fail/http URL", "http://93.184.215.14/hook", 400},
			{"fail/https on loopback", "https://127.0.0.1/hook", 400},
			{"fail/https on a private address", "https://10.1.2.3/hook", 400},
			{"fail/https on the metadata address", "https://169.254.169.254/latest", 400},
			{"ok/https on a public address", "https://93.184.215.14/hook", 201},
		} {
			body := `{"url":"` + tt.url + `","events":["eligibility.verified"]}`
			rec := do(t, call{method: "POST", url: "https://api.example.org/webhooks", peer: direct, token: live, body: body})
			assert.Equal(t, tt.status, rec.Code, "%s: %s", tt.name, rec.Body.String())
			if tt.status >= 400 {
				assert.NotEmpty(t, detail(t, rec), tt.name)
			}
		}
	})

	t.Run("HSTS on HTTPS", func(t *testing.T) {
		for _, tt := range []struct {
			name string
			call call
			want bool
		}{
			{"ok/TLS to the service", call{method: "GET", url: tls, peer: direct}, true},
			{"ok/a trusted proxy terminating TLS", call{method: "GET", url: plain, peer: proxy, headers: []string{"X-Forwarded-Proto: https"}}, true},
			{"ok/plain HTTP sends none (browsers ignore it there)", call{method: "GET", url: plain, peer: direct}, false},
			{"ok/an untrusted peer claiming https", call{method: "GET", url: plain, peer: direct, headers: []string{"X-Forwarded-Proto: https"}}, false},
		} {
			rec := do(t, tt.call)
			assert.Equal(t, tt.want, rec.Header().Get("Strict-Transport-Security") != "", tt.name)
		}
	})
}
