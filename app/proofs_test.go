package app_test

import (
	"encoding/hex"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/attest"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/zkp"
)

// TestPrescriptionZKVerifiedOnlyWhenCovered: a prescription's
// zk_proof_verified ("eligibility verified cryptographically") is true for a
// verified proof that the plan covers the drug, and false for a proof,
// verified on chain just the same, that it does not (a lapsed policy). The
// prescription stays valid either way: validity is the clinical checks'.
func TestPrescriptionZKVerifiedOnlyWhenCovered(t *testing.T) {
	a := shared(t)
	for name, tc := range map[string]struct {
		coverage func(*record.Coverage)
		covered  bool
	}{
		"ok/active policy":                  {func(*record.Coverage) {}, true},
		"fail/lapsed policy (window ended)": {func(c *record.Coverage) { c.Start, c.End = "2020-01-01", "2020-12-31" }, false},
		"fail/inactive policy":              {func(c *record.Coverage) { c.Status = record.StatusInactive }, false},
		"fail/drug excluded by the plan":    {func(c *record.Coverage) { c.ExcludedProcedures = []string{"6809"} }, false},
	} {
		t.Run(name, func(t *testing.T) {
			env := sealed(t, a, func(r *record.Record) {
				r.Medications = nil
				tc.coverage(r.Coverage)
			})
			res, err := a.Service.ValidatePrescription(t.Context(), env, "6809")
			require.NoError(t, err)
			assert.True(t, res.Valid, "validity follows the clinical checks")
			assert.Equal(t, tc.covered, res.ZKProofVerified)

			// Either way the statement was proven and verified on chain; the
			// proof's Covered output is what differs.
			require.NotNil(t, res.Proof)
			assert.True(t, res.Proof.Verified)
			assert.NotEmpty(t, res.Proof.TxHash)
			proof, err := zkp.ParseProof(res.Proof.Circuit, res.Proof.ProofData, res.Proof.PublicInputs)
			require.NoError(t, err)
			covered, err := proof.Prescription()
			require.NoError(t, err)
			assert.Equal(t, tc.covered, covered)
			last := res.Proof.PublicInputs[len(res.Proof.PublicInputs)-1]
			assert.True(t, strings.HasSuffix(last, map[bool]string{true: "1", false: "0"}[tc.covered]), last)
		})
	}
}

// TestStartRefusesOtherVerifyingKeys: with CHAIN_ENDPOINT, a start whose
// DATA_DIR/zkp keys differ from the ones registered (another replica's) is
// refused, naming the fix, and leaves the registry alone; the first start
// registers, a start with the same keys goes on; CHAIN_REPLACE_VERIFIERS=1
// replaces them, which is what breaks the other replica's proofs. Run
// against the embedded chain served over JSON-RPC, through app.Open (whose
// clean-up of a failed start this also covers).
func TestStartRefusesOtherVerifyingKeys(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	shared(t) // its DATA_DIR/zkp keys are replica A's, to save a Groth16 set-up
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	node, err := chain.NewSimulated(ctx, chain.WithHTTP(addr), chain.WithKey(key))
	require.NoError(t, err)
	t.Cleanup(func() { node.Close() })
	verifier := func() common.Address {
		t.Helper()
		v, err := node.Verifier(ctx, attest.KindEligibility)
		require.NoError(t, err)
		return v
	}
	require.Equal(t, common.Address{}, verifier(), "a fresh registry has no verifier")

	config := func(dataDir string) app.Config {
		return app.Config{
			DataDir: dataDir, ChainEndpoint: "http://" + addr,
			ChainKey: hex.EncodeToString(crypto.FromECDSA(key)), ChainRegistry: node.Registry().Hex(),
		}
	}
	dirA, dirB := t.TempDir(), t.TempDir()
	require.NoError(t, os.CopyFS(filepath.Join(dirA, "zkp"), os.DirFS(filepath.Join(sharedDir, "zkp"))))

	// First start: nothing registered yet, so replica A registers its keys.
	a, err := app.OpenWithOutput(ctx, config(dirA), nil, io.Discard)
	require.NoError(t, err)
	defer a.Close()
	first := verifier()
	require.NotEqual(t, common.Address{}, first)
	env := sealed(t, a, nil)
	res, err := a.Service.VerifyEligibility(ctx, env, "PROC001")
	require.NoError(t, err)
	require.True(t, res.ZKProofVerified)

	// Same keys again (a restart, or a replica sharing DATA_DIR/zkp): fine.
	again, err := app.OpenWithOutput(ctx, config(dirA), nil, io.Discard)
	require.NoError(t, err)
	require.NoError(t, again.Close())
	assert.Equal(t, first, verifier())

	// Replica B with its own DATA_DIR, hence its own keys: refused.
	_, err = app.OpenWithOutput(ctx, config(dirB), nil, io.Discard)
	require.Error(t, err)
	assert.ErrorIs(t, err, chain.ErrVerifierMismatch)
	assert.Contains(t, err.Error(), "copy DATA_DIR/zkp")
	assert.Contains(t, err.Error(), "CHAIN_REPLACE_VERIFIERS=1")
	assert.Equal(t, first, verifier(), "the registry is left alone")
	res, err = a.Service.VerifyEligibility(ctx, env, "PROC001")
	require.NoError(t, err)
	assert.True(t, res.ZKProofVerified, "replica A's proofs still verify")

	// Asked for explicitly, B replaces the verifiers, and A's proofs fail.
	cfg := config(dirB)
	cfg.ChainReplaceVerifiers = true
	b, err := app.OpenWithOutput(ctx, cfg, nil, io.Discard)
	require.NoError(t, err)
	defer b.Close()
	assert.NotEqual(t, first, verifier())
	res, err = b.Service.VerifyEligibility(ctx, sealed(t, b, nil), "PROC001")
	require.NoError(t, err)
	assert.True(t, res.ZKProofVerified)
	_, err = a.Service.VerifyEligibility(ctx, env, "PROC001")
	require.Error(t, err)
	assert.Equal(t, "Eligibility check failed: ZK proof verification failed", err.Error())
}

func TestReplaceVerifiersSetting(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		env  map[string]string
		want bool
		err  bool
	}{
		"ok/unset":         {env: map[string]string{"CHAIN_ENDPOINT": "http://127.0.0.1:8545"}},
		"ok/0":             {env: map[string]string{"CHAIN_ENDPOINT": "http://127.0.0.1:8545", "CHAIN_REPLACE_VERIFIERS": "0"}},
		"ok/1":             {env: map[string]string{"CHAIN_ENDPOINT": "http://127.0.0.1:8545", "CHAIN_REPLACE_VERIFIERS": "1"}, want: true},
		"fail/yes":         {env: map[string]string{"CHAIN_ENDPOINT": "http://127.0.0.1:8545", "CHAIN_REPLACE_VERIFIERS": "yes"}, err: true},
		"fail/no endpoint": {env: map[string]string{"CHAIN_REPLACE_VERIFIERS": "1"}, err: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg, err := app.ConfigFromEnv(func(k string) string { return tc.env[k] })
			if tc.err {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "CHAIN_REPLACE_VERIFIERS")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, cfg.ChainReplaceVerifiers)
		})
	}
}
