package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/api"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/ratelimit"
	"github.com/healthagents/healthagents/ratelimit/redisstore"
	"github.com/healthagents/healthagents/server"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
	"github.com/healthagents/healthagents/webhook"
)

const adminToken = "test-admin-token-0123456789"

// testClock is a settable clock shared by the key service and the limiter.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// keyServer is server.New with a real key service on a real database and
// a real limiter, mounted in httptest.
type keyServer struct {
	url     string
	keys    *apikey.Service
	limiter *ratelimit.Limiter
	clock   *testClock
}

type keyServerOpts struct {
	clock      *testClock
	limiter    *ratelimit.Limiter // default: in-process, spec figures, on clock
	noLimiter  bool
	serverOpts []server.Option
	keyOpts    []apikey.Option
	webhooks   *webhook.Registry // Deps.Webhooks, if set
	idem       server.IdempotencyStore
}

func newKeyServer(t *testing.T, db *store.DB, o keyServerOpts) *keyServer {
	t.Helper()
	if o.clock == nil {
		o.clock = &testClock{now: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
	}
	ks, err := store.NewKeyStore(db)
	require.NoError(t, err)
	keys, err := apikey.New(ks, append([]apikey.Option{apikey.WithClock(o.clock.Now), apikey.WithAdminToken(adminToken)}, o.keyOpts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { keys.Close(context.Background()) })
	lim := o.limiter
	if lim == nil && !o.noLimiter {
		lim, err = ratelimit.New(ratelimit.WithClock(o.clock.Now))
		require.NoError(t, err)
	}
	fk, err := cipher.GenerateKey()
	require.NoError(t, err)
	kr, err := cipher.ParseKeyring(fk)
	require.NoError(t, err)
	svc, err := healthagents.New(kr)
	require.NoError(t, err)
	h, err := server.New(server.Deps{Service: svc, Keys: keys, Limiter: lim, Webhooks: o.webhooks, Idempotency: o.idem}, o.serverOpts...)
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return &keyServer{url: ts.URL, keys: keys, limiter: lim, clock: o.clock}
}

// foreignKey mints a well-formed key in another database: valid checksum,
// unknown here.
func foreignKey(t *testing.T) string {
	t.Helper()
	db := storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)})
	ks, err := store.NewKeyStore(db)
	require.NoError(t, err)
	svc, err := apikey.New(ks)
	require.NoError(t, err)
	defer svc.Close(context.Background())
	raw, _, err := svc.Create(t.Context(), apikey.CreateParams{})
	require.NoError(t, err)
	return raw
}

type response struct {
	status int
	header http.Header
	body   map[string]any
}

func (r response) detail() string { s, _ := r.body["detail"].(string); return s }

// call sends a request with an optional bearer token and extra headers
// ("Name: value").
func (ks *keyServer) call(t *testing.T, method, path, token string, body any, headers ...string) response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, ks.url+path, rd)
	require.NoError(t, err)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	if len(raw) > 0 {
		require.NoError(t, json.Unmarshal(raw, &out), "body: %s", raw)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: out}
}

// create makes a key through POST /auth/keys with the admin token.
func (ks *keyServer) create(t *testing.T, req api.CreateKeyRequest) (string, string) {
	t.Helper()
	r := ks.call(t, "POST", "/auth/keys", adminToken, req)
	require.Equal(t, http.StatusOK, r.status, r.body)
	return r.body["api_key"].(string), r.body["key_id"].(string)
}

