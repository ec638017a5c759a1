package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/iden3/go-iden3-crypto/babyjub"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/credential"
	"github.com/healthagents/healthagents/internal/testcache/zkkeys"
	"github.com/healthagents/healthagents/record"
)

// TestPayerRevokesOverHTTP is the whole story on the default deployment
// (embedded chain, served read-only over JSON-RPC): a payer registered with
// an admin address signs a credential for the sample record; the root
// family's answers carry blockchain_tx and statement, and verify-decision
// passes on each answer file as it came. The payer's admin then revokes the
// credential's nonce (above 2^53: no float rounding anywhere) over HTTP
// through a provider's key; the next decision on that credential is refused
// with the documented 422 on both families (UNTRUSTED_CREDENTIAL on v1),
// and verify-decision on the earlier decision still passes, its revocation
// line saying the nonce was revoked later.
func TestPayerRevokesOverHTTP(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	a, err := app.OpenWithOutput(ctx, app.Config{DataDir: zkkeys.DataDir(t), ProofTimeout: testProofTimeout, ChainRPCListen: "127.0.0.1:0"}, slog.New(slog.DiscardHandler), io.Discard)
	require.NoError(t, err)
	defer a.Close()
	<-a.ZK.Warm()
	ts := httptest.NewServer(a.Handler)
	defer ts.Close()
	rpc := "http://" + a.ChainRPCAddr
	owner, _, err := a.Keys.Create(ctx, apikey.CreateParams{Env: apikey.Dev, Scopes: []apikey.Scope{apikey.ScopeKeysAdmin}})
	require.NoError(t, err)
	provider, _, err := a.Keys.Create(ctx, apikey.CreateParams{Env: apikey.Dev})
	require.NoError(t, err)
	ownerSDK, err := client.New(ts.URL, client.WithAPIKey(owner), client.WithMaxAttempts(1))
	require.NoError(t, err)
	providerSDK, err := client.New(ts.URL, client.WithAPIKey(provider), client.WithMaxAttempts(1))
	require.NoError(t, err)

	// The payer: a Baby Jubjub key for credentials, an Ethereum admin key.
	payer, err := credential.GenerateKey()
	require.NoError(t, err)
	adminKey, err := crypto.GenerateKey()
	require.NoError(t, err)
	iss, err := ownerSDK.RegisterIssuer(ctx, client.IssuerRequest{PublicKey: credential.PublicKeyHex(payer), Name: "Acme Health",
		Admin: crypto.PubkeyToAddress(adminKey.PublicKey).Hex()})
	require.NoError(t, err)
	require.Equal(t, "active", iss.Status)

	const nonce = uint64(1)<<53 + 1 // a double would read 2^53
	env := credentialRecord(t, a.Keyring, payer, nonce)
	registry := a.Ledger.Registry().Hex()

	// Root-family answers carry the decision's record; verify-decision
	// takes each file as the service wrote it.
	elig := rootDecision(t, ts.URL+"/verify-eligibility", map[string]any{"patient_data": env, "procedure_code": "PROC001"}, http.StatusOK)
	rx := rootDecision(t, ts.URL+"/validate-prescription", map[string]any{"patient_data": env, "drug_code": "6809"}, http.StatusOK)
	for name, d := range map[string]rootAnswer{"eligibility": elig, "prescription": rx} {
		assert.Equal(t, "Acme Health", d.Issuer, name)
		require.NotNil(t, d.Statement, name)
		assert.Equal(t, nonce, d.Statement.Opening.RevocationNonce, name)
		out, err := runVerify(t, "--rpc", rpc, "--registry", registry, "--tx", d.BlockchainTx, "--statement", d.file)
		require.NoError(t, err, "%s: %s", name, out)
		for _, check := range []string{"receipt", "registry", "event", "inputs", "verifier", "proof", "issuer", "statement", "revocation"} {
			assert.Contains(t, out, "ok   "+check, "%s: %s", name, out)
		}
		assert.Contains(t, out, "is not revoked", name)
	}

	// The payer's admin revokes the nonce, through a provider's key, with
	// the chain id and registry a payer reads from GET /status.
	st, err := providerSDK.Status(ctx)
	require.NoError(t, err)
	chainID, ok := new(big.Int).SetString(st.Blockchain.ChainID, 10)
	require.True(t, ok)
	kh, ok := new(big.Int).SetString(iss.KeyHash, 10)
	require.True(t, ok)
	sig, err := chain.SignRevocation(chain.RevocationTypedData(chainID, common.HexToAddress(st.Blockchain.Registry), kh, nonce), adminKey)
	require.NoError(t, err)
	rev, err := providerSDK.RevokeCredential(ctx, iss.IssuerID, client.RevocationRequest{Nonce: client.Nonce(nonce), AdminSignature: sig})
	require.NoError(t, err)
	assert.Equal(t, "revoked", rev.Status)
	assert.NotEmpty(t, rev.TxHash)
	assert.Equal(t, client.Nonce(nonce), rev.Nonce)

	// The next decisions on that credential: refused, one status.
	refused := rootDecision(t, ts.URL+"/verify-eligibility", map[string]any{"patient_data": env, "procedure_code": "PROC001"}, http.StatusUnprocessableEntity)
	assert.Contains(t, refused.Detail, "Eligibility check failed: Untrusted coverage credential: the payer revoked this coverage credential")
	refused = rootDecision(t, ts.URL+"/validate-prescription", map[string]any{"patient_data": env, "drug_code": "6809"}, http.StatusUnprocessableEntity)
	assert.Contains(t, refused.Detail, "Untrusted coverage credential")
	require.NoError(t, providerSDK.PutPatient(ctx, env))
	_, err = providerSDK.VerifyEligibilityV1(ctx, healthagents.V1EligibilityRequest{PatientID: env.PatientID, MemberID: "W123456789", ProcedureCode: "PROC001", ProviderNPI: "1234567893"})
	require.Error(t, err)
	var ce *client.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, http.StatusUnprocessableEntity, ce.StatusCode)
	assert.Equal(t, client.V1UntrustedCredential, ce.V1Code, ce.Detail)

	// The earlier decision stands: revoked after its block.
	out, err := runVerify(t, "--rpc", rpc, "--registry", registry, "--tx", elig.BlockchainTx, "--statement", elig.file)
	require.NoError(t, err, out)
	assert.Contains(t, out, "ok   revocation", out)
	assert.Contains(t, out, "revoked later", out)
}

