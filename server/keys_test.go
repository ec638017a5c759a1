package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/api"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

func TestKeyLifecycleOverHTTP(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		// No ADMIN_TOKEN: the first key comes from the one-time token.
		clk := &testClock{now: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
		ks := newKeyServer(t, db, keyServerOpts{clock: clk, keyOpts: []apikey.Option{apikey.WithAdminToken("")}})
		boot, err := ks.keys.IssueBootstrapToken(t.Context())
		require.NoError(t, err)
		require.NotEmpty(t, boot)

		r := ks.call(t, "POST", "/auth/keys", "", nil)
		assert.Equal(t, 401, r.status, "creation needs a bearer")
		r = ks.call(t, "POST", "/auth/keys", boot, api.CreateKeyRequest{Name: "ops", Tier: "pro"})
		require.Equal(t, 200, r.status, r.body)
		admin, adminID := r.body["api_key"].(string), r.body["key_id"].(string)
		assert.Contains(t, r.body["scopes"], "keys:admin", "the bootstrap key administers the rest")
		assert.Equal(t, "2026-11-21T10:00:00Z", r.body["created_at"])
		r = ks.call(t, "POST", "/auth/keys", boot, nil)
		assert.Equal(t, 401, r.status, "the bootstrap token works once")

		// An admin key creates keys; a plain key cannot.
		r = ks.call(t, "POST", "/auth/keys", admin, api.CreateKeyRequest{Organization: "clinic-a"})
		require.Equal(t, 200, r.status, r.body)
		key, keyID := r.body["api_key"].(string), r.body["key_id"].(string)
		assert.True(t, strings.HasPrefix(key, "sk_dev_"+keyID+"_"))
		assert.NotContains(t, r.body["scopes"], "keys:admin")
		assert.Equal(t, 403, ks.call(t, "POST", "/auth/keys", key, nil).status)
		assert.Equal(t, 400, ks.call(t, "POST", "/auth/keys", admin, api.CreateKeyRequest{Scopes: []string{"bogus"}}).status, "unknown scope")

		// Usage: requests, errors and latency percentiles.
		for range 3 {
			require.Equal(t, 200, ks.call(t, "GET", "/status", key, nil).status)
		}
		require.Equal(t, 400, ks.call(t, "POST", "/verify-eligibility", key, map[string]any{}).status)
		// (the refused POST /auth/keys above counts too: 5 requests, 2 errors)
		r = ks.call(t, "GET", "/api/keys/"+keyID+"/usage?window=1h", key, nil)
		require.Equal(t, 200, r.status, r.body)
		assert.EqualValues(t, 5, r.body["requests"])
		assert.EqualValues(t, 2, r.body["errors"])
		assert.EqualValues(t, 3600, r.body["window_seconds"])
		lat := r.body["latency_ms"].(map[string]any)
		assert.Positive(t, lat["p99"].(float64))
		assert.GreaterOrEqual(t, lat["p99"].(float64), lat["p50"].(float64))
		assert.Equal(t, 400, ks.call(t, "GET", "/api/keys/"+keyID+"/usage?window=never", key, nil).status)
		assert.Equal(t, 404, ks.call(t, "GET", "/api/keys/ZZZZZZZZZZ/usage", admin, nil).status)
		assert.Equal(t, 404, ks.call(t, "GET", "/api/keys/not-an-id/usage", admin, nil).status)

		// Whitelist by address and by CIDR (the test client is 127.0.0.1).
		r = ks.call(t, "POST", "/api/keys/"+keyID+"/whitelist", key, map[string]any{"ips": []string{"203.0.113.7", "127.0.0.0/8"}})
		require.Equal(t, 200, r.status, r.body)
		assert.Equal(t, []any{"127.0.0.0/8", "203.0.113.7"}, r.body["ips"])
		assert.Equal(t, 200, ks.call(t, "GET", "/status", key, nil).status, "inside the CIDR")
		r = ks.call(t, "POST", "/api/keys/"+keyID+"/whitelist", key, map[string]any{"ips": []string{"127.0.0.1"}})
		require.Equal(t, 200, r.status)
		assert.Equal(t, 200, ks.call(t, "GET", "/status", key, nil).status, "the exact address")
		r = ks.call(t, "POST", "/api/keys/"+keyID+"/whitelist", admin, map[string]any{"ips": []string{"10.0.0.0/8"}})
		require.Equal(t, 200, r.status)
		r = ks.call(t, "GET", "/status", key, nil)
		assert.Equal(t, 403, r.status, "outside the list")
		assert.Equal(t, "Forbidden: Insufficient permissions", r.detail())
		assert.Equal(t, 400, ks.call(t, "POST", "/api/keys/"+keyID+"/whitelist", admin, map[string]any{"ips": []string{"not-an-ip"}}).status)
		assert.Equal(t, 400, ks.call(t, "POST", "/api/keys/"+keyID+"/whitelist", admin, map[string]any{}).status, "ips is required")
		require.Equal(t, 200, ks.call(t, "POST", "/api/keys/"+keyID+"/whitelist", admin, map[string]any{"ips": []string{}}).status)

		// Rotation: the old key works for 24 hours, then 401.
		r = ks.call(t, "POST", "/api/keys/rotate", key, nil)
		require.Equal(t, 200, r.status, r.body)
		newKey, newID := r.body["api_key"].(string), r.body["key_id"].(string)
		assert.Equal(t, keyID, r.body["replaces"])
		assert.EqualValues(t, 24, r.body["old_key_valid_hours"])
		assert.Equal(t, "clinic-a", r.body["organization"])
		assert.Equal(t, 409, ks.call(t, "POST", "/api/keys/rotate", key, nil).status, "rotated once")
		clk.Add(24*time.Hour - time.Second)
		assert.Equal(t, 200, ks.call(t, "GET", "/status", key, nil).status, "within the grace")
		clk.Add(time.Second)
		assert.Equal(t, 401, ks.call(t, "GET", "/status", key, nil).status, "after 24 hours")
		assert.Equal(t, 200, ks.call(t, "GET", "/status", newKey, nil).status)

		// Listing paginates: default 10, max 100, out of range 400.
		for range 11 {
			require.Equal(t, 200, ks.call(t, "POST", "/auth/keys", admin, nil).status)
		}
		r = ks.call(t, "GET", "/api/keys", admin, nil)
		require.Equal(t, 200, r.status, r.body)
		assert.EqualValues(t, 14, r.body["total"])
		assert.Len(t, r.body["keys"], 10)
		assert.EqualValues(t, 10, r.body["limit"])
		r = ks.call(t, "GET", "/api/keys?offset=10&limit=100", admin, nil)
		require.Equal(t, 200, r.status)
		assert.Len(t, r.body["keys"], 4)
		for _, q := range []string{"limit=0", "limit=101", "offset=-1", "limit=ten", "offset="} {
			r := ks.call(t, "GET", "/api/keys?"+q, admin, nil)
			assert.Equal(t, 400, r.status, q)
		}
		first := ks.call(t, "GET", "/api/keys?limit=1", admin, nil).body["keys"].([]any)[0].(map[string]any)
		assert.Equal(t, "2026-11-21T10:00:00Z", first["created_at"], "oldest first")
		assert.Contains(t, []any{adminID, keyID, newID}, first["key_id"])
		assert.NotContains(t, first, "api_key", "a listing never shows secrets")

		// Revocation is immediate.
		r = ks.call(t, "DELETE", "/api/keys/"+newID, admin, nil)
		require.Equal(t, 200, r.status, r.body)
		assert.Equal(t, true, r.body["revoked"])
		assert.Equal(t, 401, ks.call(t, "GET", "/status", newKey, nil).status)

		// Keys survive a restart: a new server on the reopened database.
		again := newKeyServer(t, storetest.Open(t, b), keyServerOpts{clock: clk, keyOpts: []apikey.Option{apikey.WithAdminToken("")}})
		assert.Equal(t, 200, again.call(t, "GET", "/api/keys?limit=1", admin, nil).status)
		assert.Equal(t, 401, again.call(t, "GET", "/status", newKey, nil).status, "still revoked")
		boot2, err := again.keys.IssueBootstrapToken(t.Context())
		require.NoError(t, err)
		assert.Empty(t, boot2, "no bootstrap token once keys exist")
	})
}

