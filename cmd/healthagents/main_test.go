package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/hex"
	"encoding/json"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/internal/testcache/zkkeys"
	"github.com/healthagents/healthagents/zkp"
)

// testProofTimeout is the proof deadline of the services these tests open
// in-process (app.Config.ProofTimeout), as clitest.HarnessEnv gives the
// processes they start: a test checks a proof's answer, not its speed, and
// the machine running it may be busy.
const testProofTimeout = 2 * time.Minute

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestVersion(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"version"}, env(nil), nil, &out, io.Discard))
	assert.Equal(t, "healthagents 0.1.0\n", out.String())
}

func TestUnknownCommand(t *testing.T) {
	t.Parallel()
	err := run(t.Context(), []string{"frobnicate"}, env(nil), nil, io.Discard, io.Discard)
	require.ErrorIs(t, err, errUsage)
}

// TestSealThenServe is the README walkthrough: seal the sample record with
// the generated key, serve, and post the envelope.
func TestSealThenServe(t *testing.T) {
	t.Parallel()
	dir := zkkeys.DataDir(t)
	settings := env(map[string]string{"DATA_DIR": dir, "HOST": "127.0.0.1", "PORT": "0", "LOG_LEVEL": "debug"})

	var envelope, logs bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"seal", "../../testdata/record.json"}, settings, nil, &envelope, &logs))
	var e cipher.Envelope
	require.NoError(t, json.Unmarshal(envelope.Bytes(), &e))
	assert.Equal(t, "PT-000123", e.PatientID)
	assert.FileExists(t, filepath.Join(dir, "fernet.key"))
	assert.Contains(t, logs.String(), "GENERATED a new Fernet key")

	cfg, err := app.ConfigFromEnv(settings)
	require.NoError(t, err)
	cfg.ProofTimeout = testProofTimeout
	ctx, cancel := context.WithCancel(t.Context())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	var serveLogs bytes.Buffer
	go func() { done <- serve(ctx, cfg, newLogger(&serveLogs, cfg.LogLevel), ready) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("serve: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("server did not start")
	}
	body := `{"patient_data": ` + envelope.String() + `, "procedure_code": "PROC001"}`
	resp, err := http.Post("http://"+addr+"/verify-eligibility", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode, string(out))
	assert.Contains(t, string(out), `"eligible":true`)

	cancel() // what SIGTERM does
	require.NoError(t, <-done)
	plaintext, err := os.ReadFile("../../testdata/record.json")
	require.NoError(t, err)
	assert.NotContains(t, serveLogs.String(), "W123456789")
	assert.NotContains(t, serveLogs.String(), string(plaintext[:40]))
}

