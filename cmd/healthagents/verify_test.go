package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/verify/verifytest"
	"github.com/healthagents/healthagents/x12"
	"github.com/healthagents/healthagents/zkp/statement"
)

// writeJSON writes v as JSON to a new file and returns its path.
func writeJSON(t *testing.T, name string, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return path
}

func runVerify(t *testing.T, args ...string) (string, error) {
	var out, errOut bytes.Buffer
	err := run(t.Context(), append([]string{"verify-decision"}, args...), func(string) string { return "" }, strings.NewReader(""), &out, &errOut)
	return out.String() + errOut.String(), err
}

// exitCode is the status the binary exits with for err (main).
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return 1
}

// everyCheck is what verify-decision prints for a decision checked with
// its statement, in order.
var everyCheck = []string{"receipt", "registry", "event", "inputs", "verifier", "proof", "issuer",
	"digest", "statement", "circuit", "circuit id", "schema", "text", "issuer key", "nonce", "revocation"}

func assertEveryCheckPassed(t *testing.T, out string) {
	t.Helper()
	for _, name := range everyCheck {
		assert.Contains(t, out, "ok   "+name+" ", out)
	}
	assert.NotContains(t, out, "FAIL")
}

// TestVerifyDecisionCommand runs verify-decision against real statements
// recorded on the embedded (simulated) chain served over JSON-RPC.
func TestVerifyDecisionCommand(t *testing.T) {
	t.Parallel()
	testVerifyDecision(t, verifytest.New(t))
}

// ganache's third and fourth deterministic development accounts
// (.ci/ganache.sh starts them; chain's tests use the first two, so nonces
// never collide): the submitting key and the registry owner.
const (
	ganacheKey2 = "6370fd033278c143179d81c5526140625662b8daa446c22ee2d73db3707e620c"
	ganacheKey3 = "646f1ce2fdad0e6deeeb5c7e8e5543bdde65e86029e2fd9fc169899c440a7913"
)

// ganacheAccounts is held by whichever of this package's tests is sending
// from ganacheKey2 and ganacheKey3: one at a time, so their nonces never
// collide.
var ganacheAccounts sync.Mutex

// TestVerifyDecisionCommandGanache runs the same checks on an external node
// that is not go-ethereum (ganache, started by .ci/ganache.sh).
func TestVerifyDecisionCommandGanache(t *testing.T) {
	endpoint := os.Getenv("HEALTHAGENTS_TEST_GANACHE")
	if endpoint == "" {
		t.Skip("HEALTHAGENTS_TEST_GANACHE is not set (.ci/ganache.sh starts ganache)")
	}
	t.Parallel()
	ganacheAccounts.Lock()
	defer ganacheAccounts.Unlock()
	testVerifyDecision(t, verifytest.NewOn(t, endpoint, ganacheKey2, ganacheKey3))
}

