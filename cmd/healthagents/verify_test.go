package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/iden3/go-iden3-crypto/poseidon"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/verify/verifytest"
)

// writeStatement writes a statement file in the service's format whose
// opening has n fields, and returns its path and the digest iden3's Poseidon
// gives (computed here field by field, not with the command's code).
func writeStatement(t *testing.T, circuit *big.Int, n int, nonce uint64) (string, *big.Int) {
	t.Helper()
	type field struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	var fields []field
	var values []*big.Int
	for i := range n {
		v := big.NewInt(int64(1000 + 7*i))
		values = append(values, v)
		fields = append(fields, field{Name: fmt.Sprintf("f%d", i), Value: v.String()})
	}
	var digest *big.Int
	var err error
	if n <= 16 {
		digest, err = poseidon.Hash(values)
	} else {
		h1, err1 := poseidon.Hash(values[:16])
		h2, err2 := poseidon.Hash(values[16:])
		require.NoError(t, err1)
		require.NoError(t, err2)
		digest, err = poseidon.Hash([]*big.Int{h1, h2})
	}
	require.NoError(t, err)
	st := map[string]any{"digest": digest.String(), "opening": map[string]any{
		"circuit": "test", "circuit_id": circuit.String(), "issuer_key_hash": fmt.Sprint(verifytest.Issuer),
		"revocation_nonce": nonce, "fields": fields}}
	b, err := json.Marshal(st)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "statement.json")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return path, digest
}

func runVerify(t *testing.T, args ...string) (string, error) {
	var out, errOut bytes.Buffer
	err := run(t.Context(), append([]string{"verify-decision"}, args...), func(string) string { return "" }, strings.NewReader(""), &out, &errOut)
	return out.String() + errOut.String(), err
}

// TestVerifyDecisionCommand runs verify-decision against real recorded
// decisions on the embedded (simulated) chain served over JSON-RPC.
func TestVerifyDecisionCommand(t *testing.T) { testVerifyDecision(t, verifytest.New(t)) }

// ganache's third and fourth deterministic development accounts
// (.ci/ganache.sh starts four; chain's tests use the first two, so nonces
// never collide): the submitting key and the registry owner.
const (
	ganacheKey2 = "6370fd033278c143179d81c5526140625662b8daa446c22ee2d73db3707e620c"
	ganacheKey3 = "646f1ce2fdad0e6deeeb5c7e8e5543bdde65e86029e2fd9fc169899c440a7913"
)

// TestVerifyDecisionCommandGanache runs the same checks on an external node
// that is not go-ethereum (ganache, started by .ci/ganache.sh).
func TestVerifyDecisionCommandGanache(t *testing.T) {
	endpoint := os.Getenv("HEALTHAGENTS_TEST_GANACHE")
	if endpoint == "" {
		t.Skip("HEALTHAGENTS_TEST_GANACHE is not set (.ci/ganache.sh starts ganache)")
	}
	testVerifyDecision(t, verifytest.NewOn(t, endpoint, ganacheKey2, ganacheKey3))
}

// testVerifyDecision: a real decision passes every check; a tampered
// statement, a wrong contract and a revoked credential nonce each fail the
// matching check and exit non-zero; a retired issuer leaves earlier decisions
// valid.
func testVerifyDecision(t *testing.T, f *verifytest.Fixture) {
	statement, digest := writeStatement(t, f.Circuit, 20, 3) // two Poseidon chunks
	tx := f.Record(t, digest).Hex()
	registry := f.Gov.Address().Hex()

	t.Run("ok/every check", func(t *testing.T) {
		out, err := runVerify(t, "--rpc", f.Endpoint, "--tx", tx, "--registry", registry, "--statement", statement)
		require.NoError(t, err, out)
		for _, name := range []string{"receipt", "registry", "event", "inputs", "verifier", "proof", "issuer", "statement", "revocation"} {
			assert.Contains(t, out, "ok   "+name, out)
		}
		assert.NotContains(t, out, "FAIL")
	})
	t.Run("ok/registry not pinned says so", func(t *testing.T) {
		out, err := runVerify(t, "--rpc", f.Endpoint, "--tx", tx)
		require.NoError(t, err, out)
		assert.Contains(t, out, "not pinned")
	})
	t.Run("fail/tampered statement", func(t *testing.T) {
		b, err := os.ReadFile(statement)
		require.NoError(t, err)
		bad := filepath.Join(t.TempDir(), "bad.json")
		require.NoError(t, os.WriteFile(bad, bytes.Replace(b, []byte(`"value":"1007"`), []byte(`"value":"1008"`), 1), 0o600))
		out, err := runVerify(t, "--rpc", f.Endpoint, "--tx", tx, "--registry", registry, "--statement", bad)
		require.Error(t, err, out)
		assert.Contains(t, out, "FAIL statement")
		assert.Contains(t, err.Error(), "1 of")
	})
	t.Run("fail/wrong contract", func(t *testing.T) {
		out, err := runVerify(t, "--rpc", f.Endpoint, "--tx", tx, "--registry", f.Verifier.Hex())
		require.Error(t, err, out)
		assert.Contains(t, out, "FAIL registry")
	})
	t.Run("fail/revoked issuer nonce", func(t *testing.T) {
		f.Own(t, f.Gov.RevokeNonce(big.NewInt(verifytest.Issuer), 3))
		// A decision recorded after the revocation fails; the earlier one stands.
		revoked, d := writeStatement(t, f.Circuit, 5, 3)
		later := f.Record(t, d).Hex()
		out, err := runVerify(t, "--rpc", f.Endpoint, "--tx", later, "--registry", registry, "--statement", revoked)
		require.Error(t, err, out)
		assert.Contains(t, out, "FAIL revocation")
		out, err = runVerify(t, "--rpc", f.Endpoint, "--tx", tx, "--registry", registry, "--statement", statement)
		require.NoError(t, err, out)
		assert.Contains(t, out, "revoked later")
	})
	t.Run("fail/retired issuer", func(t *testing.T) {
		f.Own(t, f.Gov.RetireIssuer(big.NewInt(verifytest.Issuer)))
		out, err := runVerify(t, "--rpc", f.Endpoint, "--tx", tx, "--registry", registry)
		require.NoError(t, err, "a decision made before retirement stays valid: %s", out)
		assert.Contains(t, out, "retired later")
	})
}

