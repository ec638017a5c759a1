package app_test

import (
	"crypto/ecdsa"
	"encoding/hex"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/attest"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/internal/testcache/zkkeys"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/trust"
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
			// statement's covered_1 is what differs.
			require.NotNil(t, res.Proof)
			assert.True(t, res.Proof.Verified)
			assert.NotEmpty(t, res.Proof.TxHash)
			_, err = zkp.ParseProof(res.Proof.Circuit, res.Proof.ProofData, res.Proof.PublicInputs)
			require.NoError(t, err)
			require.NotNil(t, res.Proof.Statement)
			var covered string
			for _, f := range res.Proof.Statement.Opening.Fields {
				if f.Name == "covered_1" {
					covered = f.Text
				}
			}
			assert.Equal(t, strconv.FormatBool(tc.covered), covered)
		})
	}
}

// TestStartOnAGovernedRegistry: with CHAIN_ENDPOINT, the registry's owner
// is CHAIN_OWNER. Without the owner's key a start that needs an owner action
// (the service's own issuer key) is refused in one line naming the command;
// with CHAIN_OWNER_KEY_FILE it registers it and goes on. A replica whose
// DATA_DIR/zkp keys differ from the bound verifiers is refused, naming the
// fix, and the registry is left alone: verifiers are immutable. Run against
// the embedded chain served over JSON-RPC, through app.Open.
func TestStartOnAGovernedRegistry(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	shared(t) // its DATA_DIR/zkp keys are replica A's, to save a Groth16 set-up
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	ownerKey, err := crypto.GenerateKey()
	require.NoError(t, err)
	owner := crypto.PubkeyToAddress(ownerKey.PublicKey)
	node, err := chain.NewSimulated(ctx, chain.WithHTTP(addr), chain.WithKey(key), chain.WithFunded(owner))
	require.NoError(t, err)
	t.Cleanup(func() { node.Close() })

	// `healthagents chain deploy` with replica A's keys and the owner's key.
	sys, err := zkp.LoadOrSetup(ctx, filepath.Join(sharedDir, "zkp"))
	require.NoError(t, err)
	verifiers := map[chain.Kind]chain.VerifyingKey{}
	for _, name := range zkp.CircuitNames() {
		vk, err := chain.VerifyingKeyFromGnark(sys.VerifyingKey(name))
		require.NoError(t, err)
		verifiers[chain.Kind(name)] = vk
	}
	addrs, err := chain.Deploy(ctx, "http://"+addr, key, chain.DeployConfig{OwnerKey: ownerKey, Verifiers: verifiers})
	require.NoError(t, err)
	ownerFile := filepath.Join(t.TempDir(), "owner.key")
	require.NoError(t, os.WriteFile(ownerFile, []byte(hex.EncodeToString(crypto.FromECDSA(ownerKey))), 0o600))

	config := func(dataDir string, ownerKeyFile string) app.Config {
		return app.Config{
			DataDir: dataDir, ChainEndpoint: "http://" + addr,
			ChainKey: hex.EncodeToString(crypto.FromECDSA(key)), ChainRegistry: addrs.Registry.Hex(),
			ChainOwner: owner.Hex(), ChainOwnerKeyFile: ownerKeyFile,
		}
	}
	verifier := func() common.Address {
		t.Helper()
		l, err := chain.Dial(ctx, "http://"+addr, chain.DialConfig{Key: hex.EncodeToString(crypto.FromECDSA(key)),
			Registry: addrs.Registry.Hex()})
		require.NoError(t, err)
		defer l.Close()
		v, err := l.Verifier(ctx, attest.KindEligibility)
		require.NoError(t, err)
		return v
	}
	first := verifier()
	require.NotEqual(t, common.Address{}, first)
	// Replica B's DATA_DIR holds keys of its own: another development set-up
	// of the circuits, from the test cache (a first start on an empty
	// DATA_DIR would run that set-up here, a minute of CPU at every run).
	dirA, dirB := t.TempDir(), zkkeys.OtherDataDir(t)
	require.NoError(t, os.CopyFS(filepath.Join(dirA, "zkp"), os.DirFS(filepath.Join(sharedDir, "zkp"))))

	// The owner's key is cold: the service's issuer key is not registered,
	// so start is refused with the command to run.
	_, err = app.OpenWithOutput(ctx, config(dirA, ""), nil, io.Discard)
	require.ErrorIs(t, err, chain.ErrOwnerAction)
	assert.Contains(t, err.Error(), "healthagents chain register-issuer ")
	assert.NotContains(t, err.Error(), "\n")

	// Another owner configured: refused.
	cfg := config(dirA, "")
	cfg.ChainOwner = common.Address{1}.Hex()
	_, err = app.OpenWithOutput(ctx, cfg, nil, io.Discard)
	require.ErrorContains(t, err, "not CHAIN_OWNER")

	// With the owner's key file, it registers it and starts.
	a, err := app.OpenWithOutput(ctx, config(dirA, ownerFile), nil, io.Discard)
	require.NoError(t, err)
	defer a.Close()
	env := sealed(t, a, nil)
	res, err := a.Service.VerifyEligibility(ctx, env, "PROC001")
	require.NoError(t, err)
	require.True(t, res.ZKProofVerified)
	// Now registered, a start without the owner's key goes on.
	again, err := app.OpenWithOutput(ctx, config(dirA, ""), nil, io.Discard)
	require.NoError(t, err)
	require.NoError(t, again.Close())

	// Replica B with its own DATA_DIR, hence its own keys: refused, and
	// there is no replacing.
	_, err = app.OpenWithOutput(ctx, config(dirB, ownerFile), nil, io.Discard)
	require.Error(t, err)
	assert.ErrorIs(t, err, chain.ErrVerifierMismatch)
	assert.Contains(t, err.Error(), "copy DATA_DIR/zkp")
	assert.Equal(t, first, verifier(), "the registry is left alone")
	res, err = a.Service.VerifyEligibility(ctx, env, "PROC001")
	require.NoError(t, err)
	assert.True(t, res.ZKProofVerified, "replica A's proofs still verify")
}