func TestOrganizationAdminsStayInTheirOrganization(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		ks := newKeyServer(t, db, keyServerOpts{})
		orgAdmin, _ := ks.create(t, api.CreateKeyRequest{Organization: "a", Scopes: []string{"keys:admin", "eligibility"}})
		_, otherID := ks.create(t, api.CreateKeyRequest{Organization: "b"})
		_, sameID := ks.create(t, api.CreateKeyRequest{Organization: "a"})

		assert.Equal(t, 403, ks.call(t, "DELETE", "/api/keys/"+otherID, orgAdmin, nil).status)
		assert.Equal(t, 200, ks.call(t, "GET", "/api/keys/"+sameID+"/usage", orgAdmin, nil).status)
		r := ks.call(t, "GET", "/api/keys", orgAdmin, nil)
		require.Equal(t, 200, r.status)
		assert.EqualValues(t, 2, r.body["total"], "only organization a")
		for _, req := range []api.CreateKeyRequest{
			{Organization: "b"},
			{Scopes: []string{"prescription"}}, // a scope it lacks
			{RateLimit: 5000},
			{Tier: "enterprise"},
		} {
			assert.Equal(t, http.StatusForbidden, ks.call(t, "POST", "/auth/keys", orgAdmin, req).status, "%+v", req)
		}
		r = ks.call(t, "POST", "/auth/keys", orgAdmin, api.CreateKeyRequest{Scopes: []string{"eligibility"}})
		require.Equal(t, 200, r.status, r.body)
		assert.Equal(t, "a", r.body["organization"])
	})
}

