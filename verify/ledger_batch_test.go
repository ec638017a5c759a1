package verify_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/verify"
	"github.com/healthagents/healthagents/verify/verifytest"
	"github.com/healthagents/healthagents/zkp/statement"
)

// TestDecisionsAnchoredByTheLedger: statements the Ledger itself anchors
// in batch mode (chain.WithAnchor(AnchorBatch), as the service's
// CHAIN_ANCHOR=batch) — eligibility and prescription statements submitted
// at once, closed into one batch — are each verified by package verify and
// by the JavaScript verifier from the receipt's path and the proof, as a
// third party given the answer would.
func TestDecisionsAnchoredByTheLedger(t *testing.T) {
	const n = 5
	f := verifytest.New(t, chain.WithAnchor(chain.AnchorBatch, n, 5*time.Second))
	ctx := t.Context()
	sts := make([]statement.Statement, n)
	for i := range sts {
		if i%2 == 0 {
			sts[i] = verifytest.EligibilityStatement(t, 40)
		} else {
			sts[i] = verifytest.PrescriptionStatement(t, 41)
		}
		f.RegisterIssuer(t, sts[i].Opening.IssuerKeyHash)
	}
	answers := make([]verifytest.Answer, n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, st := range sts {
		proof, inputs := verifytest.Prove(t, st.Opening.IssuerKeyHash, st.Digest, st.Opening.CircuitID)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := f.Ledger.Submit(ctx, chain.Kind(st.Opening.Circuit), proof, inputs)
			if errs[i] = err; err != nil {
				return
			}
			if r.Batch == nil {
				errs[i] = errors.New("the receipt holds no batch")
				return
			}
			st.Batch = r.Batch
			answers[i] = verifytest.Answer{Tx: r.TxHash, Statement: st, ProofData: verifytest.ProofData(proof), PublicInputs: verifytest.PublicInputs(inputs)}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "statement %d", i)
	}
	for _, a := range answers[1:] {
		require.Equal(t, answers[0].Tx, a.Tx, "one batch, one transaction")
	}
	seen := map[int]bool{}
	for i, a := range answers {
		p, err := verify.ParseProof(a.ProofData, a.PublicInputs)
		require.NoError(t, err)
		r, err := verify.Decision(ctx, f.RPC, a.Tx, verify.Options{Registry: f.Gov.Address(), Statement: &a.Statement, Proof: p})
		require.NoError(t, err)
		assert.True(t, r.OK(), "statement %d: %s", i, r.String())
		assert.Equal(t, everyBatchCheck, checkNames(r))
		assert.EqualValues(t, n, r.Batch.Size)
		seen[a.Statement.Batch.Index] = true
	}
	assert.Len(t, seen, n, "every statement has its own leaf")

	t.Run("js", func(t *testing.T) {
		for i, a := range answers {
			b, err := json.Marshal(a.Response())
			require.NoError(t, err)
			path := filepath.Join(t.TempDir(), "decision.json")
			require.NoError(t, os.WriteFile(path, b, 0o600))
			out, code := runJS(t, "--rpc", f.Endpoint, "--registry", f.Gov.Address().Hex(), "--tx", a.Tx.Hex(), "--statement", path)
			assert.Equal(t, 0, code, "statement %d: %s", i, out)
			assert.Contains(t, out, "verified: all 17 checks passed")
		}
	})
}