func TestSealRejectsBadRecord(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"schema":"healthagents/record/v1"}`), 0o600))
	err := run(t.Context(), []string{"seal", bad}, env(map[string]string{"DATA_DIR": dir}), nil, io.Discard, io.Discard)
	require.ErrorContains(t, err, "patient_id")
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	for _, m := range []map[string]string{
		{"PORT": "eighty"}, {"LOG_LEVEL": "loud"}, {"HEALTHAGENTS_ENV": "staging"}, {"TLS_CERT_FILE": "x.pem"},
		{"PHARMACY_ORACLE": "0x00000000000000000000000000000000000000aa"}, // the embedded chain deploys its own
		{"CHAIN_ENDPOINT": "http://127.0.0.1:8545", "PHARMACY_ORACLE": "oracle"},
		{"MAX_IN_FLIGHT": "0"}, {"MAX_IN_FLIGHT": "many"}, {"MAX_CONNECTIONS": "-1"},
	} {
		_, err := app.ConfigFromEnv(env(m))
		assert.Error(t, err, "%v", m)
	}
}

// TestChainDeployThenServe deploys the contracts with `healthagents chain
// deploy` on a JSON-RPC node (the embedded chain served over HTTP) and runs
// the service against it through CHAIN_ENDPOINT.
func TestChainDeployThenServe(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	rpcAddr := ln.Addr().String()
	ln.Close()
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	ownerKey, err := crypto.GenerateKey()
	require.NoError(t, err)
	owner := crypto.PubkeyToAddress(ownerKey.PublicKey)
	node, err := chain.NewSimulated(ctx, chain.WithHTTP(rpcAddr), chain.WithKey(key), chain.WithFunded(owner))
	require.NoError(t, err)
	defer node.Close()

	dir := zkkeys.DataDir(t)
	settings := map[string]string{
		"DATA_DIR": dir, "CHAIN_ENDPOINT": "http://" + rpcAddr,
		"CHAIN_PRIVATE_KEY": "0x" + hex.EncodeToString(crypto.FromECDSA(key)),
		"CHAIN_OWNER":       owner.Hex(),
	}
	// The owner is a cold wallet: deploy prints its actions unsigned; the
	// "wallet" signs and sends each, in order.
	var out bytes.Buffer
	require.NoError(t, run(ctx, []string{"chain", "deploy"}, env(settings), nil, &out, io.Discard))
	signUnsignedLines(t, node, out.String(), ownerKey, 1) // setSubmitter, and addCircuit per governed circuit
	for _, line := range strings.Split(out.String(), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "{") {
			settings[k] = v
		}
	}
	require.True(t, common.IsHexAddress(settings["CHAIN_REGISTRY"]), out.String())
	oracle := settings["PHARMACY_ORACLE"]
	require.True(t, common.IsHexAddress(oracle), oracle)
	code, err := node.Client().CodeAt(ctx, common.HexToAddress(oracle), nil)
	require.NoError(t, err)
	assert.NotEmpty(t, code, "the oracle is deployed")
	settings["PHARMACY_ORACLE"] = oracle

	cfg, err := app.ConfigFromEnv(env(settings))
	require.NoError(t, err)
	cfg.ProofTimeout = testProofTimeout
	// The service's own issuer key is not registered yet: start is
	// refused, naming the owner's command.
	_, err = app.Open(ctx, cfg, nil)
	require.ErrorIs(t, err, chain.ErrOwnerAction)
	_, command, ok := strings.Cut(err.Error(), "run `healthagents ")
	require.True(t, ok, err.Error())
	command, _, _ = strings.Cut(command, "`")
	require.True(t, strings.HasPrefix(command, "chain register-issuer "), command)
	ownerFile := filepath.Join(t.TempDir(), "owner.key")
	require.NoError(t, os.WriteFile(ownerFile, []byte(hex.EncodeToString(crypto.FromECDSA(ownerKey))), 0o600))
	out.Reset()
	require.NoError(t, run(ctx, append(strings.Fields(command), "--owner-key", ownerFile), env(settings), nil, &out, io.Discard))
	assert.Contains(t, out.String(), "sent registerIssuer(")
	// Printed unsigned, signed by the wallet: a revocation.
	out.Reset()
	require.NoError(t, run(ctx, []string{"chain", "revoke-nonce", strings.Fields(command)[2], "5"}, env(settings), nil, &out, io.Discard))
	signUnsignedLines(t, node, out.String(), ownerKey, 1)

	// add-circuit: a circuit deploy bound already is left alone (verifiers
	// are immutable); one not of the registry's shape is refused.
	sys, err := zkp.LoadOrSetup(ctx, filepath.Join(dir, "zkp"))
	require.NoError(t, err)
	for _, name := range zkp.CircuitNames() {
		vk, err := chain.VerifyingKeyFromGnark(sys.VerifyingKey(name))
		require.NoError(t, err)
		out.Reset()
		err = run(ctx, []string{"chain", "add-circuit", name}, env(settings), nil, &out, io.Discard)
		if vk.PublicInputs() == 3 {
			require.NoError(t, err)
			assert.Contains(t, out.String(), "already; verifiers are immutable")
		} else {
			require.ErrorContains(t, err, "public inputs")
		}
	}

	a, err := app.Open(ctx, cfg, nil)
	require.NoError(t, err)
	defer a.Close()
	revoked, err := a.Ledger.Governed().IsRevoked(ctx, a.Trust.SelfKeyHash(), 5)
	require.NoError(t, err)
	assert.True(t, revoked)
	plain, err := os.ReadFile("../../testdata/record.json")
	require.NoError(t, err)
	envl, err := cipher.Seal("PT-000123", plain, a.Keyring)
	require.NoError(t, err)
	res, err := a.Service.VerifyEligibility(ctx, &envl, "PROC001")
	require.NoError(t, err)
	assert.True(t, res.ZKProofVerified)
	endpoint, network := a.Ledger.Network()
	assert.Equal(t, "http://"+rpcAddr, endpoint)
	assert.NotEmpty(t, network)

	// The oracle chain deploy printed, written through the service's
	// account (its owner) and read back by prescription validation's reader.
	require.NotNil(t, a.Pharmacy)
	assert.Equal(t, oracle, a.Pharmacy.Address().Hex())
	att, err := a.V1.AttestAvailability(ctx, healthagents.V1Attestation{PharmacyNPI: "1245319599", NDCCode: "0071-0155-23", EstimatedAvailability: "2026-12-03"})
	require.NoError(t, err)
	assert.NotEmpty(t, att.BlockchainTx)
	av, found, err := a.Pharmacy.Availability(ctx, "1245319599", "00071015523")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, "2026-12-03", av.AvailableOn.Format(time.DateOnly))

	// Without PHARMACY_ORACLE there is no oracle: honest "unconfirmed".
	require.NoError(t, a.Close())
	delete(settings, "PHARMACY_ORACLE")
	cfg, err = app.ConfigFromEnv(env(settings))
	require.NoError(t, err)
	cfg.ProofTimeout = testProofTimeout
	b, err := app.Open(ctx, cfg, nil)
	require.NoError(t, err)
	defer b.Close()
	assert.Nil(t, b.Pharmacy)
	assert.False(t, b.V1.HasOracle())
}

