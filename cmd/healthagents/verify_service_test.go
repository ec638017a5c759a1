package main

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/internal/testcache/zkkeys"
	"github.com/healthagents/healthagents/verify/verifytest"
	"github.com/healthagents/healthagents/zkp"
	"github.com/healthagents/healthagents/zkp/statement"
)

// TestVerifyDecisionOnServiceDecisions: decisions the service made — an
// eligibility-v3 and a prescription-v4 proof, each recorded by its own
// transaction — pass every check of verify-decision and of the JavaScript
// verifier of docs/verify.md (with HEALTHAGENTS_TEST_VERIFYJS), with the
// statement the service returned; the same statement with one text changed
// is refused by both. On the embedded chain (served read-only by
// CHAIN_RPC_LISTEN) and, with HEALTHAGENTS_TEST_GANACHE, on ganache: the
// registry deployed there with the same keys, the service started on it
// with CHAIN_ENDPOINT.
func TestVerifyDecisionOnServiceDecisions(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dataDir := zkkeys.DataDir(t)
	a, err := app.OpenWithOutput(ctx, app.Config{DataDir: dataDir, ProofTimeout: testProofTimeout, ChainRPCListen: "127.0.0.1:0"}, slog.New(slog.DiscardHandler), io.Discard)
	require.NoError(t, err)
	defer a.Close()
	<-a.ZK.Warm()
	t.Run("embedded", func(t *testing.T) { checkServiceDecisions(t, a, "http://"+a.ChainRPCAddr) })

	endpoint := os.Getenv("HEALTHAGENTS_TEST_GANACHE")
	if endpoint == "" {
		t.Skip("HEALTHAGENTS_TEST_GANACHE is not set (.ci/ganache.sh starts ganache)")
	}
	t.Run("ganache", func(t *testing.T) {
		// `healthagents chain deploy` there with the service's keys; the
		// same accounts as TestVerifyDecisionCommandGanache, one test at a
		// time.
		ganacheAccounts.Lock()
		defer ganacheAccounts.Unlock()
		sys, err := zkp.LoadOrSetup(ctx, filepath.Join(dataDir, "zkp"))
		require.NoError(t, err)
		verifiers := map[chain.Kind]chain.VerifyingKey{}
		for _, name := range zkp.CircuitNames() {
			vk, err := chain.VerifyingKeyFromGnark(sys.VerifyingKey(name))
			require.NoError(t, err)
			verifiers[chain.Kind(name)] = vk
		}
		key, err := crypto.HexToECDSA(ganacheKey2)
		require.NoError(t, err)
		owner, err := crypto.HexToECDSA(ganacheKey3)
		require.NoError(t, err)
		addrs, err := chain.Deploy(ctx, endpoint, key, chain.DeployConfig{OwnerKey: owner, Verifiers: verifiers})
		require.NoError(t, err)
		ownerFile := filepath.Join(t.TempDir(), "owner.key")
		require.NoError(t, os.WriteFile(ownerFile, []byte(ganacheKey3), 0o600))
		dir := t.TempDir()
		require.NoError(t, os.CopyFS(filepath.Join(dir, "zkp"), os.DirFS(filepath.Join(dataDir, "zkp"))))
		g, err := app.OpenWithOutput(ctx, app.Config{DataDir: dir, ProofTimeout: testProofTimeout, ChainEndpoint: endpoint, ChainKey: ganacheKey2,
			ChainRegistry: addrs.Registry.Hex(),
			ChainOwner:    crypto.PubkeyToAddress(owner.PublicKey).Hex(), ChainOwnerKeyFile: ownerFile,
			// Each decision its own transaction, as on the embedded chain:
			// checkServiceDecisions gives verify-decision the statement alone.
			ChainAnchor: "each"},
			slog.New(slog.DiscardHandler), io.Discard)
		require.NoError(t, err)
		defer g.Close()
		<-g.ZK.Warm()
		checkServiceDecisions(t, g, endpoint)
	})
}

// checkServiceDecisions makes an eligibility and a prescription decision
// with a and checks each with both verifiers against the chain at rpc.
func checkServiceDecisions(t *testing.T, a *app.App, rpc string) {
	ctx := t.Context()
	registry := a.Ledger.Registry().Hex()
	elig, err := a.Service.VerifyEligibility(ctx, sealedRecord(t, a), "PROC001")
	require.NoError(t, err)
	require.True(t, elig.ZKProofVerified)
	rx, err := a.Service.ValidatePrescription(ctx, sealedRecord(t, a), "6809") // metformin, for a patient on warfarin
	require.NoError(t, err)
	require.True(t, rx.ZKProofVerified)

	for _, d := range []struct {
		name string
		att  *healthagents.Attestation
	}{{"eligibility", elig.Proof}, {"prescription", rx.Proof}} {
		t.Run(d.name, func(t *testing.T) {
			require.NotNil(t, d.att)
			require.NotNil(t, d.att.Statement, "the service returns the statement")
			b, err := json.Marshal(d.att.Statement)
			require.NoError(t, err)
			var st statement.Statement
			require.NoError(t, json.Unmarshal(b, &st), "the service's statement reads strictly")
			file := writeJSON(t, "statement.json", st)

			out, err := runVerify(t, "--rpc", rpc, "--registry", registry, "--tx", d.att.TxHash, "--statement", file)
			require.NoError(t, err, out)
			assertEveryCheckPassed(t, out)
			js, code := runVerifyJS(t, "--rpc", rpc, "--registry", registry, "--tx", d.att.TxHash, "--statement", file)
			if code >= 0 {
				assert.Equal(t, 0, code, js)
				assertEveryCheckPassed(t, js)
			}

			// The service day's text changed, its value left alone.
			tampered := verifytest.Copy(st)
			for i, f := range tampered.Opening.Fields {
				if f.Name == "service_day" {
					tampered.Opening.Fields[i].Text = "2001-01-01"
				}
			}
			bad := writeJSON(t, "tampered.json", tampered)
			out, err = runVerify(t, "--rpc", rpc, "--registry", registry, "--tx", d.att.TxHash, "--statement", bad)
			require.Error(t, err, out)
			assert.Equal(t, []string{"text"}, verifytest.FailedChecks(out), out)
			js, code = runVerifyJS(t, "--rpc", rpc, "--registry", registry, "--tx", d.att.TxHash, "--statement", bad)
			if code >= 0 {
				assert.Equal(t, 1, code, js)
				assert.Equal(t, []string{"text"}, verifytest.FailedChecks(js), js)
			}
		})
	}
}

// runVerifyJS runs examples/verify-js/verify.mjs; code is -1 when
// HEALTHAGENTS_TEST_VERIFYJS is unset (.ci/verifyjs.sh sets it).
func runVerifyJS(t *testing.T, args ...string) (out string, code int) {
	t.Helper()
	if os.Getenv("HEALTHAGENTS_TEST_VERIFYJS") == "" {
		return "", -1
	}
	dir, err := filepath.Abs("../../examples/verify-js")
	require.NoError(t, err)
	cmd := exec.CommandContext(t.Context(), "node", append([]string{"verify.mjs"}, args...)...)
	cmd.Dir = dir
	b, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(b), ee.ExitCode()
	}
	require.NoError(t, err, string(b))
	return string(b), 0
}