func TestAuthStatuses(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		ks := newKeyServer(t, db, keyServerOpts{serverOpts: []server.Option{server.WithTrustedProxies("127.0.0.1")}})
		admin, _ := ks.create(t, api.CreateKeyRequest{Scopes: []string{"keys:admin", "eligibility"}})
		plain, plainID := ks.create(t, api.CreateKeyRequest{})
		rxOnly, _ := ks.create(t, api.CreateKeyRequest{Scopes: []string{"prescription"}})
		restricted, _ := ks.create(t, api.CreateKeyRequest{Restricted: true})
		fenced, _ := ks.create(t, api.CreateKeyRequest{AllowedIPs: []string{"10.0.0.0/8"}})
		live, _ := ks.create(t, api.CreateKeyRequest{Env: "live"})
		revoked, revokedID := ks.create(t, api.CreateKeyRequest{})
		require.Equal(t, http.StatusOK, ks.call(t, "DELETE", "/api/keys/"+revokedID, revoked, nil).status)
		forged := plain[:len(plain)-1] + map[bool]string{true: "A", false: "B"}[plain[len(plain)-1] != 'A']
		unknown := foreignKey(t)

		const unauthorized, forbidden = "Unauthorized: Invalid API key", "Forbidden: Insufficient permissions"
		tests := []struct {
			name    string
			method  string
			path    string
			token   string
			headers []string
			status  int
			detail  string
		}{
			{"fail/missing key on a key path", "GET", "/api/keys", "", nil, 401, unauthorized},
			{"fail/not a bearer", "GET", "/api/keys", "", []string{"Authorization: Basic " + admin}, 401, unauthorized},
			{"fail/bad checksum", "GET", "/api/keys", forged, nil, 401, unauthorized},
			{"fail/unknown key", "GET", "/api/keys", unknown, nil, 401, unauthorized},
			{"fail/revoked", "GET", "/api/keys/" + revokedID + "/usage", revoked, nil, 401, unauthorized},
			{"fail/invalid key on the optional root family", "GET", "/status", forged, nil, 401, unauthorized},
			{"fail/scope missing for the path", "POST", "/verify-eligibility", rxOnly, nil, 403, forbidden},
			{"fail/admin scope missing", "GET", "/api/keys", plain, nil, 403, forbidden},
			{"fail/other key's usage", "GET", "/api/keys/" + plainID + "/usage", rxOnly, nil, 403, forbidden},
			{"fail/restricted account", "GET", "/status", restricted, nil, 403, forbidden},
			{"fail/address not whitelisted", "GET", "/status", fenced, nil, 403, forbidden},
			{"fail/sk_live_ over plain HTTP", "GET", "/status", live, nil, 403, "Forbidden: HTTPS required for live keys"},
			{"ok/sk_live_ behind a trusted TLS proxy", "GET", "/status", live, []string{"X-Forwarded-Proto: https"}, 200, ""},
			{"ok/address whitelisted via trusted proxy", "GET", "/status", fenced, []string{"X-Forwarded-For: 10.1.2.3"}, 200, ""},
			{"ok/public root family", "GET", "/status", "", nil, 200, ""},
			{"ok/admin lists", "GET", "/api/keys", admin, nil, 200, ""},
		}
		for _, tt := range tests {
			r := ks.call(t, tt.method, tt.path, tt.token, nil, tt.headers...)
			assert.Equal(t, tt.status, r.status, tt.name)
			if tt.detail != "" {
				assert.Equal(t, tt.detail, r.detail(), tt.name)
				assert.Len(t, r.body, 1, "%s: the body is {detail} only", tt.name)
			}
		}
	})
}

