package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/verify/verifytest"
	"github.com/healthagents/healthagents/zkp/statement"
)

// verificationRow finds the -verify table's row of endpoint in bench's
// output and returns its columns: decisions, verified, refused, not
// checked.
func verificationRow(t *testing.T, out, endpoint string) []string {
	t.Helper()
	row := tableRow(t, out, "\nverification (-verify): ", endpoint)
	require.Len(t, row, 4, "%s's verification row", endpoint)
	for _, n := range row {
		require.Regexp(t, regexp.MustCompile(`^\d+$`), n, "%s's verification row", endpoint)
	}
	return row
}

// rootAnswerJSON is a decision as the root family answers a decision: blockchain_tx and
// statement beside the spec's fields, proof_data and public_inputs when the
// statement names a batch.
func rootAnswerJSON(t *testing.T, tx string, st statement.Statement, proofData string, publicInputs []string) []byte {
	t.Helper()
	resp := map[string]any{"eligible": true, "coverage_pct": 80, "zk_proof_verified": true, "blockchain_tx": tx,
		"statement": st, "issuer": "self"}
	if proofData != "" {
		resp["proof_data"] = proofData
	}
	if publicInputs != nil {
		resp["public_inputs"] = publicInputs
	}
	b, err := json.Marshal(resp)
	require.NoError(t, err)
	return b
}

func batchAnswer(t *testing.T, a verifytest.Answer) []byte {
	return rootAnswerJSON(t, a.Tx.Hex(), a.Statement, a.ProofData, a.PublicInputs)
}

// TestBenchVerifyCheckAnswer: bench -verify's check of one answer says what
// verify-decision says of the same answer given as --statement: honest
// single-record and batched answers verify; every doctored decision of
// issues 25 and 30 (verifytest.Cases, verifytest.BatchCases) is refused
// naming exactly the checks verify-decision names; a batched answer
// without its proof is not verified (exit status 3); an answer whose
// statement or proof does not parse is refused as "statement" or "proof",
// and a blockchain_tx that is not a hash cannot be checked. No error
// quotes a value of the answer.
func TestBenchVerifyCheckAnswer(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := verifytest.New(t)
	registry := f.Gov.Address()
	st, tx := f.Decision(t)
	honest, batch := f.Batch(t)

	for i, a := range batch {
		failed, err := checkAnswer(ctx, f.RPC, registry, a.Tx.Hex(), batchAnswer(t, a))
		require.NoError(t, err, "leaf %d: %v", i, failed)
	}
	failed, err := checkAnswer(ctx, f.RPC, registry, strings.ToLower(tx.Hex()), rootAnswerJSON(t, tx.Hex(), st, "", nil))
	require.NoError(t, err, "single-record decision: %v", failed)

	for _, c := range f.Cases(t, st, tx) {
		t.Run("fail/"+c.Name, func(t *testing.T) {
			failed, err := checkAnswer(ctx, f.RPC, c.Registry, c.Tx.Hex(), rootAnswerJSON(t, c.Tx.Hex(), c.Statement, "", nil))
			require.Error(t, err)
			assert.Equal(t, exitRefused, exitStatus(err), err)
			assert.Equal(t, c.Failed, failed)
		})
	}
	for _, c := range f.BatchCases(t, honest, batch) {
		t.Run("fail/"+c.Name, func(t *testing.T) {
			failed, err := checkAnswer(ctx, f.RPC, c.Registry, c.Answer.Tx.Hex(), batchAnswer(t, c.Answer))
			require.Error(t, err)
			assert.Equal(t, exitRefused, exitStatus(err), err)
			assert.Equal(t, c.Failed, failed)
		})
	}

	for _, tc := range []struct {
		name   string
		tx     string
		answer []byte
		code   int
		failed []string
	}{
		{"unverified/batched without its proof", honest.Tx.Hex(), rootAnswerJSON(t, honest.Tx.Hex(), honest.Statement, "", nil), exitUnverified, []string{"proof"}},
		{"fail/proof_data not a proof", honest.Tx.Hex(), rootAnswerJSON(t, honest.Tx.Hex(), honest.Statement, honest.ProofData[:100], nil), exitRefused, []string{"proof"}},
		{"fail/no statement", tx.Hex(), []byte(`{"eligible":true,"blockchain_tx":"` + tx.Hex() + `"}`), exitRefused, []string{"statement"}},
		{"fail/a key the statement does not have", tx.Hex(), []byte(`{"blockchain_tx":"` + tx.Hex() + `","statement":{"digest":"1","opening":{"circuit":"x","fields":[]},"verdict":"approved 60054"}}`), exitRefused, []string{"statement"}},
		{"cannot run/not a hash", "0x12", rootAnswerJSON(t, "0x12", st, "", nil), exitCannotRun, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			failed, err := checkAnswer(ctx, f.RPC, registry, tc.tx, tc.answer)
			require.Error(t, err)
			assert.Equal(t, tc.code, exitStatus(err), err)
			assert.Equal(t, tc.failed, failed)
			assert.NotContains(t, err.Error(), "60054", "no value of the answer in the error")
		})
	}
}

