package client_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/ratelimit"
	"github.com/healthagents/healthagents/server"
	"github.com/healthagents/healthagents/store"
)

const adminToken = "admin-token-for-client-tests-0123456789"

// keysServer runs server.New with the real key service on a SQLite file and
// the real rate limiter.
func keysServer(t *testing.T) string {
	t.Helper()
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "keys.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	ks, err := store.NewKeyStore(db)
	require.NoError(t, err)
	keys, err := apikey.New(ks, apikey.WithAdminToken(adminToken))
	require.NoError(t, err)
	t.Cleanup(func() { _ = keys.Close(context.Background()) })
	lim, err := ratelimit.New()
	require.NoError(t, err)
	fk, err := cipher.GenerateKey()
	require.NoError(t, err)
	kr, err := cipher.ParseKeyring(fk)
	require.NoError(t, err)
	svc, err := healthagents.New(kr)
	require.NoError(t, err)
	h, err := server.New(server.Deps{Service: svc, Keys: keys, Limiter: lim})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestRoundTripKeys(t *testing.T) {
	t.Parallel()
	url := keysServer(t)
	ctx := t.Context()
	anon := newClient(t, url)

	_, err := anon.CreateKey(ctx, nil)
	require.True(t, client.IsUnauthorized(err), "%v", err)

	boot := anon.With(client.WithAPIKey(adminToken))
	adminKey, err := boot.CreateKey(ctx, &client.CreateKeyRequest{Name: "ops", Tier: "pro", Scopes: []string{"eligibility", "prescription", "federated", "webhooks", "patients", "keys:admin"}})
	require.NoError(t, err)
	assert.Contains(t, adminKey.Scopes, "keys:admin")
	assert.Equal(t, "pro", adminKey.Tier)
	admin := anon.With(client.WithAPIKey(adminKey.APIKey))

	k, err := admin.CreateKey(ctx, &client.CreateKeyRequest{Organization: "clinic-a"})
	require.NoError(t, err)
	assert.Equal(t, "clinic-a", k.Organization)
	user := anon.With(client.WithAPIKey(k.APIKey))

	_, err = user.CreateKey(ctx, nil)
	require.True(t, client.IsForbidden(err), "%v", err)
	assert.Equal(t, "Forbidden: Insufficient permissions", err.(*client.Error).Detail)

	_, err = user.Status(ctx)
	require.NoError(t, err)
	u, err := user.KeyUsage(ctx, k.KeyID, time.Hour)
	require.NoError(t, err)
	assert.Equal(t, k.KeyID, u.KeyID)
	assert.EqualValues(t, 3600, u.WindowSeconds)
	assert.Positive(t, u.Requests)
	_, err = admin.KeyUsage(ctx, "ZZZZZZZZZZ", 0)
	require.True(t, client.IsNotFound(err), "%v", err)

	wl, err := user.WhitelistKey(ctx, k.KeyID, []string{"203.0.113.7", "127.0.0.0/8"})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"203.0.113.7", "127.0.0.0/8"}, wl.IPs)
	_, err = admin.WhitelistKey(ctx, k.KeyID, []string{"not-an-ip"})
	require.True(t, client.IsInvalid(err), "%v", err)
	_, err = admin.WhitelistKey(ctx, k.KeyID, []string{"10.0.0.0/8"})
	require.NoError(t, err)
	_, err = user.Status(ctx)
	require.True(t, client.IsForbidden(err), "outside the allow-list: %v", err)
	wl, err = admin.WhitelistKey(ctx, k.KeyID, nil)
	require.NoError(t, err)
	assert.Empty(t, wl.IPs)

	rot, err := user.RotateKey(ctx)
	require.NoError(t, err)
	assert.Equal(t, k.KeyID, rot.Replaces)
	assert.Equal(t, 24, rot.OldKeyValidHours)
	_, err = user.RotateKey(ctx)
	require.True(t, client.IsConflict(err), "rotated once: %v", err)

	// 12 keys in all now: walk them two pages at a time and all at once.
	for range 9 {
		_, err := admin.CreateKey(ctx, nil)
		require.NoError(t, err)
	}
	page, err := admin.ListKeysPage(ctx, 10, 10)
	require.NoError(t, err)
	assert.Equal(t, 12, page.Total)
	assert.Len(t, page.Items, 2)
	var ids []string
	for ki, err := range admin.ListKeys(ctx) {
		require.NoError(t, err)
		ids = append(ids, ki.KeyID)
	}
	assert.Len(t, ids, 12)
	assert.Equal(t, adminKey.KeyID, ids[0], "oldest first")
	assert.Contains(t, ids, rot.KeyID)
	_, err = admin.ListKeysPage(ctx, 0, 101)
	require.True(t, client.IsInvalid(err), "%v", err)
	for _, err := range user.ListKeys(ctx) {
		require.True(t, client.IsForbidden(err), "%v", err)
	}

	rev, err := admin.RevokeKey(ctx, rot.KeyID)
	require.NoError(t, err)
	assert.True(t, rev.Revoked)
	_, err = anon.With(client.WithAPIKey(rot.APIKey)).Status(ctx)
	require.True(t, client.IsUnauthorized(err), "revoked: %v", err)
	assert.Equal(t, "Unauthorized: Invalid API key", err.(*client.Error).Detail)
}

// TestRoundTripRateLimited drives the real limiter to a 429: the SDK does
// not wait out the server's Retry-After beyond its deadline and reports the
// headers.
func TestRoundTripRateLimited(t *testing.T) {
	t.Parallel()
	c := newClient(t, keysServer(t), client.WithTimeout(5*time.Second))
	// The public budget (10 a minute per address) runs out on the 11th
	// call; until then the server answers 400 for the stub envelope.
	var err error
	for range 20 {
		if _, err = c.VerifyEligibility(t.Context(), testEnv, "PROC001"); !client.IsInvalid(err) {
			break
		}
	}
	require.True(t, client.IsRateLimited(err), "%v", err)
	var ce *client.Error
	require.ErrorAs(t, err, &ce)
	require.NotNil(t, ce.RateLimit)
	assert.Equal(t, fmt.Sprintf("Rate limit exceeded. Try again in %d seconds.", int(ce.RateLimit.RetryAfter.Seconds())), ce.Detail)
	assert.Equal(t, 0, ce.RateLimit.Remaining)
	assert.Positive(t, ce.RateLimit.Limit)
	assert.Positive(t, ce.RateLimit.RetryAfter)
	assert.True(t, ce.RateLimit.Reset.After(time.Now().Add(-time.Second)))
}