func TestDevKeysRefusedInProduction(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		clk := &testClock{now: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
		dev := newKeyServer(t, db, keyServerOpts{clock: clk})
		devKey, _ := dev.create(t, api.CreateKeyRequest{})
		require.True(t, strings.HasPrefix(devKey, "sk_dev_"), "development mode issues sk_dev_ keys")
		require.Equal(t, 200, dev.call(t, "GET", "/status", devKey, nil).status)

		prod := newKeyServer(t, storetest.Open(t, b), keyServerOpts{clock: clk, serverOpts: []server.Option{server.WithProduction(true), server.WithTrustedProxies("127.0.0.0/8")}})
		r := prod.call(t, "GET", "/status", devKey, nil, "X-Forwarded-Proto: https")
		assert.Equal(t, 401, r.status)
		assert.Equal(t, "Unauthorized: Invalid API key", r.detail())
		r = prod.call(t, "POST", "/auth/keys", adminToken, nil, "X-Forwarded-Proto: https")
		require.Equal(t, 200, r.status)
		assert.True(t, strings.HasPrefix(r.body["api_key"].(string), "sk_live_"), "production issues sk_live_ keys")
		r = prod.call(t, "POST", "/auth/keys", adminToken, api.CreateKeyRequest{Env: "dev"}, "X-Forwarded-Proto: https")
		assert.Equal(t, 400, r.status)
		// The admin token over plain HTTP is refused before it is compared.
		r = prod.call(t, "POST", "/auth/keys", adminToken, nil)
		assert.Equal(t, 403, r.status)
		assert.Equal(t, "Forbidden: HTTPS required for the admin token", r.detail())
	})
}

func TestRateLimitHeadersAndStatus(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		ks := newKeyServer(t, db, keyServerOpts{})
		now := ks.clock.Now()

		r := ks.call(t, "GET", "/status", "", nil)
		require.Equal(t, 200, r.status)
		assert.Equal(t, "500", r.header.Get("X-RateLimit-Limit"))
		assert.Equal(t, "499", r.header.Get("X-RateLimit-Remaining"))
		assert.Equal(t, strconv.FormatInt(now.Unix()+1, 10), r.header.Get("X-RateLimit-Reset"), "whole again 0.12 s later, rounded up")

		// Public callers: 10 per minute; the 11th gets 429.
		for i := range 10 {
			r = ks.call(t, "POST", "/verify-eligibility", "", map[string]any{})
			require.Equal(t, 400, r.status, "call %d reaches the handler", i)
			assert.Equal(t, "10", r.header.Get("X-RateLimit-Limit"))
			assert.Equal(t, strconv.Itoa(9-i), r.header.Get("X-RateLimit-Remaining"))
		}
		r = ks.call(t, "POST", "/verify-eligibility", "", map[string]any{})
		assert.Equal(t, 429, r.status)
		assert.Equal(t, "Rate limit exceeded. Try again in 6 seconds.", r.detail())
		assert.Equal(t, "6", r.header.Get("Retry-After"))
		assert.Equal(t, "0", r.header.Get("X-RateLimit-Remaining"))
		assertRetryAgrees(t, r.header, r.detail())

		// A key has its own budgets: free tier, 100 per minute.
		key, id := ks.create(t, api.CreateKeyRequest{})
		r = ks.call(t, "GET", "/api/keys/"+id+"/usage", key, nil)
		require.Equal(t, 200, r.status, r.body)
		assert.Equal(t, "100", r.header.Get("X-RateLimit-Limit"))
		assert.Equal(t, "99", r.header.Get("X-RateLimit-Remaining"))

		// Refused credentials count against the address's public budget.
		// The forgery changes the last character (a key already ending in
		// "x" stayed valid and got 403 one run in 62).
		forged := key[:len(key)-1] + map[bool]string{true: "y", false: "x"}[strings.HasSuffix(key, "x")]
		ks.clock.Add(time.Minute)
		for range 10 {
			require.Equal(t, 401, ks.call(t, "GET", "/api/keys", forged, nil).status)
		}
		assert.Equal(t, 429, ks.call(t, "GET", "/api/keys", forged, nil).status)
	})
}

