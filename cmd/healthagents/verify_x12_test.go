package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/internal/testcache/zkkeys"
	"github.com/healthagents/healthagents/verify/verifytest"
	"github.com/healthagents/healthagents/x12"
	"github.com/healthagents/healthagents/x12/x12test"
)

// inquiry270 is a 270 from CLEARINGHOUSE asking payer 60054 whether
// testdata/record.json's member is covered for CPT 70551 today.
func inquiry270(day time.Time, control int) []byte {
	return fmt.Appendf(nil, "ISA*00*          *00*          *ZZ*CLEARINGHOUSE  *ZZ*HEALTHAGENTS   *%s*0900*^*00501*%09d*0*T*:~"+
		"GS*HS*CLEARINGHOUSE*HEALTHAGENTS*%s*0900*%d*X*005010X279A1~ST*270*0001*005010X279A1~BHT*0022*13*R%d*%s*0900~"+
		"HL*1**20*1~NM1*PR*2*PAYER*****PI*60054~HL*2*1*21*1~NM1*1P*2*CLINIC*****XX*1234567893~"+
		"HL*3*2*22*0~NM1*IL*1*DOE*JANE****MI*W123456789~DMG*D8*19680402~EQ**HC:70551~SE*11*0001~GE*1*%d~IEA*1*%09d~",
		day.Format("060102"), control, day.Format("20060102"), control, control, day.Format("20060102"), control, control)
}

var (
	proofTxMSG   = regexp.MustCompile(`MSG\*DECISION PROOF TRANSACTION (0x[0-9a-f]{64})~`)
	proofDataMSG = regexp.MustCompile(`MSG\*DECISION PROOF DATA ([A-Za-z0-9_-]+)~\n?`)
)