// TestKeyCreationRefusals: a key that would be born expired, or whose name
// or organization holds control characters, is refused with 400 and a
// detail naming the field; nothing is created.
func TestKeyCreationRefusals(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		clk := &testClock{now: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
		ks := newKeyServer(t, db, keyServerOpts{clock: clk, keyOpts: []apikey.Option{apikey.WithAdminToken("")}})
		boot, err := ks.keys.IssueBootstrapToken(t.Context())
		require.NoError(t, err)
		r := ks.call(t, "POST", "/auth/keys", boot, api.CreateKeyRequest{Name: "ops"})
		require.Equal(t, 200, r.status, r.body)
		admin := r.body["api_key"].(string)
		_, before, err := ks.keys.List(t.Context(), apikey.ListOptions{Limit: 100})
		require.NoError(t, err)

		past, now, later := clk.now.Add(-time.Minute), clk.now, clk.now.Add(time.Hour)
		for _, tc := range []struct {
			req    api.CreateKeyRequest
			detail string
		}{
			{api.CreateKeyRequest{ExpiresAt: &past}, "Validation error: expires_at is in the past"},
			{api.CreateKeyRequest{ExpiresAt: &now}, "Validation error: expires_at is in the past"},
			{api.CreateKeyRequest{Name: "ops\nINFO forged log line"}, "Validation error: name contains control characters"},
			{api.CreateKeyRequest{Name: "bell\x07"}, "Validation error: name contains control characters"},
			{api.CreateKeyRequest{Name: "c1\u0085"}, "Validation error: name contains control characters"},
			{api.CreateKeyRequest{Organization: "org\x1b[31m"}, "Validation error: organization contains control characters"},
		} {
			r := ks.call(t, "POST", "/auth/keys", admin, tc.req)
			assert.Equal(t, 400, r.status, "%+v", tc.req)
			assert.Equal(t, tc.detail, r.detail())
		}
		_, after, err := ks.keys.List(t.Context(), apikey.ListOptions{Limit: 100})
		require.NoError(t, err)
		assert.Equal(t, before, after, "nothing created")
		r = ks.call(t, "POST", "/auth/keys", admin, api.CreateKeyRequest{Name: "Clínica São João", ExpiresAt: &later})
		assert.Equal(t, 200, r.status, "a future expiry and a non-ASCII name are fine: %v", r.body)
	})
}