func TestRedisLimitSharedByTwoServers(t *testing.T) {
	t.Parallel()
	url := os.Getenv("HEALTHAGENTS_TEST_REDIS")
	if url == "" {
		t.Skip("HEALTHAGENTS_TEST_REDIS is not set")
	}
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		prefix := fmt.Sprintf("test:%s:%d:", t.Name(), time.Now().UnixNano())
		clk := &testClock{now: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
		newLimiter := func() *ratelimit.Limiter {
			ro, err := redis.ParseURL(url)
			require.NoError(t, err)
			c := redis.NewClient(ro)
			t.Cleanup(func() {
				if keys, _ := c.Keys(context.Background(), prefix+"*").Result(); len(keys) > 0 {
					c.Del(context.Background(), keys...)
				}
				c.Close()
			})
			l, err := redisstore.NewLimiter(c, prefix, ratelimit.WithClock(clk.Now))
			require.NoError(t, err)
			return l
		}
		// Two server instances, two database handles on one database, one Redis.
		a := newKeyServer(t, db, keyServerOpts{clock: clk, limiter: newLimiter()})
		bb := newKeyServer(t, storetest.Open(t, b), keyServerOpts{clock: clk, limiter: newLimiter()})
		key, id := a.create(t, api.CreateKeyRequest{Tier: "free"})
		allowed := 0
		for i := range 130 {
			srv := a
			if i%2 == 1 {
				srv = bb
			}
			r := srv.call(t, "GET", "/api/keys/"+id+"/usage?window=1h", key, nil)
			switch r.status {
			case 200:
				allowed++
			case 429:
				assertRetryAgrees(t, r.header, r.detail())
			default:
				t.Fatalf("status %d: %v", r.status, r.body)
			}
		}
		assert.Equal(t, 100, allowed, "one free-tier budget across both servers")
	})
}

// newHandler is server.New over a fresh SQLite key store, in process, for
// benchmarks and fuzzing (no listener).
func newHandler(tb testing.TB, limiter *ratelimit.Limiter) (http.Handler, *apikey.Service) {
	tb.Helper()
	db := storetest.Open(tb, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(tb)})
	ks, err := store.NewKeyStore(db)
	require.NoError(tb, err)
	keys, err := apikey.New(ks, apikey.WithCacheTTL(time.Hour))
	require.NoError(tb, err)
	tb.Cleanup(func() { keys.Close(context.Background()) })
	fk, err := cipher.GenerateKey()
	require.NoError(tb, err)
	kr, err := cipher.ParseKeyring(fk)
	require.NoError(tb, err)
	svc, err := healthagents.New(kr)
	require.NoError(tb, err)
	h, err := server.New(server.Deps{Service: svc, Keys: keys, Limiter: limiter})
	require.NoError(tb, err)
	return h, keys
}

