package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/internal/testcache/zkkeys"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/zkp"
	"github.com/healthagents/healthagents/zkp/statement"
)

// TestVerifyDecisionShowsUnidentified: a prescription for a patient on a
// medication the service cannot identify is answered valid:false (the root
// family) and proven; its statement passes verify-decision (the verify
// package) on the embedded chain, and its opening lists the entry and
// states the drug not valid.
func TestVerifyDecisionShowsUnidentified(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	a, err := app.OpenWithOutput(ctx, app.Config{DataDir: zkkeys.DataDir(t), ProofTimeout: testProofTimeout, ChainRPCListen: "127.0.0.1:0"}, slog.New(slog.DiscardHandler), io.Discard)
	require.NoError(t, err)
	defer a.Close()
	<-a.ZK.Warm()

	r := &record.Record{PatientID: "PT-U", Medications: []string{"99999999", "855332"}, Coverage: &record.Coverage{
		MemberID: "W1", Status: "active", Start: "2026-01-01", End: "2099-12-31"}}
	plain, err := r.Marshal()
	require.NoError(t, err)
	env, err := cipher.Seal(r.PatientID, plain, a.Keyring)
	require.NoError(t, err)
	res, err := a.Service.ValidatePrescription(ctx, &env, "6809") // metformin: no finding with warfarin
	require.NoError(t, err)
	assert.False(t, res.Valid)
	assert.Contains(t, res.Reason, `medication "99999999"`)
	require.NotNil(t, res.Proof)
	st := res.Proof.Statement
	require.NotNil(t, st)
	assert.Equal(t, zkp.CircuitPrescriptionV4, st.Opening.Circuit)
	fields := st.Opening.Fields
	u := fields[len(fields)-2]
	assert.Equal(t, "unidentified", u.Name)
	assert.Equal(t, `["medication: 99999999"]`, u.Text)
	assert.Equal(t, statement.EntriesValue(u.Text).String(), u.Value, "the text is bound to the value")
	assert.Equal(t, "interaction=none contraindication=none valid=false", fields[8].Text, "metformin: no finding, yet not valid")
	assert.Equal(t, "medication_1", fields[45].Name)
	assert.Equal(t, "11289", fields[45].Text, "warfarin, from its SCD code, is a checked medication")

	b, err := json.Marshal(st)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "statement.json")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	rpc, registry := "http://"+a.ChainRPCAddr, a.Ledger.Registry().Hex()
	out, err := runVerify(t, "--rpc", rpc, "--registry", registry, "--tx", res.Proof.TxHash, "--statement", path)
	require.NoError(t, err, out)
	for _, name := range []string{"receipt", "registry", "event", "inputs", "verifier", "proof", "issuer", "statement", "revocation"} {
		assert.Contains(t, out, "ok   "+name, out)
	}
	if os.Getenv("HEALTHAGENTS_TEST_VERIFYJS") != "" {
		cmd := exec.CommandContext(ctx, "node", "verify.mjs", "--rpc", rpc, "--registry", registry, "--tx", res.Proof.TxHash, "--statement", path)
		cmd.Dir = "../../examples/verify-js"
		js, err := cmd.CombinedOutput()
		require.NoError(t, err, "verify.mjs: %s", js)
		assert.NotContains(t, string(js), "FAIL")
	}
}
