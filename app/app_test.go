package app_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/attest"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/internal/testcache/zkkeys"
	"github.com/healthagents/healthagents/record"
)

var (
	sharedOnce sync.Once
	sharedApp  *app.App
	sharedErr  error
	sharedDir  string
)

// shared opens one whole service for the package's tests, on the Groth16
// keys of the test cache (internal/testcache/zkkeys).
func shared(t *testing.T) *app.App {
	t.Helper()
	sharedOnce.Do(func() {
		sharedDir, sharedErr = os.MkdirTemp("", "healthagents-app-test")
		if sharedErr != nil {
			return
		}
		zkkeys.Into(t, filepath.Join(sharedDir, "zkp"))
		// Queued heavy requests wait up to a minute rather than 5 s: the
		// package's parallel tests share this service, and on a busy
		// machine the default would shed them with 503 (the shedding tests
		// open services of their own).
		sharedApp, sharedErr = app.Open(t.Context(), app.Config{DataDir: sharedDir, AdmissionWait: time.Minute}, slog.New(slog.DiscardHandler))
	})
	require.NoError(t, sharedErr)
	return sharedApp
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedApp != nil {
		sharedApp.Close()
	}
	if sharedDir != "" {
		os.RemoveAll(sharedDir)
	}
	os.Exit(code)
}

func sealed(t *testing.T, a *app.App, mutate func(*record.Record)) *cipher.Envelope {
	t.Helper()
	b, err := os.ReadFile("../testdata/record.json")
	require.NoError(t, err)
	r, err := record.Parse(b)
	require.NoError(t, err)
	if mutate != nil {
		mutate(r)
	}
	plain, err := r.Marshal()
	require.NoError(t, err)
	env, err := cipher.Seal(r.PatientID, plain, a.Keyring)
	require.NoError(t, err)
	return &env
}

func post(t *testing.T, url string, body any) (int, map[string]any) {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	require.NoError(t, json.Unmarshal(raw, &out), string(raw))
	return resp.StatusCode, out
}