// testVerifyDecision: a real statement passes every check and exits 0;
// without the statement the command says what was not checked and exits 3;
// a wrong contract and a revoked credential nonce fail the matching check
// and exit 1; a retired issuer leaves earlier decisions valid.
func testVerifyDecision(t *testing.T, f *verifytest.Fixture) {
	st, recorded := f.Decision(t)
	tx, registry := recorded.Hex(), f.Gov.Address().Hex()
	file := writeJSON(t, "statement.json", st)

	t.Run("ok/every check", func(t *testing.T) {
		out, err := runVerify(t, "--rpc", f.Endpoint, "--tx", tx, "--registry", registry, "--statement", file)
		require.NoError(t, err, out)
		assertEveryCheckPassed(t, out)
		assert.Contains(t, out, "verified: all 16 checks passed")
	})
	t.Run("ok/registry not pinned says so", func(t *testing.T) {
		out, err := runVerify(t, "--rpc", f.Endpoint, "--tx", tx, "--statement", file)
		require.NoError(t, err, out)
		assert.Contains(t, out, "not pinned")
	})
	t.Run("ok/a prescription statement", func(t *testing.T) {
		rx := verifytest.PrescriptionStatement(t, 12)
		out, err := runVerify(t, "--rpc", f.Endpoint, "--tx", f.RecordStatement(t, rx).Hex(), "--registry", registry,
			"--statement", writeJSON(t, "rx.json", rx))
		require.NoError(t, err, out)
		assertEveryCheckPassed(t, out)
	})
	t.Run("batch", func(t *testing.T) { testVerifyBatched(t, f) })
	t.Run("unverified/no statement", func(t *testing.T) {
		out, err := runVerify(t, "--rpc", f.Endpoint, "--tx", tx, "--registry", registry)
		require.Error(t, err, out)
		assert.Equal(t, exitUnverified, exitCode(err), "exit status 3: nothing the decision states was checked")
		assert.Equal(t, []string{"statement"}, verifytest.FailedChecks(out), out)
		assert.Contains(t, out, "FAIL statement     not checked: no statement was given")
		assert.Contains(t, err.Error(), "NOT VERIFIED")
		assert.NotContains(t, out, "verified: all")
	})
	t.Run("fail/wrong contract", func(t *testing.T) {
		out, err := runVerify(t, "--rpc", f.Endpoint, "--tx", tx, "--registry", f.Verifier.Hex(), "--statement", file)
		require.Error(t, err, out)
		assert.Equal(t, exitRefused, exitCode(err))
		assert.Contains(t, out, "FAIL registry")
	})
	t.Run("fail/revoked issuer nonce", func(t *testing.T) {
		f.Own(t, f.Gov.RevokeNonce(st.Opening.IssuerKeyHash, verifytest.TamperNonce))
		// A decision recorded after the revocation fails; the earlier one stands.
		later := verifytest.EligibilityStatement(t, verifytest.TamperNonce)
		out, err := runVerify(t, "--rpc", f.Endpoint, "--tx", f.RecordStatement(t, later).Hex(), "--registry", registry,
			"--statement", writeJSON(t, "later.json", later))
		require.Error(t, err, out)
		assert.Equal(t, []string{"revocation"}, verifytest.FailedChecks(out), out)
		out, err = runVerify(t, "--rpc", f.Endpoint, "--tx", tx, "--registry", registry, "--statement", file)
		require.NoError(t, err, out)
		assert.Contains(t, out, "revoked later")
	})
	t.Run("fail/retired issuer", func(t *testing.T) {
		f.Own(t, f.Gov.RetireIssuer(st.Opening.IssuerKeyHash))
		out, err := runVerify(t, "--rpc", f.Endpoint, "--tx", tx, "--registry", registry, "--statement", file)
		require.NoError(t, err, "a decision made before retirement stays valid: %s", out)
		assert.Contains(t, out, "retired later")
	})
}

// TestVerifyDecisionTampered: verify-decision refuses every doctored
// decision of issue 25 (verifytest.Tampers), exits 1, and fails exactly the
// checks naming the parts that do not match.
func TestVerifyDecisionTampered(t *testing.T) {
	t.Parallel()
	f := verifytest.New(t)
	st, tx := f.Decision(t)
	for _, c := range f.Cases(t, st, tx) {
		t.Run(c.Name, func(t *testing.T) {
			out, err := runVerify(t, "--rpc", f.Endpoint, "--tx", c.Tx.Hex(), "--registry", c.Registry.Hex(),
				"--statement", writeJSON(t, "statement.json", c.Statement))
			require.Error(t, err, out)
			assert.Equal(t, exitRefused, exitCode(err))
			assert.Equal(t, c.Failed, verifytest.FailedChecks(out), out)
			for _, line := range c.Lines {
				assert.Contains(t, out, line)
			}
			assert.Contains(t, err.Error(), "REFUSED")
		})
	}
}

// everyBatchCheck is what verify-decision prints for a decision anchored in
// a batch, checked with its statement and proof (each name once).
var everyBatchCheck = []string{"receipt", "registry", "batch", "path", "verifier", "proof", "issuer",
	"digest", "statement", "circuit", "circuit id", "schema", "text", "issuer key", "nonce", "revocation"}

