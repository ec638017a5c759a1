package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
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

// TestRevocationsOverHTTP: POST /api/v1/issuers/{issuer_id}/revocations on
// the embedded chain (the service holds the registry owner's key): a
// provider's key carrying the payer's admin signature revokes, the owner
// (keys:admin, no organization) revokes without one, anyone else is 403;
// the nonce reads from a JSON number or a decimal string up to 2^64-1
// exactly, and anything else is a 400 naming it. The SDK does the same.
func TestRevocationsOverHTTP(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ledger, err := chain.NewSimulated(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { ledger.Close() })
	db := storetest.Open(t, storetest.Backends(t)[0])
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
	owner, _, err := keys.Create(ctx, apikey.CreateParams{Env: apikey.Dev, Scopes: []apikey.Scope{apikey.ScopeKeysAdmin}})
	require.NoError(t, err)
	orgAdmin, _, err := keys.Create(ctx, apikey.CreateParams{Env: apikey.Dev, Scopes: []apikey.Scope{apikey.ScopeKeysAdmin}, Organization: "hosp-a"})
	require.NoError(t, err)
	provider, _, err := keys.Create(ctx, apikey.CreateParams{Env: apikey.Dev})
	require.NoError(t, err)

	adminKey, err := crypto.GenerateKey()
	require.NoError(t, err)
	strangerKey, err := crypto.GenerateKey()
	require.NoError(t, err)
	pk, err := credential.GenerateKey()
	require.NoError(t, err)
	status, got := callJSON(t, "POST", ts.URL+"/api/v1/issuers", owner,
		`{"public_key":"`+credential.PublicKeyHex(pk)+`","name":"Acme Health","admin_address":"`+crypto.PubkeyToAddress(adminKey.PublicKey).Hex()+`"}`)
	require.Equal(t, http.StatusCreated, status, got)
	var iss api.Issuer
	require.NoError(t, json.Unmarshal([]byte(got), &iss))
	kh, _ := new(big.Int).SetString(iss.KeyHash, 10)
	signAs := func(t *testing.T, who string, nonce uint64) string {
		k := adminKey
		if who == "stranger" {
			k = strangerKey
		}
		sig, err := chain.SignRevocation(chain.RevocationTypedData(ledger.ChainID(), ledger.Registry(), kh, nonce), k)
		require.NoError(t, err)
		return sig
	}
	url := ts.URL + "/api/v1/issuers/" + iss.IssuerID + "/revocations"
	const max = "18446744073709551615"

	for name, tc := range map[string]struct {
		url, key, body string
		status         int
		detail         string
	}{
		"fail/no key":                  {url, "", `{"nonce":7}`, 401, "Unauthorized"},
		"fail/provider, no signature":  {url, provider, `{"nonce":7}`, 403, "Forbidden: Insufficient permissions"},
		"fail/organization admin":      {url, orgAdmin, `{"nonce":7}`, 403, "Forbidden"},
		"fail/another signer":          {url, provider, `{"nonce":7,"admin_signature":"` + signAs(t, "stranger", 7) + `"}`, 403, "admin_address"},
		"fail/another nonce signed":    {url, provider, `{"nonce":7,"admin_signature":"` + signAs(t, "admin", 8) + `"}`, 403, "admin_address"},
		"fail/signature form":          {url, provider, `{"nonce":7,"admin_signature":"0x1234"}`, 400, "field 'admin_signature'"},
		"fail/no nonce":                {url, owner, `{}`, 400, "missing field 'nonce'"},
		"fail/null nonce":              {url, owner, `{"nonce":null}`, 400, "missing field 'nonce'"},
		"fail/negative":                {url, owner, `{"nonce":-1}`, 400, "field 'nonce' must be an integer from 0 to " + max},
		"fail/fraction":                {url, owner, `{"nonce":7.5}`, 400, "field 'nonce'"},
		"fail/float form of 7":         {url, owner, `{"nonce":7.0}`, 400, "field 'nonce'"},
		"fail/exponent":                {url, owner, `{"nonce":1e3}`, 400, "field 'nonce'"},
		"fail/2^64 number":             {url, owner, `{"nonce":18446744073709551616}`, 400, "field 'nonce'"},
		"fail/2^64 string":             {url, owner, `{"nonce":"18446744073709551616"}`, 400, "field 'nonce'"},
		"fail/not digits":              {url, owner, `{"nonce":"0x07"}`, 400, "field 'nonce'"},
		"fail/spaces":                  {url, owner, `{"nonce":" 7"}`, 400, "field 'nonce'"},
		"fail/empty string":            {url, owner, `{"nonce":""}`, 400, "field 'nonce'"},
		"fail/boolean":                 {url, owner, `{"nonce":true}`, 400, "field 'nonce'"},
		"fail/unknown payer":           {ts.URL + "/api/v1/issuers/" + strings.Repeat("00", 32) + "/revocations", owner, `{"nonce":7}`, 404, "Issuer not found"},
		"fail/unknown payer, provider": {ts.URL + "/api/v1/issuers/" + strings.Repeat("00", 32) + "/revocations", provider, `{"nonce":7,"admin_signature":"` + signAs(t, "admin", 7) + `"}`, 404, "Issuer not found"},
	} {
		t.Run(name, func(t *testing.T) {
			status, got := callJSON(t, "POST", tc.url, tc.key, tc.body)
			assert.Equal(t, tc.status, status, got)
			assert.Contains(t, got, tc.detail)
		})
	}
	for _, n := range []uint64{7, 8, ^uint64(0)} {
		revoked, err := ledger.Governed().IsRevoked(ctx, kh, n)
		require.NoError(t, err)
		require.False(t, revoked, "no refused request revoked anything (%d)", n)
	}

	// The payer's admin, through a provider's key: 2^64-1 as a JSON number.
	status, got = callJSON(t, "POST", url, provider, `{"nonce":`+max+`,"admin_signature":"`+signAs(t, "admin", ^uint64(0))+`"}`)
	require.Equal(t, http.StatusCreated, status, got)
	var rev api.Revocation
	require.NoError(t, json.Unmarshal([]byte(got), &rev))
	assert.Equal(t, "revoked", rev.Status)
	assert.Contains(t, got, `"nonce":"`+max+`"`, "answered as a string")
	assert.NotEmpty(t, rev.TxHash)
	revoked, err := ledger.Governed().IsRevoked(ctx, kh, ^uint64(0))
	require.NoError(t, err)
	assert.True(t, revoked)
	revoked, err = ledger.Governed().IsRevoked(ctx, kh, ^uint64(0)-1)
	require.NoError(t, err)
	assert.False(t, revoked, "no rounding: 2^64-2 is another nonce")
	// The owner, as a decimal string: revoked before, 200 with its block.
	status, got = callJSON(t, "POST", url, owner, `{"nonce":"`+max+`"}`)
	require.Equal(t, http.StatusOK, status, got)
	var before api.Revocation
	require.NoError(t, json.Unmarshal([]byte(got), &before))
	assert.Equal(t, rev.RevokedInBlock, before.RevokedInBlock)

	// The SDK.
	c, err := client.New(ts.URL, client.WithAPIKey(provider), client.WithMaxAttempts(1))
	require.NoError(t, err)
	out, err := c.RevokeCredential(ctx, iss.IssuerID, client.RevocationRequest{Nonce: 5, AdminSignature: signAs(t, "admin", 5)})
	require.NoError(t, err)
	assert.Equal(t, "revoked", out.Status)
	assert.Equal(t, client.Nonce(5), out.Nonce)
	assert.Equal(t, iss.KeyHash, out.KeyHash)
	revoked, err = ledger.Governed().IsRevoked(ctx, kh, 5)
	require.NoError(t, err)
	assert.True(t, revoked)
	_, err = c.RevokeCredential(ctx, iss.IssuerID, client.RevocationRequest{Nonce: 6})
	require.Error(t, err)
	assert.True(t, client.IsForbidden(err), "%v", err)
	_, err = c.RevokeCredential(ctx, iss.IssuerID, client.RevocationRequest{Nonce: 6, AdminSignature: signAs(t, "stranger", 6)})
	assert.True(t, client.IsForbidden(err), "%v", err)
	assert.Contains(t, fmt.Sprint(err), "admin_address")
}