// BenchmarkGuard compares GET /status served in process without a key and
// with a cached key (authentication, scope, limits, usage recording); the
// difference is what the middleware adds per request.
func BenchmarkGuard(b *testing.B) {
	p := ratelimit.DefaultPolicy()
	p.Endpoint[ratelimit.ClassStatus] = 1 << 30
	lim, err := ratelimit.New(ratelimit.WithPolicy(p))
	require.NoError(b, err)
	h, keys := newHandler(b, lim)
	raw, _, err := keys.Create(context.Background(), apikey.CreateParams{Env: apikey.Dev})
	require.NoError(b, err)
	for _, bc := range []struct{ name, token string }{{"public", ""}, {"key", raw}} {
		b.Run(bc.name, func(b *testing.B) {
			req := httptest.NewRequest("GET", "/status", nil)
			if bc.token != "" {
				req.Header.Set("Authorization", "Bearer "+bc.token)
			}
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != 200 {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}

// FuzzAuthorizationHeader: whatever the Authorization and X-Forwarded-*
// headers hold, the answer is a clean 200/401/403/429 with a JSON body.
func FuzzAuthorizationHeader(f *testing.F) {
	h, keys := newHandler(f, nil)
	raw, _, err := keys.Create(context.Background(), apikey.CreateParams{Env: apikey.Dev})
	require.NoError(f, err)
	f.Add("Bearer "+raw, "1.2.3.4")
	f.Add("Bearer "+raw[:len(raw)-1], "")
	f.Add("bearer   sk_live_", "::1, 10.0.0.1")
	f.Add("Basic Zm9vOmJhcg==", "garbage")
	f.Fuzz(func(t *testing.T, auth, xff string) {
		req := httptest.NewRequest("GET", "/status", nil)
		req.Header.Set("Authorization", auth)
		req.Header.Set("X-Forwarded-For", xff)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		switch w.Code {
		case 200, 401, 403, 429:
		default:
			t.Fatalf("status %d for %q", w.Code, auth)
		}
		if w.Code != 200 && !json.Valid(w.Body.Bytes()) {
			t.Fatalf("body %q", w.Body)
		}
	})
}

// TestLimitHeadersPerFigure checks over HTTP that each request meets the
// figure of spec section 8 that is most restrictive for it (the figures
// themselves are exhausted one by one in package ratelimit).
func TestLimitHeadersPerFigure(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		ks := newKeyServer(t, db, keyServerOpts{})
		free, freeID := ks.create(t, api.CreateKeyRequest{Tier: "free"})
		pro, proID := ks.create(t, api.CreateKeyRequest{Tier: "pro"})
		ent, entID := ks.create(t, api.CreateKeyRequest{Tier: "enterprise", RateLimit: 5000})
		dev, devID := ks.create(t, api.CreateKeyRequest{Tier: "enterprise", Env: "dev"})
		tests := []struct {
			name, method, path, token string
			limit, remaining          string
		}{
			{"/health, public", "GET", "/health", "", "1000", "999"},
			{"/status, public", "GET", "/status", "", "500", "499"},
			{"/verify-eligibility, public: the public 10", "POST", "/verify-eligibility", "", "10", "9"},
			{"/validate-prescription, public", "POST", "/validate-prescription", "", "10", "8"},
			{"/verify-eligibility, pro key: 100 per key", "POST", "/verify-eligibility", pro, "100", "99"},
			{"/validate-prescription, pro key", "POST", "/validate-prescription", pro, "100", "99"},
			{"/health, free key", "GET", "/health", free, "1000", "999"},
			{"general, free tier 100", "GET", "/api/keys/" + freeID + "/usage", free, "100", "99"},
			{"general, pro: authenticated 1000", "GET", "/api/keys/" + proID + "/usage", pro, "1000", "997"},
			{"general, enterprise override", "GET", "/api/keys/" + entID + "/usage", ent, "5000", "4999"},
			{"general, sk_dev_ 1000", "GET", "/api/keys/" + devID + "/usage", dev, "1000", "999"},
		}
		for _, tt := range tests {
			var body any
			if tt.method == "POST" {
				body = map[string]any{}
			}
			r := ks.call(t, tt.method, tt.path, tt.token, body)
			assert.Equal(t, tt.limit, r.header.Get("X-RateLimit-Limit"), tt.name)
			assert.Equal(t, tt.remaining, r.header.Get("X-RateLimit-Remaining"), tt.name)
			reset, err := strconv.ParseInt(r.header.Get("X-RateLimit-Reset"), 10, 64)
			require.NoError(t, err, tt.name)
			assert.InDelta(t, ks.clock.Now().Unix(), reset, 60, tt.name)
		}
	})
}

// assertRetryAgrees checks that a 429 names one instant three ways: the
// body's "Try again in N seconds", Retry-After N, and X-RateLimit-Reset =
// the Date header + N.
func assertRetryAgrees(t *testing.T, h http.Header, detail string) {
	t.Helper()
	wait, err := strconv.ParseInt(h.Get("Retry-After"), 10, 64)
	require.NoError(t, err, "Retry-After %q", h.Get("Retry-After"))
	require.Positive(t, wait)
	unit := "seconds"
	if wait == 1 {
		unit = "second"
	}
	assert.Equal(t, fmt.Sprintf("Rate limit exceeded. Try again in %d %s.", wait, unit), detail)
	date, err := http.ParseTime(h.Get("Date"))
	require.NoError(t, err, "Date %q", h.Get("Date"))
	assert.Equal(t, strconv.FormatInt(date.Unix()+wait, 10), h.Get("X-RateLimit-Reset"), "Reset = Date + Retry-After")
}