// TestEndToEndProofVerifiedOnChain drives the whole stack over HTTP: every
// decision is proven with Groth16 and verified by the verifier contract in a
// mined transaction before zk_proof_verified is true.
func TestEndToEndProofVerifiedOnChain(t *testing.T) {
	a := shared(t)
	ts := httptest.NewServer(a.Handler)
	defer ts.Close()

	env := sealed(t, a, nil)
	status, body := post(t, ts.URL+"/verify-eligibility", map[string]any{"patient_data": env, "procedure_code": "70551"})
	require.Equal(t, 200, status, "%v", body)
	assert.Equal(t, true, body["eligible"])
	assert.Equal(t, float64(80), body["coverage_pct"])
	assert.Equal(t, true, body["zk_proof_verified"])

	// Ineligible decisions are proven too: the proof says "not eligible".
	status, body = post(t, ts.URL+"/verify-eligibility", map[string]any{"patient_data": env, "procedure_code": "PROC005"})
	require.Equal(t, 200, status, "%v", body)
	assert.Equal(t, false, body["eligible"])
	assert.Equal(t, true, body["zk_proof_verified"])

	status, body = post(t, ts.URL+"/validate-prescription", map[string]any{"patient_data": sealed(t, a, func(r *record.Record) { r.Medications = nil }), "drug_code": "6809"})
	require.Equal(t, 200, status, "%v", body)
	assert.Equal(t, true, body["valid"])
	assert.Equal(t, true, body["zk_proof_verified"])

	status, body = getJSON(t, ts.URL+"/status")
	require.Equal(t, 200, status)
	assert.Equal(t, map[string]any{"endpoint": "embedded", "network": "simulated",
		"registry": a.Ledger.Registry().Hex(), "chain_id": "1337", "anchor": "each"}, body["blockchain"],
		"the registry a third party pins; a transaction per decision on the embedded chain by default")
	assert.Equal(t, "development", body["zk_setup"], "no ZK_KEYS_DIR: single-party development keys")
	status, body = getJSON(t, ts.URL+"/health")
	require.Equal(t, 200, status)
	assert.Equal(t, "healthy", body["status"])
	assert.Equal(t, []any{"database", "chain"}, body["checked"])
	status, body = getJSON(t, ts.URL+"/readyz")
	require.Equal(t, 200, status)
	assert.Equal(t, map[string]any{"database": "ok", "chain": "ok"}, body["checks"])

	// The binary's /metrics: the server's routes, the database pool, the Go runtime.
	resp, err := http.Get(ts.URL + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	for _, want := range []string{`healthagents_http_requests_total{route="POST /verify-eligibility",status="200"}`,
		"go_sql_open_connections", "go_goroutines"} {
		assert.Contains(t, string(b), want)
	}
}

// TestAttestationOnChain checks the transaction behind a result: anyone with
// the chain finds the StatementVerified event with the proof's public inputs.
func TestAttestationOnChain(t *testing.T) {
	a := shared(t)
	env := sealed(t, a, nil)
	res, err := a.Service.VerifyEligibility(t.Context(), env, "PROC002")
	require.NoError(t, err)
	require.True(t, res.ZKProofVerified)
	require.NotNil(t, res.Proof)
	assert.Equal(t, float64(70), res.CoveragePct) // the record's override
	assert.Len(t, res.Proof.ProofData, 2+512)     // 0x + 256 bytes hex
	require.NotEmpty(t, res.Proof.TxHash)

	st, err := a.Ledger.Statement(t.Context(), common.HexToHash(res.Proof.TxHash))
	require.NoError(t, err)
	assert.Equal(t, attest.KindEligibility, st.Kind)
	require.Len(t, st.Inputs, len(res.Proof.PublicInputs))
	for i, in := range st.Inputs {
		assert.Equal(t, strings.TrimPrefix(res.Proof.PublicInputs[i], "0x"), common.BigToHash(in).Hex()[2:], "input %d", i)
	}
}

// keyedDir is a fresh DATA_DIR holding the Groth16 keys of the test cache
// (the shared service's, so no set-up runs) and nothing else: its own
// database and embedded chain, since one chain directory serves one process
// at a time.
func keyedDir(t *testing.T) string {
	t.Helper()
	return zkkeys.DataDir(t)
}

// TestKeysReusedAcrossRestart closes a service and opens another on the same
// DATA_DIR: the Fernet key and the Groth16 keys are loaded, not made again,
// and the embedded chain still holds the first service's transactions and
// events and goes on from its old head.
func TestKeysReusedAcrossRestart(t *testing.T) {
	dir := keyedDir(t)
	a, err := app.OpenWithOutput(t.Context(), app.Config{DataDir: dir}, slog.New(slog.DiscardHandler), io.Discard)
	require.NoError(t, err)
	env := sealed(t, a, nil)
	first, err := a.Service.VerifyEligibility(t.Context(), env, "PROC002")
	require.NoError(t, err)
	require.True(t, first.ZKProofVerified)
	head, err := a.Ledger.Client().HeaderByNumber(t.Context(), nil)
	require.NoError(t, err)
	require.NoError(t, a.Close())

	before := map[string]time.Time{}
	require.NoError(t, filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		rel, _ := filepath.Rel(dir, p)
		if err == nil && !fi.IsDir() && !strings.Contains(filepath.Base(p), ".db") && !strings.HasPrefix(rel, "chain") {
			before[p] = fi.ModTime() // key files; the database and the chain are written to by design
		}
		return err
	}))
	require.NotEmpty(t, before)
	b, err := app.OpenWithOutput(t.Context(), app.Config{DataDir: dir}, slog.New(slog.DiscardHandler), io.Discard)
	require.NoError(t, err)
	defer b.Close()
	for p, mt := range before {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, mt, fi.ModTime(), "%s was rewritten", p)
	}
	// The first service's transaction and its event are still on the chain.
	st, err := b.Ledger.Statement(t.Context(), common.HexToHash(first.Proof.TxHash))
	require.NoError(t, err)
	assert.Equal(t, attest.KindEligibility, st.Kind)
	// An envelope sealed for the first instance opens in the second, and its
	// transaction lands above the old head.
	res, err := b.Service.VerifyEligibility(t.Context(), env, "PROC004")
	require.NoError(t, err)
	assert.True(t, res.ZKProofVerified)
	now, err := b.Ledger.Client().HeaderByNumber(t.Context(), nil)
	require.NoError(t, err)
	assert.Greater(t, now.Number.Uint64(), head.Number.Uint64())
}