// TestBench drives an in-process server with the load command, every
// endpoint it knows, and checks the table: a row per endpoint with the
// latency percentiles and the spec's typical times beside them.
func TestBench(t *testing.T) {
	t.Parallel()
	dir := zkkeys.DataDir(t)
	// Requests come from many addresses through a trusted proxy, as behind
	// a load balancer, so the public limit (10/min per address) does not
	// answer first.
	settings := env(map[string]string{"DATA_DIR": dir, "ADMIN_TOKEN": "bench-admin-token-0123456789", "TRUSTED_PROXIES": "127.0.0.1"})
	cfg, err := app.ConfigFromEnv(settings)
	require.NoError(t, err)
	cfg.ProofTimeout = testProofTimeout
	a, err := app.Open(t.Context(), cfg, nil)
	require.NoError(t, err)
	defer a.Close()
	ts := httptest.NewServer(a.Handler)
	defer ts.Close()
	var out bytes.Buffer
	err = run(t.Context(), []string{"bench", "-url", ts.URL, "-n", "6", "-c", "2", "-spread", "1000", "-record", "../../testdata/record.json"}, settings, nil, &out, io.Discard)
	require.NoError(t, err)
	// Federated rounds take each organization once and three per round:
	// closed loop, one at a time, 50 records per submission to keep it short.
	err = run(t.Context(), []string{"bench", "-url", ts.URL, "-n", "7", "-c", "1", "-endpoints", "submit-federated-update", "-records", "50",
		"-record", "../../testdata/record.json"}, settings, nil, &out, io.Discard)
	require.NoError(t, err)
	t.Log(out.String())
	table := out.String()
	assert.Regexp(t, `endpoint\s+p50\s+p95\s+p99\s+ok/s\s+all/s\s+shed p50\s+shed p99\s+statuses\s+errors\s+dropped\s+server CPU/req\s+spec typical \(min / avg / max\)`, table)
	ms := `[0-9]+\.[0-9]{2} ms`
	for name, row := range map[string]struct{ ok, spec string }{
		"health":                  {"200×6", "1 / 5 / 10 ms"},
		"status":                  {"200×6", "2 / 10 / 20 ms"},
		"verify-eligibility":      {"200×6", "200 / 400 / 1000 ms"},
		"validate-prescription":   {"200×6", "400 / 800 / 1300 ms"},
		"submit-federated-update": {"200×7", "500 / 2000 / 5000 ms"},
	} {
		// name, p50, p95, p99 (milliseconds), …, statuses, …, spec.
		assert.Regexp(t, `(?m)^\s*`+name+`\s+`+ms+`\s+`+ms+`\s+`+ms+`\s.*\s`+row.ok+`\s.*`+regexp.QuoteMeta(row.spec), table, name)
	}
	assert.NotContains(t, table, "500×")
	assert.NotContains(t, table, "409×", "every federated submission found its round open")

	err = run(t.Context(), []string{"bench", "-n", "0"}, settings, nil, io.Discard, io.Discard)
	assert.Error(t, err)
	err = run(t.Context(), []string{"bench", "-url", ts.URL, "-endpoints", "submit-federated-update", "-admin-token", "", "-record", "../../testdata/record.json"},
		env(map[string]string{"DATA_DIR": dir}), nil, io.Discard, io.Discard)
	assert.ErrorContains(t, err, "-admin-token", "the federated target says what it needs")
}