func TestChainSettings(t *testing.T) {
	t.Parallel()
	const endpoint = "http://127.0.0.1:8545"
	for name, tc := range map[string]struct {
		env  map[string]string
		want func(t *testing.T, c app.Config)
		err  string
	}{
		"ok/defaults": {env: map[string]string{}, want: func(t *testing.T, c app.Config) {
			assert.Equal(t, uint64(1), c.ChainConfirmations)
			assert.Equal(t, trust.Self, c.CoverageTrust)
		}},
		"ok/owner and confirmations": {env: map[string]string{"CHAIN_ENDPOINT": endpoint, "CHAIN_OWNER": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "CHAIN_CONFIRMATIONS": "3", "COVERAGE_TRUST": "registered"},
			want: func(t *testing.T, c app.Config) {
				assert.Equal(t, uint64(3), c.ChainConfirmations)
				assert.Equal(t, trust.Registered, c.CoverageTrust)
				assert.Equal(t, "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", c.ChainOwner)
			}},
		"ok/batch settings": {env: map[string]string{"CHAIN_ANCHOR": "batch", "CHAIN_BATCH_SIZE": "4", "CHAIN_BATCH_WINDOW": "1h"},
			want: func(t *testing.T, c app.Config) {
				assert.Equal(t, "batch", c.ChainAnchor)
				assert.Equal(t, 4, c.ChainBatchSize)
				assert.Equal(t, time.Hour, c.ChainBatchWindow)
			}},
		"ok/each": {env: map[string]string{"CHAIN_ENDPOINT": endpoint, "CHAIN_ANCHOR": "each"},
			want: func(t *testing.T, c app.Config) { assert.Equal(t, "each", c.ChainAnchor) }},
		"fail/anchor":                    {env: map[string]string{"CHAIN_ANCHOR": "sometimes"}, err: "CHAIN_ANCHOR must be each or batch"},
		"fail/anchor case":               {env: map[string]string{"CHAIN_ANCHOR": "Batch"}, err: "CHAIN_ANCHOR must be each or batch"},
		"fail/batch size 0":              {env: map[string]string{"CHAIN_BATCH_SIZE": "0"}, err: "CHAIN_BATCH_SIZE must be an integer 1-1024"},
		"fail/batch size 1025":           {env: map[string]string{"CHAIN_BATCH_SIZE": "1025"}, err: "CHAIN_BATCH_SIZE must be an integer 1-1024"},
		"fail/batch size words":          {env: map[string]string{"CHAIN_BATCH_SIZE": "many"}, err: "CHAIN_BATCH_SIZE"},
		"fail/batch window 0":            {env: map[string]string{"CHAIN_BATCH_WINDOW": "0s"}, err: "CHAIN_BATCH_WINDOW must be a Go duration"},
		"fail/batch window 2h":           {env: map[string]string{"CHAIN_BATCH_WINDOW": "2h"}, err: "CHAIN_BATCH_WINDOW"},
		"fail/batch window number":       {env: map[string]string{"CHAIN_BATCH_WINDOW": "200"}, err: "CHAIN_BATCH_WINDOW"},
		"fail/owner without endpoint":    {env: map[string]string{"CHAIN_OWNER": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"}, err: "CHAIN_OWNER needs CHAIN_ENDPOINT"},
		"fail/owner not an address":      {env: map[string]string{"CHAIN_ENDPOINT": endpoint, "CHAIN_OWNER": "alice"}, err: "CHAIN_OWNER must be a hex address"},
		"fail/confirmations":             {env: map[string]string{"CHAIN_CONFIRMATIONS": "0"}, err: "CHAIN_CONFIRMATIONS"},
		"fail/trust":                     {env: map[string]string{"COVERAGE_TRUST": "everyone"}, err: "COVERAGE_TRUST must be self or registered"},
		"fail/replace verifiers is gone": {env: map[string]string{"CHAIN_ENDPOINT": endpoint, "CHAIN_REPLACE_VERIFIERS": "1"}, err: "immutable"},
		"fail/legacy registry is gone": {env: map[string]string{"CHAIN_ENDPOINT": endpoint, "CHAIN_LEGACY_REGISTRY": "0x5FbDB2315678afecb367f032d93F642f64180aa3"},
			err: "CHAIN_LEGACY_REGISTRY is gone"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg, err := app.ConfigFromEnv(func(k string) string { return tc.env[k] })
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			tc.want(t, cfg)
		})
	}
}

// externalNode starts an embedded chain served over JSON-RPC at addr, to
// stand for an external node: key is its submitter, its owner's key is
// written to a file. use fills the chain settings of a Config for endpoint (addr, or a
// proxy in front of it).
func externalNode(t *testing.T, addr string, key *ecdsa.PrivateKey) (*chain.Ledger, func(cfg *app.Config, endpoint string)) {
	t.Helper()
	ownerKey, err := crypto.GenerateKey()
	require.NoError(t, err)
	node, err := chain.NewSimulated(t.Context(), chain.WithHTTP(addr), chain.WithKey(key), chain.WithOwnerKey(ownerKey))
	require.NoError(t, err)
	t.Cleanup(func() { node.Close() })
	ownerFile := filepath.Join(t.TempDir(), "owner.key")
	require.NoError(t, os.WriteFile(ownerFile, []byte(hex.EncodeToString(crypto.FromECDSA(ownerKey))), 0o600))
	return node, func(cfg *app.Config, endpoint string) {
		cfg.ChainEndpoint, cfg.ChainKey = endpoint, hex.EncodeToString(crypto.FromECDSA(key))
		cfg.ChainRegistry = node.Registry().Hex()
		cfg.ChainOwnerKeyFile = ownerFile
	}
}

// TestBatchAnchorRefusesOldRegistry: CHAIN_ANCHOR=batch (and the default
// with CHAIN_ENDPOINT) against a GovernedRegistry deployed before batch
// anchoring (its bytecode from before recordBatch, testdata) refuses the
// start naming CHAIN_ANCHOR; an anchor mode or batch size out of range in a
// library Config refuses naming its setting.
func TestBatchAnchorRefusesOldRegistry(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	shared(t) // its DATA_DIR/zkp keys, to save a Groth16 set-up
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	node, err := chain.NewSimulated(ctx, chain.WithHTTP(addr), chain.WithKey(key))
	require.NoError(t, err)
	t.Cleanup(func() { node.Close() })
	code, err := os.ReadFile("testdata/governed-prebatch.hex")
	require.NoError(t, err)
	bin, err := hex.DecodeString(strings.TrimSpace(string(code)))
	require.NoError(t, err)
	owner := common.BytesToHash(node.Account().Bytes()).Bytes() // constructor(address owner_)
	r, err := node.Transact(ctx, nil, append(bin, owner...), 0)
	require.NoError(t, err)
	old := r.ContractAddress
	ok, err := chain.NewGoverned(node.Client(), old).SupportsBatches(ctx)
	require.NoError(t, err)
	require.False(t, ok, "the old registry has no recordBatch")

	for name, anchor := range map[string]string{"explicit": "batch", "default with CHAIN_ENDPOINT": ""} {
		dir := t.TempDir()
		require.NoError(t, os.CopyFS(filepath.Join(dir, "zkp"), os.DirFS(filepath.Join(sharedDir, "zkp"))))
		_, err = app.OpenWithOutput(ctx, app.Config{DataDir: dir, ChainEndpoint: "http://" + addr,
			ChainKey: hex.EncodeToString(crypto.FromECDSA(key)), ChainRegistry: old.Hex(), ChainAnchor: anchor}, nil, io.Discard)
		require.ErrorContains(t, err, "CHAIN_ANCHOR=batch", name)
		require.ErrorContains(t, err, "predates batch anchoring", name)
	}
	for field, cfg := range map[string]app.Config{
		"CHAIN_ANCHOR":       {ChainAnchor: "sometimes"},
		"CHAIN_BATCH_SIZE":   {ChainBatchSize: 2000},
		"CHAIN_BATCH_WINDOW": {ChainBatchWindow: -time.Second},
	} {
		cfg.DataDir = t.TempDir()
		require.NoError(t, os.CopyFS(filepath.Join(cfg.DataDir, "zkp"), os.DirFS(filepath.Join(sharedDir, "zkp"))))
		_, err := app.OpenWithOutput(ctx, cfg, nil, io.Discard)
		require.ErrorContains(t, err, field)
	}
}