// testVerifyBatched: decisions anchored in one batch (eligibility and
// prescription statements, one recordBatch transaction) pass every batched
// check, of verify-decision and of the JavaScript verifier (with
// HEALTHAGENTS_TEST_VERIFYJS), from their whole decision response, or from the statement and a
// --proof file; without the proof the command says what was not checked
// and exits 3; a response whose proof_data is not a proof is refused.
func testVerifyBatched(t *testing.T, f *verifytest.Fixture) {
	_, batch := f.Batch(t)
	registry := f.Gov.Address().Hex()
	for i, a := range batch {
		file := filepath.Join(t.TempDir(), "decision.json")
		require.NoError(t, os.WriteFile(file, a.JSON(t), 0o600))
		out, err := runVerify(t, "--rpc", f.Endpoint, "--tx", a.Tx.Hex(), "--registry", registry, "--statement", file)
		require.NoError(t, err, "leaf %d: %s", i, out)
		for _, name := range everyBatchCheck {
			assert.Contains(t, out, "ok   "+name+" ", out)
		}
		assert.NotContains(t, out, "FAIL")
		assert.Contains(t, out, "note proof         read from "+file+" (verification_proof.proof_data)")
		assert.Contains(t, out, "verified: all 17 checks passed")
		js, code := runVerifyJS(t, "--rpc", f.Endpoint, "--tx", a.Tx.Hex(), "--registry", registry, "--statement", file)
		if code >= 0 {
			assert.Equal(t, 0, code, "leaf %d: %s", i, js)
			assert.NotContains(t, js, "FAIL")
			assert.Contains(t, js, "verified: all 17 checks passed")
		}
	}
	a := batch[verifytest.BatchIndex]
	st := writeJSON(t, "statement.json", a.Statement)
	t.Run("ok/statement and --proof", func(t *testing.T) {
		proof := writeJSON(t, "proof.json", map[string]any{"proof_data": a.ProofData, "public_inputs": a.PublicInputs})
		out, err := runVerify(t, "--rpc", f.Endpoint, "--tx", a.Tx.Hex(), "--registry", registry, "--statement", st, "--proof", proof)
		require.NoError(t, err, out)
		assert.Contains(t, out, "verified: all 17 checks passed")
	})
	t.Run("ok/a root-family answer", func(t *testing.T) {
		// healthagents.DecisionRecord: proof_data and public_inputs beside
		// blockchain_tx and statement when the decision is batched.
		resp := map[string]any{"eligible": true, "coverage_pct": 80, "zk_proof_verified": true, "blockchain_tx": a.Tx.Hex(),
			"statement": a.Statement, "issuer": "self", "proof_data": a.ProofData, "public_inputs": a.PublicInputs}
		file := writeJSON(t, "root.json", resp)
		out, err := runVerify(t, "--rpc", f.Endpoint, "--tx", a.Tx.Hex(), "--registry", registry, "--statement", file)
		require.NoError(t, err, out)
		assert.Contains(t, out, "(proof_data); it is re-verified")
		assert.Contains(t, out, "verified: all 17 checks passed")
		js, code := runVerifyJS(t, "--rpc", f.Endpoint, "--tx", a.Tx.Hex(), "--registry", registry, "--statement", file)
		if code >= 0 {
			assert.Equal(t, 0, code, js)
			assert.Contains(t, js, "verified: all 17 checks passed")
		}
	})
	t.Run("ok/zk_proofs of a v1 prescription answer, the transaction's picked", func(t *testing.T) {
		other := batch[0]
		resp := map[string]any{"statement": a.Statement, "zk_proofs": []map[string]any{
			{"proof_data": other.ProofData, "blockchain_tx": "0x" + strings.Repeat("ab", 32)},
			{"proof_data": a.ProofData, "public_inputs": a.PublicInputs, "blockchain_tx": a.Tx.Hex()},
		}}
		out, err := runVerify(t, "--rpc", f.Endpoint, "--tx", a.Tx.Hex(), "--registry", registry, "--statement", writeJSON(t, "rx.json", resp))
		require.NoError(t, err, out)
		assert.Contains(t, out, "(zk_proofs[1].proof_data)")
	})
	t.Run("unverified/no proof", func(t *testing.T) {
		out, err := runVerify(t, "--rpc", f.Endpoint, "--tx", a.Tx.Hex(), "--registry", registry, "--statement", st)
		require.Error(t, err, out)
		assert.Equal(t, exitUnverified, exitCode(err), out)
		assert.Equal(t, []string{"proof"}, verifytest.FailedChecks(out), out)
		assert.Contains(t, out, "FAIL proof         not checked: no proof was given")
		assert.Contains(t, err.Error(), "NOT VERIFIED: the statement's leaf is in the recorded batch, but no proof was given")
	})
	t.Run("unverified/no statement", func(t *testing.T) {
		out, err := runVerify(t, "--rpc", f.Endpoint, "--tx", a.Tx.Hex(), "--registry", registry)
		require.Error(t, err, out)
		assert.Equal(t, exitUnverified, exitCode(err), out)
		assert.Equal(t, []string{"statement"}, verifytest.FailedChecks(out), out)
	})
	t.Run("fail/not a proof", func(t *testing.T) {
		bad := a
		bad.ProofData = a.ProofData[:100]
		file := filepath.Join(t.TempDir(), "decision.json")
		require.NoError(t, os.WriteFile(file, bad.JSON(t), 0o600))
		out, err := runVerify(t, "--rpc", f.Endpoint, "--tx", a.Tx.Hex(), "--registry", registry, "--statement", file)
		require.Error(t, err, out)
		assert.Equal(t, exitRefused, exitCode(err), out)
		assert.Contains(t, out, "FAIL proof")
		assert.Contains(t, out, "verification_proof.proof_data: verify: not a proof: proof_data")
		out, err = runVerify(t, "--rpc", f.Endpoint, "--tx", a.Tx.Hex(), "--registry", registry, "--statement", st, "--proof", st)
		require.Error(t, err, out)
		assert.Equal(t, exitRefused, exitCode(err), out)
		assert.Contains(t, out, "holds no proof_data of transaction")
	})
}