// TestChainRPCListen serves the embedded chain's read-only JSON-RPC: a
// third party finds a decision's receipt and cannot send a transaction.
func TestChainRPCListen(t *testing.T) {
	a, err := app.OpenWithOutput(t.Context(), app.Config{DataDir: keyedDir(t), ChainRPCListen: "127.0.0.1:0"}, slog.New(slog.DiscardHandler), io.Discard)
	require.NoError(t, err)
	defer a.Close()
	require.NotEmpty(t, a.ChainRPCAddr)
	res, err := a.Service.VerifyEligibility(t.Context(), sealed(t, a, nil), "PROC002")
	require.NoError(t, err)
	require.True(t, res.ZKProofVerified)

	rpc := func(method string, params ...any) map[string]any {
		if params == nil {
			params = []any{}
		}
		_, body := post(t, "http://"+a.ChainRPCAddr, map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
		return body
	}
	receipt := rpc("eth_getTransactionReceipt", res.Proof.TxHash)
	require.NotNil(t, receipt["result"], "%v", receipt)
	r := receipt["result"].(map[string]any)
	assert.Equal(t, "0x1", r["status"])
	assert.Equal(t, strings.ToLower(a.Ledger.Registry().Hex()), r["to"])
	assert.NotEmpty(t, r["logs"])
	assert.NotNil(t, rpc("eth_chainId")["result"])
	refused := rpc("eth_sendRawTransaction", "0x00")
	assert.Nil(t, refused["result"])
	assert.NotNil(t, refused["error"])
}

func getJSON(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return resp.StatusCode, out
}

// TestBootstrapTokenPrintedOnce: the first start without keys or ADMIN_TOKEN
// prints a one-time token that creates a key; production never prints one.
func TestBootstrapTokenPrintedOnce(t *testing.T) {
	t.Parallel()
	dir := keyedDir(t)
	var out bytes.Buffer
	a, err := app.OpenWithOutput(t.Context(), app.Config{DataDir: dir, Port: 8000}, nil, &out)
	require.NoError(t, err)
	defer a.Close()
	line := regexp.MustCompile(`hab_[0-9A-Za-z]+`).FindString(out.String())
	require.NotEmpty(t, line, out.String())
	assert.Equal(t, line, a.BootstrapToken(), "kept for the program serving the API")

	ts := httptest.NewServer(a.Handler)
	defer ts.Close()
	req, _ := http.NewRequestWithContext(t.Context(), "POST", ts.URL+"/auth/keys", nil)
	req.Header.Set("Authorization", "Bearer "+line)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	var created map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&created))
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode, "%v", created)
	assert.Regexp(t, `^sk_(dev|live)_`, created["api_key"])

	// Used once: a second key needs a key or the admin token.
	req, _ = http.NewRequestWithContext(t.Context(), "POST", ts.URL+"/auth/keys", nil)
	req.Header.Set("Authorization", "Bearer "+line)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 401, resp.StatusCode)

	// Production prints no bootstrap token: without ADMIN_TOKEN or a key
	// it refuses to start (TestProductionFirstKey).
	var prod bytes.Buffer
	prodCfg := app.Config{DataDir: keyedDir(t), Production: true, TrustedProxies: []string{"10.0.0.0/8"}}
	app.AllowDevelopmentParts(&prodCfg)
	_, err = app.OpenWithOutput(t.Context(), prodCfg, nil, &prod)
	require.ErrorContains(t, err, "ADMIN_TOKEN")
	assert.Empty(t, prod.String())
}