// TestKeysCommand creates, lists and revokes a key offline, on the database
// the service uses.
func TestKeysCommand(t *testing.T) {
	t.Parallel()
	settings := env(map[string]string{"DATA_DIR": t.TempDir()})
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"keys", "create"}, settings, nil, &out, io.Discard))
	created := out.String()
	key := regexp.MustCompile(`sk_(dev|live)_[A-Za-z0-9_]+`).FindString(created)
	require.NotEmpty(t, key, created)

	out.Reset()
	require.NoError(t, run(t.Context(), []string{"keys", "list"}, settings, nil, &out, io.Discard))
	id := strings.Split(strings.TrimPrefix(strings.TrimPrefix(key, "sk_dev_"), "sk_live_"), "_")[0]
	assert.Contains(t, out.String(), id)
	assert.NotContains(t, out.String(), key, "list never shows a secret")

	require.NoError(t, run(t.Context(), []string{"keys", "revoke", id}, settings, nil, io.Discard, io.Discard))
	assert.Error(t, run(t.Context(), []string{"keys"}, settings, nil, io.Discard, io.Discard))
}

// signUnsignedLines signs and sends, in order, the unsigned owner
// transactions printed as JSON lines in out, as a cold wallet would; at
// least want of them.
func signUnsignedLines(t *testing.T, node *chain.Ledger, out string, key *ecdsa.PrivateKey, want int) {
	t.Helper()
	n := 0
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var u struct {
			RLP     string `json:"unsigned_rlp"`
			ChainID string `json:"chain_id"`
			From    string `json:"from"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &u))
		id, _ := new(big.Int).SetString(u.ChainID, 10)
		signed, err := chain.SignUnsigned(chain.UnsignedTx{RLPHex: u.RLP, ChainID: id, From: common.HexToAddress(u.From)}, key)
		require.NoError(t, err)
		require.NoError(t, node.Client().SendTransaction(t.Context(), signed))
		var status uint64
		require.Eventually(t, func() bool {
			r, err := node.Client().TransactionReceipt(t.Context(), signed.Hash())
			if err == nil {
				status = r.Status
			}
			return err == nil
		}, 10*time.Second, 20*time.Millisecond)
		require.Equal(t, uint64(1), status)
		n++
	}
	require.GreaterOrEqual(t, n, want, out)
}