// TestVerifyDecisionBatchTampered: verify-decision refuses every doctored
// batched decision of issue 30 (verifytest.BatchCases), given as the whole
// decision response, exits 1, and fails exactly the checks naming what
// does not match.
func TestVerifyDecisionBatchTampered(t *testing.T) {
	t.Parallel()
	f := verifytest.New(t)
	honest, batch := f.Batch(t)
	for _, c := range f.BatchCases(t, honest, batch) {
		t.Run(c.Name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "decision.json")
			require.NoError(t, os.WriteFile(file, c.Answer.JSON(t), 0o600))
			out, err := runVerify(t, "--rpc", f.Endpoint, "--tx", c.Answer.Tx.Hex(), "--registry", c.Registry.Hex(), "--statement", file)
			require.Error(t, err, out)
			assert.Equal(t, exitRefused, exitCode(err), out)
			assert.Equal(t, c.Failed, verifytest.FailedChecks(out), out)
			for _, line := range c.Lines {
				assert.Contains(t, out, line)
			}
			assert.Contains(t, err.Error(), "REFUSED")
		})
	}
}

func TestVerifyDecisionBadArguments(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "x.json")
	require.NoError(t, os.WriteFile(notJSON, []byte("{"), 0o600))
	extraKey := filepath.Join(dir, "extra.json")
	require.NoError(t, os.WriteFile(extraKey, []byte(`{"digest":"1","opening":{"circuit":"x","fields":[{"name":"a","value":"1"}]},"verdict":"approved"}`), 0o600))
	tx := "0x" + strings.Repeat("ab", 32)
	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{nil, "--rpc and --tx are required", exitCannotRun},
		{[]string{"--rpc", "http://127.0.0.1:1"}, "--rpc and --tx are required", exitCannotRun},
		{[]string{"--rpc", "http://127.0.0.1:1", "--tx", "0x12"}, "not a 32-byte", exitCannotRun},
		{[]string{"--rpc", "http://127.0.0.1:1", "--tx", tx, "--registry", "nope"}, "not an address", exitCannotRun},
		{[]string{"--rpc", "http://127.0.0.1:1", "--tx", tx, "--statement", filepath.Join(dir, "absent")}, "no such file", exitCannotRun},
		{[]string{"--rpc", "http://127.0.0.1:1", "--tx", tx, "extra"}, "unexpected argument", exitCannotRun},
		{[]string{"--rpc", "http://127.0.0.1:1", "--tx", tx, "--bogus"}, "flag provided but not defined", exitCannotRun},
		{[]string{"--rpc", "http://127.0.0.1:1", "--tx", tx, "--statement", notJSON}, "not a statement JSON document", exitRefused},
		{[]string{"--rpc", "http://127.0.0.1:1", "--tx", tx, "--statement", extraKey}, `unknown field "verdict"`, exitRefused},
	} {
		out, err := runVerify(t, tc.args...)
		require.Error(t, err, "%v: %s", tc.args, out)
		assert.Contains(t, err.Error(), tc.want, "%v", tc.args)
		assert.Equal(t, tc.code, exitCode(err), "%v", tc.args)
	}
}