// TestBenchVerifyFailsClosed: bench -verify against a server whose
// eligibility answers are real batched decisions (verifytest's, on a
// simulated chain) but whose fourth answer has its statement's eligible
// value changed: the run prints 5 verified and 1 refused, names that
// answer's transaction and failed checks (and nothing of its statement),
// and returns an error. -verify without -rpc is refused before any load.
func TestBenchVerifyFailsClosed(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := verifytest.New(t)
	honest, batch := f.Batch(t)
	var doctored verifytest.Answer
	for _, c := range f.BatchCases(t, honest, batch) {
		if c.Name == "batch: value" {
			doctored = c.Answer
		}
	}
	require.NotNil(t, doctored.Statement.Opening.Fields, "verifytest.BatchCases has no \"batch: value\"")

	var next, statusCalls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/status" {
			statusCalls.Add(1)
			_, _ = w.Write([]byte(`{"status":"operational","blockchain":{"endpoint":"embedded","network":"simulated","registry":"` + f.Gov.Address().Hex() + `"}}`))
			return
		}
		i := next.Add(1) - 1
		a := batch[i%int64(len(batch))]
		if i == 3 {
			a = doctored
		}
		_, _ = w.Write(batchAnswer(t, a))
	}))
	defer srv.Close()
	settings := env(map[string]string{"DATA_DIR": t.TempDir()})

	var out bytes.Buffer
	err := run(ctx, []string{"bench", "-url", srv.URL, "-key", "k", "-endpoints", "verify-eligibility", "-n", "6", "-c", "1",
		"-rpc", f.Endpoint, "-verify", "-record", "../../testdata/record.json"}, settings, nil, &out, io.Discard)
	t.Log(out.String())
	require.Error(t, err)
	assert.Equal(t, []string{"6", "5", "1", "0"}, verificationRow(t, out.String(), "verify-eligibility"))
	assert.Contains(t, out.String(), "--registry "+f.Gov.Address().Hex()+" (GET /status)")
	line := "first decision not verified: transaction " + strings.ToLower(doctored.Tx.Hex()) + " refused, failed checks: digest, statement, text"
	assert.Contains(t, out.String(), "verify-eligibility: "+line)
	assert.Contains(t, err.Error(), "bench: -verify: verify-eligibility: 1 of 6 decisions refused, 0 not checked")
	assert.Contains(t, err.Error(), "refused, failed checks: digest, statement, text")
	for _, fd := range doctored.Statement.Opening.Fields {
		if fd.Text != "" && len(fd.Text) > 3 {
			assert.NotContains(t, out.String()+err.Error(), fd.Text, "field %s's text printed", fd.Name)
		}
	}
	assert.Equal(t, int64(1), statusCalls.Load(), "the registry read once, before the run")

	// The honest answers alone (requests 6..10): every decision verifies,
	// no error.
	out.Reset()
	require.NoError(t, run(ctx, []string{"bench", "-url", srv.URL, "-key", "k", "-endpoints", "verify-eligibility", "-n", "5", "-c", "2",
		"-rpc", f.Endpoint, "-verify", "-record", "../../testdata/record.json"}, settings, nil, &out, io.Discard))
	assert.Equal(t, []string{"5", "5", "0", "0"}, verificationRow(t, out.String(), "verify-eligibility"))
	assert.Contains(t, out.String(), "verify-eligibility: all 5 decisions verified")

	// -verify needs the chain.
	calls := next.Load()
	err = run(ctx, []string{"bench", "-url", srv.URL, "-key", "k", "-endpoints", "verify-eligibility", "-n", "1", "-verify",
		"-record", "../../testdata/record.json"}, settings, nil, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-verify checks every decision on the chain: it needs -rpc")
	assert.Equal(t, calls, next.Load(), "no request sent")
}