func TestVerifyDecisionBadArguments(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "x.json")
	require.NoError(t, os.WriteFile(notJSON, []byte("{"), 0o600))
	tx := "0x" + strings.Repeat("ab", 32)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--rpc and --tx are required"},
		{[]string{"--rpc", "http://127.0.0.1:1"}, "--rpc and --tx are required"},
		{[]string{"--rpc", "http://127.0.0.1:1", "--tx", "0x12"}, "not a 32-byte"},
		{[]string{"--rpc", "http://127.0.0.1:1", "--tx", tx, "--registry", "nope"}, "not an address"},
		{[]string{"--rpc", "http://127.0.0.1:1", "--tx", tx, "--statement", notJSON}, "not a statement JSON document"},
		{[]string{"--rpc", "http://127.0.0.1:1", "--tx", tx, "--statement", filepath.Join(dir, "absent")}, "no such file"},
		{[]string{"--rpc", "http://127.0.0.1:1", "--tx", tx, "extra"}, "unexpected argument"},
	} {
		out, err := runVerify(t, tc.args...)
		require.Error(t, err, "%v: %s", tc.args, out)
		assert.Contains(t, err.Error(), tc.want, "%v", tc.args)
	}
}

// TestVerifyDecisionOnAServiceDecision checks decisions the service made
// (eligibility-v2 proofs recorded on the embedded chain,
// served read-only by CHAIN_RPC_LISTEN) with verify-decision and the
// statement the service returned: every check passes; one opening field
// changed, or the wrong contract, fails. With HEALTHAGENTS_TEST_VERIFYJS the
// JavaScript verifier of docs/verify.md (ethers + @iden3/js-crypto) checks
// the same decision and statement.
func TestVerifyDecisionOnAServiceDecision(t *testing.T) {
	ctx := t.Context()
	a, err := app.OpenWithOutput(ctx, app.Config{DataDir: t.TempDir(), ChainRPCListen: "127.0.0.1:0"}, slog.New(slog.DiscardHandler), io.Discard)
	require.NoError(t, err)
	defer a.Close()
	<-a.ZK.Warm()
	rpc := "http://" + a.ChainRPCAddr
	registry := a.Ledger.Registry().Hex()

	res, err := a.Service.VerifyEligibility(ctx, sealedRecord(t, a), "PROC001")
	require.NoError(t, err)
	require.True(t, res.ZKProofVerified)
	for _, d := range []struct {
		name string
		att  *healthagents.Attestation
	}{{"eligibility", res.Proof}} {
		t.Run(d.name, func(t *testing.T) {
			require.NotNil(t, d.att)
			require.NotNil(t, d.att.Statement, "the service returns the statement")
			b, err := json.Marshal(d.att.Statement)
			require.NoError(t, err)
			statement := filepath.Join(t.TempDir(), "statement.json")
			require.NoError(t, os.WriteFile(statement, b, 0o600))

			out, err := runVerify(t, "--rpc", rpc, "--registry", registry, "--tx", d.att.TxHash, "--statement", statement)
			require.NoError(t, err, out)
			for _, name := range []string{"receipt", "registry", "event", "inputs", "verifier", "proof", "issuer", "statement", "revocation"} {
				assert.Contains(t, out, "ok   "+name, out)
			}

			tampered := *d.att.Statement
			tampered.Opening.Fields = slices.Clone(tampered.Opening.Fields)
			v, _ := new(big.Int).SetString(tampered.Opening.Fields[0].Value, 10)
			tampered.Opening.Fields[0].Value = new(big.Int).Add(v, big.NewInt(1)).String()
			b, err = json.Marshal(&tampered)
			require.NoError(t, err)
			bad := filepath.Join(t.TempDir(), "tampered.json")
			require.NoError(t, os.WriteFile(bad, b, 0o600))
			out, err = runVerify(t, "--rpc", rpc, "--registry", registry, "--tx", d.att.TxHash, "--statement", bad)
			require.Error(t, err, out)
			assert.Contains(t, out, "FAIL statement")

			out, err = runVerify(t, "--rpc", rpc, "--registry", "0x000000000000000000000000000000000000dEaD", "--tx", d.att.TxHash)
			require.Error(t, err, out)
			assert.Contains(t, out, "FAIL registry")

			if os.Getenv("HEALTHAGENTS_TEST_VERIFYJS") != "" {
				dir, err := filepath.Abs("../../examples/verify-js")
				require.NoError(t, err)
				cmd := exec.CommandContext(ctx, "node", "verify.mjs", "--rpc", rpc, "--registry", registry, "--tx", d.att.TxHash, "--statement", statement)
				cmd.Dir = dir
				js, err := cmd.CombinedOutput()
				require.NoError(t, err, "verify.mjs: %s", js)
				assert.Contains(t, string(js), "ok   statement", string(js))
				assert.NotContains(t, string(js), "FAIL")
			}
		})
	}
}