// TestVerifyDecisionFrom271Batched is issue 30 for X12: with
// CHAIN_ANCHOR=batch, two 270s answered at once share one recordBatch
// transaction, and each 271 carries its decision's statement and, in one
// MSG*DECISION PROOF DATA, its proof. verify-decision given the 271 alone
// passes every batched check (exit 0, the proof re-run by eth_call); the
// 271 with the other decision's proof in its place, or a proof that is not
// one, is refused on the proof check (exit 1); without the proof's MSG it
// is NOT VERIFIED (exit 3). Both npm parsers accept the 271.
func TestVerifyDecisionFrom271Batched(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	a, err := app.OpenWithOutput(ctx, app.Config{DataDir: zkkeys.DataDir(t), ProofTimeout: testProofTimeout, ChainRPCListen: "127.0.0.1:0",
		ChainAnchor: "batch", ChainBatchSize: 2, ChainBatchWindow: 2 * time.Minute, AdmissionWait: time.Minute},
		slog.New(slog.DiscardHandler), io.Discard)
	require.NoError(t, err)
	defer a.Close()
	<-a.ZK.Warm()
	ts := httptest.NewServer(a.Handler)
	defer ts.Close()
	key, _, err := a.Keys.Create(ctx, apikey.CreateParams{Env: apikey.Dev, Organization: "x12-batch"})
	require.NoError(t, err)
	c, err := client.New(ts.URL, client.WithAPIKey(key), client.WithMaxAttempts(1))
	require.NoError(t, err)
	require.NoError(t, c.PutPatient(ctx, sealedRecord(t, a)))

	// Two 270s at once: a batch of two, so each statement has a path.
	day := time.Now().UTC()
	answers := make([][]byte, 2)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			out, err := c.EligibilityX12(ctx, inquiry270(day, 100+i))
			if assert.NoError(t, err) {
				answers[i] = out
			}
		})
	}
	wg.Wait()
	require.NotNil(t, answers[0])
	require.NotNil(t, answers[1])
	txOf := func(answer []byte) string {
		m := proofTxMSG.FindSubmatch(answer)
		require.NotNil(t, m, "%s", answer)
		return string(m[1])
	}
	tx := txOf(answers[0])
	require.Equal(t, tx, txOf(answers[1]), "one batch anchors both")
	for _, ans := range answers {
		ds, err := x12.Decisions(ans)
		require.NoError(t, err)
		require.True(t, ds[tx].HasProof, "a batched decision's 271 carries its proof:\n%s", ans)
		assert.Contains(t, string(ds[tx].Statement), `"batch":{`)
	}
	t.Run("npm parsers", func(t *testing.T) { x12test.RequireAccepted(t, answers...) })

	registry := a.Ledger.Registry().Hex()
	verify271 := func(t *testing.T, answer []byte) (string, error) {
		file := filepath.Join(t.TempDir(), "answer.271")
		require.NoError(t, os.WriteFile(file, answer, 0o600))
		return runVerify(t, "--rpc", "http://"+a.ChainRPCAddr, "--tx", tx, "--registry", registry, "--statement", file)
	}
	t.Run("ok/the 271 alone", func(t *testing.T) {
		for i, ans := range answers {
			out, err := verify271(t, ans)
			require.NoError(t, err, "answer %d: %s", i, out)
			for _, name := range everyBatchCheck {
				assert.Contains(t, out, "ok   "+name+" ", out)
			}
			assert.Contains(t, out, "(its MSG*DECISION PROOF DATA); it is re-verified for the statement's leaf by eth_call")
			assert.Contains(t, out, "ok   proof         Groth16 verification of the answer's proof")
			assert.Contains(t, out, "path (leaf index")
			assert.Contains(t, out, "verified: all 17 checks passed")
		}
	})
	other := proofDataMSG.FindSubmatch(answers[1])[1]
	t.Run("fail/another decision's proof", func(t *testing.T) {
		swapped := proofDataMSG.ReplaceAll(answers[0], []byte("MSG*DECISION PROOF DATA "+string(other)+"~\n"))
		out, err := verify271(t, swapped)
		require.Error(t, err, out)
		assert.Equal(t, exitRefused, exitCode(err), out)
		assert.Equal(t, []string{"proof"}, verifytest.FailedChecks(out), out)
		assert.Contains(t, out, "FAIL proof         Groth16 verification of the answer's proof")
		assert.Contains(t, out, "REJECTED")
	})
	t.Run("fail/not a proof", func(t *testing.T) {
		// x of A above the field modulus: no point.
		for name, text := range map[string]string{"cut short": string(other[:100]), "not a point": strings.Repeat("_", 42) + string(other[42:])} {
			bad := proofDataMSG.ReplaceAll(answers[0], []byte("MSG*DECISION PROOF DATA "+text+"~\n"))
			out, err := verify271(t, bad)
			require.Error(t, err, "%s: %s", name, out)
			assert.Equal(t, exitRefused, exitCode(err), "%s: %s", name, out)
			assert.Equal(t, []string{"proof"}, verifytest.FailedChecks(out), "%s: %s", name, out)
			assert.Contains(t, out, "FAIL proof         ", name)
			assert.Contains(t, err.Error(), "the proof is refused", name)
		}
	})
	t.Run("fail/a cut 271", func(t *testing.T) {
		// Cut after the proof's MSG: the statement and the proof are whole,
		// but the 271 is not, and it is not read.
		end := proofDataMSG.FindIndex(answers[0])[1]
		out, err := verify271(t, answers[0][:end])
		require.Error(t, err, out)
		assert.Equal(t, exitRefused, exitCode(err), out)
		assert.Equal(t, []string{"statement"}, verifytest.FailedChecks(out), out)
		assert.Contains(t, out, "x12: transaction set 0001 has no SE: the 271 was cut")
	})
	t.Run("unverified/no proof", func(t *testing.T) {
		// The MSG removed, and SE01 counting one segment fewer.
		without := proofDataMSG.ReplaceAll(answers[0], nil)
		without = regexp.MustCompile(`SE\*\d+\*`).ReplaceAllFunc(without, func(se []byte) []byte {
			var n int
			_, _ = fmt.Sscanf(string(se), "SE*%d*", &n)
			return fmt.Appendf(nil, "SE*%d*", n-1)
		})
		out, err := verify271(t, without)
		require.Error(t, err, out)
		assert.Equal(t, exitUnverified, exitCode(err), out)
		assert.Equal(t, []string{"proof"}, verifytest.FailedChecks(out), out)
		assert.Contains(t, out, "FAIL proof         not checked: no proof was given")
		assert.Contains(t, err.Error(), "NOT VERIFIED")
	})

	// `healthagents x12 271` renders a batched JSON answer with the same
	// statement and proof MSG, so its 271 verifies alone too.
	t.Run("x12 271 command", func(t *testing.T) {
		env := sealedRecord(t, a)
		req := healthagents.V1EligibilityRequest{PatientID: env.PatientID, MemberID: "W123456789", ProcedureCode: "PROC001", ProviderNPI: "1234567893"}
		results := make([]*healthagents.V1EligibilityResult, 2)
		var wg sync.WaitGroup
		for i := range results {
			wg.Go(func() {
				res, err := c.VerifyEligibilityV1(ctx, req)
				if assert.NoError(t, err) {
					results[i] = res
				}
			})
		}
		wg.Wait()
		require.NotNil(t, results[0])
		require.NotNil(t, results[0].Statement)
		require.NotNil(t, results[0].Statement.Batch, "a batched answer")
		input, err := json.Marshal(map[string]any{"request": req, "response": results[0]})
		require.NoError(t, err)
		var rendered, stderr bytes.Buffer
		require.NoError(t, x12Command([]string{"271"}, time.Now, bytes.NewReader(input), &rendered, &stderr), stderr.String())
		t.Run("npm parsers", func(t *testing.T) { x12test.RequireAccepted(t, rendered.Bytes()) })
		file := filepath.Join(t.TempDir(), "command.271")
		require.NoError(t, os.WriteFile(file, rendered.Bytes(), 0o600))
		out, err := runVerify(t, "--rpc", "http://"+a.ChainRPCAddr, "--tx", results[0].VerificationProof.BlockchainTx,
			"--registry", registry, "--statement", file)
		require.NoError(t, err, out)
		assert.Contains(t, out, "ok   proof         Groth16 verification of the answer's proof")
		assert.Contains(t, out, "verified: all 17 checks passed")

		// A proof_data the 271 cannot carry: refused, not written without it.
		results[0].VerificationProof.ProofData = "0x01"
		input, err = json.Marshal(map[string]any{"request": req, "response": results[0]})
		require.NoError(t, err)
		rendered.Reset()
		err = x12Command([]string{"271"}, time.Now, bytes.NewReader(input), &rendered, &stderr)
		require.ErrorContains(t, err, "its proof_data cannot be carried")
		assert.Zero(t, rendered.Len(), "nothing written")
	})
}
