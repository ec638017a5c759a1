package server_test

import (
	"context"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/api"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/credential"
	"github.com/healthagents/healthagents/issuers"
	"github.com/healthagents/healthagents/server"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

// TestIssuersRoundTrip registers, lists, gets and retires a payer through
// the API, on each database, against the embedded chain's GovernedRegistry
// (whose owner's key the embedded Ledger holds).
func TestIssuersRoundTrip(t *testing.T) {
	t.Parallel()
	ledger, err := chain.NewSimulated(t.Context())
	require.NoError(t, err)
	t.Cleanup(func() { ledger.Close() })
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		ctx := t.Context()
		st, err := store.NewIssuerStore(db)
		require.NoError(t, err)
		reg, err := issuers.New(st, ledger)
		require.NoError(t, err)
		ks, err := store.NewKeyStore(db)
		require.NoError(t, err)
		keys, err := apikey.New(ks)
		require.NoError(t, err)
		t.Cleanup(func() { keys.Close(context.Background()) })
		kr, err := cipher.ParseKeyring(fernetKey(t))
		require.NoError(t, err)
		svc, err := healthagents.New(kr)
		require.NoError(t, err)
		h, err := server.New(server.Deps{Service: svc, Keys: keys, Issuers: reg})
		require.NoError(t, err)
		ts := httptest.NewServer(h)
		t.Cleanup(ts.Close)
		admin, _, err := keys.Create(ctx, apikey.CreateParams{Env: apikey.Dev, Scopes: []apikey.Scope{apikey.ScopeKeysAdmin}})
		require.NoError(t, err)
		orgAdmin, _, err := keys.Create(ctx, apikey.CreateParams{Env: apikey.Dev, Scopes: []apikey.Scope{apikey.ScopeKeysAdmin}, Organization: "hosp-a"})
		require.NoError(t, err)
		user, _, err := keys.Create(ctx, apikey.CreateParams{Env: apikey.Dev})
		require.NoError(t, err)

		k, err := credential.GenerateKey()
		require.NoError(t, err)
		pub := credential.PublicKeyHex(k)
		body := `{"public_key":"` + pub + `","name":"Acme Health"}`

		for name, tc := range map[string]struct {
			key, body string
			status    int
			detail    string
		}{
			"fail/no key":             {"", body, http.StatusUnauthorized, ""},
			"fail/not an admin":       {user, body, http.StatusForbidden, ""},
			"fail/organization admin": {orgAdmin, body, http.StatusForbidden, ""},
			"fail/bad key":            {admin, `{"public_key":"zz","name":"x"}`, http.StatusBadRequest, "field 'public_key'"},
			"fail/not on the curve":   {admin, `{"public_key":"` + strings.Repeat("ff", 32) + `","name":"x"}`, http.StatusBadRequest, "field 'public_key'"},
			"fail/no name":            {admin, `{"public_key":"` + pub + `"}`, http.StatusBadRequest, "name"},
			"fail/bad admin address":  {admin, `{"public_key":"` + pub + `","name":"x","admin_address":"0x12"}`, http.StatusBadRequest, "admin_address"},
		} {
			t.Run(name, func(t *testing.T) {
				status, got := callJSON(t, "POST", ts.URL+"/api/v1/issuers", tc.key, tc.body)
				assert.Equal(t, tc.status, status, got)
				assert.Contains(t, got, tc.detail)
			})
		}

		status, got := callJSON(t, "POST", ts.URL+"/api/v1/issuers", admin, body)
		require.Equal(t, http.StatusCreated, status, got)
		var iss api.Issuer
		require.NoError(t, json.Unmarshal([]byte(got), &iss))
		assert.Equal(t, pub, iss.IssuerID)
		assert.Equal(t, "active", iss.Status, "the embedded chain's owner key is held: sent")
		assert.NotEmpty(t, iss.TxHash)
		assert.Nil(t, iss.OwnerAction)
		kh, ok := new(big.Int).SetString(iss.KeyHash, 10)
		require.True(t, ok)
		active, err := ledger.Governed().IsIssuerActive(ctx, kh, nil)
		require.NoError(t, err)
		assert.True(t, active)
		name, found, err := reg.IssuerName(ctx, iss.KeyHash)
		require.NoError(t, err)
		assert.True(t, found)
		assert.Equal(t, "Acme Health", name)

		status, got = callJSON(t, "POST", ts.URL+"/api/v1/issuers", admin, body)
		assert.Equal(t, http.StatusOK, status, "registered before: %s", got)
		status, got = callJSON(t, "GET", ts.URL+"/api/v1/issuers", admin, "")
		require.Equal(t, http.StatusOK, status)
		var list api.IssuerList
		require.NoError(t, json.Unmarshal([]byte(got), &list))
		require.Len(t, list.Issuers, 1)
		// The SDK sees the same.
		c, err := client.New(ts.URL, client.WithAPIKey(admin), client.WithMaxAttempts(1))
		require.NoError(t, err)
		got1, err := c.GetIssuer(ctx, pub)
		require.NoError(t, err)
		assert.Equal(t, "Acme Health", got1.Name)
		all, err := client.All(c.ListIssuers(ctx))
		require.NoError(t, err)
		assert.Len(t, all, 1)
		page, err := c.ListIssuersPage(ctx, 1, 10)
		require.NoError(t, err)
		assert.Equal(t, client.Page[client.Issuer]{Items: []client.Issuer{}, Total: 1}, page, "past the end: an empty page, the total")
		status, _ = callJSON(t, "GET", ts.URL+"/api/v1/issuers/"+strings.Repeat("00", 32), admin, "")
		assert.Equal(t, http.StatusNotFound, status)

		status, got = callJSON(t, "DELETE", ts.URL+"/api/v1/issuers/"+pub, admin, "")
		require.Equal(t, http.StatusOK, status, got)
		require.NoError(t, json.Unmarshal([]byte(got), &iss))
		assert.Equal(t, "retired", iss.Status)
		require.NotNil(t, iss.RetiredAt)
		active, err = ledger.Governed().IsIssuerActive(ctx, kh, nil)
		require.NoError(t, err)
		assert.False(t, active)
		status, got = callJSON(t, "POST", ts.URL+"/api/v1/issuers", admin, body)
		assert.Equal(t, http.StatusConflict, status, got)
		assert.Contains(t, got, "retired")
	})
}

func callJSON(t *testing.T, method, url, key, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

func fernetKey(t *testing.T) string {
	t.Helper()
	k, err := cipher.GenerateKey()
	require.NoError(t, err)
	return k
}