// TestReadStatement: --statement takes the statement or the whole decision
// response (and says that the response's other fields are not checked); it
// reads the 19-digit nonce exactly, and a statement whose plain
// revocation_nonce was rounded by a tool that reads numbers as floats (jq
// 1.6: 2402863899112159179 becomes 2402863899112159000) reads, but its
// nonce is not the committed one, which the nonce check refuses.
func TestReadStatement(t *testing.T) {
	t.Parallel()
	const opening = `{"circuit":"eligibility-v2","circuit_id":"77","issuer_key_hash":"88","revocation_nonce":NONCE,
	"fields":[{"name":"payer_id","value":"232736699700","text":"60054"},{"name":"revocation_nonce","value":"2402863899112159179"},{"name":"salt","value":"12345"}]}`
	statementOf := func(nonce string) string {
		return `{"digest":"1","opening":` + strings.Replace(opening, "NONCE", nonce, 1) + `}`
	}
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}

	plain, fromResponse, err := readStatement(write("statement.json", statementOf("2402863899112159179")), common.Hash{})
	require.NoError(t, err)
	assert.Equal(t, fromFile, fromResponse)
	assert.Equal(t, uint64(2402863899112159179), plain.Opening.RevocationNonce)
	require.NoError(t, plain.Opening.CheckNonce())

	resp, fromResponse, err := readStatement(write("decision.json", `{"eligible":true,"verification_proof":{"blockchain_tx":"0x01"},"statement":`+statementOf("2402863899112159179")+`,"issuer":"self"}`), common.Hash{})
	require.NoError(t, err)
	assert.Equal(t, fromJSON, fromResponse)
	assert.Equal(t, plain, resp, "the response's statement is the statement")

	// An X12 271: the statement after the named transaction's MSG.
	text, err := x12.EncodeStatement([]byte(statementOf("2402863899112159179")))
	require.NoError(t, err)
	tx := common.HexToHash("0x" + strings.Repeat("ab", 32))
	var msgs strings.Builder
	for i, n := 0, (len(text)+229)/230; i < n; i++ {
		fmt.Fprintf(&msgs, "MSG*DECISION STATEMENT %d/%d %s~\n", i+1, n, text[i*230:min(len(text), (i+1)*230)])
	}
	set := "ST*271*0001*005010X279A1~\nEB*1*IND*********Y**HC:70551~\nMSG*DECISION PROOF TRANSACTION " + tx.Hex() + "~\n" + msgs.String() + "EB*A*IND~\n"
	answer := "ISA*00*          *00*          *ZZ*HEALTHAGENTS   *ZZ*CLEARINGHOUSE  *261121*1000*^*00501*000004711*0*T*:~\n" +
		"GS*HB*HEALTHAGENTS*CLEARINGHOUSE*20261121*1000*1*X*005010X279A1~\n" + set +
		fmt.Sprintf("SE*%d*0001~\n", strings.Count(set, "~")+1) + "GE*1*1~\nIEA*1*000004711~\n"
	from271x, fromResponse, err := readStatement(write("answer.271", answer), tx)
	require.NoError(t, err)
	assert.Equal(t, from271, fromResponse)
	assert.Equal(t, plain, from271x, "the 271's statement is the statement")
	_, _, err = readStatement(write("answer.271", answer), common.HexToHash("0x01"))
	require.ErrorContains(t, err, "carries no statement of transaction")

	rounded, _, err := readStatement(write("rounded.json", statementOf("2402863899112159000")), common.Hash{})
	require.NoError(t, err)
	require.ErrorIs(t, rounded.Opening.CheckNonce(), statement.ErrNonce)
}