// rootAnswer is a root-family answer as decoded here, and the file holding
// it as the service wrote it.
type rootAnswer struct {
	healthagents.DecisionRecord
	Detail string `json:"detail"`
	file   string
}

// rootDecision posts body to url anonymously, requires status, and keeps
// the answer's bytes in a file.
func rootDecision(t *testing.T, url string, body any, status int) rootAnswer {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(b))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, status, resp.StatusCode, "%s", raw)
	var out rootAnswer
	require.NoError(t, json.Unmarshal(raw, &out))
	if status == http.StatusOK {
		require.NotEmpty(t, out.BlockchainTx, "%s", raw)
	}
	out.file = filepath.Join(t.TempDir(), "answer.json")
	require.NoError(t, os.WriteFile(out.file, raw, 0o600))
	return out
}

// credentialRecord seals testdata/record.json with its coverage signed by
// payer under nonce.
func credentialRecord(t *testing.T, kr *cipher.Keyring, payer babyjub.PrivateKey, nonce uint64) *cipher.Envelope {
	t.Helper()
	b, err := os.ReadFile("../../testdata/record.json")
	require.NoError(t, err)
	r, err := record.Parse(b)
	require.NoError(t, err)
	c := r.Coverage
	salt, err := credential.RandomSalt()
	require.NoError(t, err)
	c.Credential, err = credential.Sign(payer, credential.Terms{MemberID: c.MemberID, Salt: salt, PayerID: c.PayerID, PlanID: c.PlanID,
		Status: c.Status, Start: c.Start, End: c.End, Deductible: c.Deductible, DeductibleMet: c.DeductibleMet, Copay: c.Copay,
		Expires: c.End, Nonce: nonce, Excluded: c.ExcludedProcedures, Overrides: c.CoverageOverrides})
	require.NoError(t, err)
	plain, err := r.Marshal()
	require.NoError(t, err)
	env, err := cipher.Seal(r.PatientID, plain, kr)
	require.NoError(t, err)
	return &env
}
