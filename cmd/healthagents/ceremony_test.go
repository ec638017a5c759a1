package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	csbn254 "github.com/consensys/gnark/constraint/bn254"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/zkp"
	"github.com/healthagents/healthagents/zkp/ceremony"
)

// cubeCircuit: X³ + X + 5 = Y, repeated Rounds times over fresh
// multiplications, a small stand-in for the service's circuits.
type cubeCircuit struct {
	Rounds int `gnark:"-"`
	X      frontend.Variable
	Y      frontend.Variable `gnark:",public"`
}

func (c *cubeCircuit) Define(api frontend.API) error {
	for range c.Rounds {
		x3 := api.Mul(c.X, c.X, c.X)
		api.AssertIsEqual(c.Y, api.Add(x3, c.X, 5))
	}
	return nil
}

// smallCeremony runs the ceremony command for two small circuits; its
// install writes the keys (gnark files) and ceremony.json, as the binary's
// does for zkp's circuits.
func smallCeremony(t *testing.T) (ceremonyDeps, map[string]*csbn254.R1CS) {
	t.Helper()
	ccs := map[string]*csbn254.R1CS{}
	var circuits []ceremony.Circuit
	for name, rounds := range map[string]int{"alpha": 3, "beta": 9} {
		c, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, &cubeCircuit{Rounds: rounds})
		require.NoError(t, err)
		ccs[name] = c.(*csbn254.R1CS)
	}
	for _, name := range []string{"alpha", "beta"} {
		circuits = append(circuits, ceremony.Circuit{Name: name, CCS: ccs[name]})
	}
	install := func(_ context.Context, dir string, keys []ceremony.Keys, m *ceremony.Manifest) error {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		for _, k := range keys {
			for ext, v := range map[string]io.WriterTo{".pk": k.PK, ".vk": k.VK} {
				var b bytes.Buffer
				_, err := v.WriteTo(&b)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(dir, k.Name+ext), b.Bytes(), 0o644))
			}
		}
		b, err := json.Marshal(m)
		require.NoError(t, err)
		return os.WriteFile(filepath.Join(dir, ceremony.ManifestFile), b, 0o644)
	}
	return ceremonyDeps{circuits: func() ([]ceremony.Circuit, error) { return circuits, nil }, install: install}, ccs
}

// cli runs `healthagents ceremony ARGS` and returns its output.
func cli(t *testing.T, deps ceremonyDeps, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := ceremonyCommand(t.Context(), deps, args, &out, io.Discard)
	return out.String(), err
}

var hashLine = regexp.MustCompile(`(?m)^contribution hash \(publish it; .*\): ([0-9a-f]{64})$`)

// threeParties runs a whole ceremony through the command, three
// participants per phase, each with only the latest file, and returns the
// ceremony directory, the keys directory and the contribution hashes.
func threeParties(t *testing.T, deps ceremonyDeps) (dir, keys string, hashes []string) {
	t.Helper()
	dir, keys = filepath.Join(t.TempDir(), "ceremony"), filepath.Join(t.TempDir(), "keys")
	_, err := cli(t, deps, "init", "--out", dir)
	require.NoError(t, err)
	contribute := func(kind string, i int) {
		// A participant's offline machine: only the latest file, copied in.
		own := t.TempDir()
		in := filepath.Join(own, transcriptName(kind, i))
		b, err := os.ReadFile(filepath.Join(dir, transcriptName(kind, i)))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(in, b, 0o644))
		out, err := cli(t, deps, "contribute", "--in", in)
		require.NoError(t, err)
		m := hashLine.FindStringSubmatch(out)
		require.NotNil(t, m, out)
		b, err = os.ReadFile(filepath.Join(own, transcriptName(kind, i+1)))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, transcriptName(kind, i+1)), b, 0o644))
		hashes = append(hashes, m[1])
	}
	for i := range 3 {
		contribute(ceremony.KindPhase1, i)
	}
	const beacon1 = "6a1f0c3b0e44d7c0b8fb6e2fd7a7a2a90e1bfbca9ac4e9c2f1d3c5b7a9e0f213"
	_, err = cli(t, deps, "init-phase2", "--dir", dir, "--beacon", beacon1)
	require.NoError(t, err)
	for i := range 3 {
		contribute(ceremony.KindPhase2, i)
	}
	out, err := cli(t, deps, "finalize", "--dir", dir, "--beacon", "0x9d3e51c2aa08b7f46f0de3c1f2b4a6d8e0c2f4a6b8d0e2f4a6c8e0f2a4c6e8f0", "--out", keys)
	require.NoError(t, err)
	assert.Contains(t, out, "ZK_KEYS_DIR="+keys)
	return dir, keys, hashes
}

// TestCeremonyCommand: three participants per phase contribute from
// files alone; verify prints one line per file and passes; the keys prove
// and verify; ceremony.json records every contribution hash printed; and
// one changed contribution makes verify exit non-zero naming that file.
func TestCeremonyCommand(t *testing.T) {
	t.Parallel()
	deps, ccs := smallCeremony(t)
	dir, keys, hashes := threeParties(t, deps)

	out, err := cli(t, deps, "verify", "--dir", dir, "--keys", keys)
	require.NoError(t, err, out)
	t.Log("\n" + out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// phase1 #0-#3, srs, the beacon reminder, phase2 #0-#3, one per circuit's keys.
	require.Len(t, lines, 4+1+1+4+2, out)
	for i, want := range []string{"phase1 #0 ", "phase1 #1 ", "phase1 #2 ", "phase1 #3 ", "srs #3 ", "srs beacon ",
		"phase2 #0 ", "phase2 #1 ", "phase2 #2 ", "phase2 #3 ", "keys alpha: ", "keys beta: "} {
		assert.True(t, strings.HasPrefix(lines[i], want), "line %d: %q", i, lines[i])
	}
	for _, h := range hashes {
		assert.Contains(t, out, h)
	}

	m, err := ceremony.ReadManifest(keys)
	require.NoError(t, err)
	assert.Equal(t, hashes[:3], m.Phase1[1:])
	assert.Equal(t, hashes[3:], m.Phase2[1:])
	for _, c := range m.Circuits {
		pk, vk := groth16.NewProvingKey(ecc.BN254), groth16.NewVerifyingKey(ecc.BN254)
		for path, v := range map[string]io.ReaderFrom{filepath.Join(keys, c.Name+".pk"): pk, filepath.Join(keys, c.Name+".vk"): vk} {
			f, err := os.Open(path)
			require.NoError(t, err)
			_, err = v.ReadFrom(f)
			f.Close()
			require.NoError(t, err)
		}
		w, err := frontend.NewWitness(&cubeCircuit{X: 2, Y: 15}, ecc.BN254.ScalarField())
		require.NoError(t, err)
		proof, err := groth16.Prove(ccs[c.Name], pk, w)
		require.NoError(t, err)
		pub, err := w.Public()
		require.NoError(t, err)
		assert.NoError(t, groth16.Verify(proof, vk, pub), c.Name)
	}

	// Verify a chain given as files, as a participant checks the chain
	// before contributing.
	out, err = cli(t, deps, "verify", "--in", filepath.Join(dir, "phase1-0000.bin"), filepath.Join(dir, "phase1-0001.bin"), filepath.Join(dir, "phase1-0002.bin"))
	require.NoError(t, err, out)
	assert.Len(t, strings.Split(strings.TrimSpace(out), "\n"), 3)
	// The documented optional check of the file a participant received
	// before the first contribution: the initial state alone passes, saying
	// so (docs/ceremony.md), for either phase.
	out, err = cli(t, deps, "verify", "--in", filepath.Join(dir, "phase1-0000.bin"))
	require.NoError(t, err, out)
	assert.Regexp(t, `(?s)^phase1 #0 [0-9a-f]{64} .*\nphase1: the initial state only, well formed; no contribution yet\n$`, out)
	out, err = cli(t, deps, "verify", "--in", filepath.Join(dir, "phase2-0000.bin"))
	require.NoError(t, err, out)
	assert.Contains(t, out, "phase2: the initial state only, well formed; no contribution yet")
	// Phase-2 files find the srs.bin beside them.
	out, err = cli(t, deps, "verify", filepath.Join(dir, "phase2-0000.bin"), filepath.Join(dir, "phase2-0001.bin"))
	require.NoError(t, err, out)
	assert.Len(t, strings.Split(strings.TrimSpace(out), "\n"), 2)

	// Two points of phase1 #3 (the last, so the chain's framing still
	// holds) exchanged, [τ¹]₁ and [τ²]₁: both still valid points, so only
	// the contribution's proof can tell. verify fails at #3, after #0-#2
	// checked out.
	p3 := filepath.Join(dir, "phase1-0003.bin")
	b, err := os.ReadFile(p3)
	require.NoError(t, err)
	f3, err := ceremony.Parse(b)
	require.NoError(t, err)
	at := len(b) - int(f3.Sections[0].Bytes) + 3*96 + 8 + 64 // three update proofs, N, [β]₂
	tau1 := append([]byte(nil), b[at:at+32]...)
	copy(b[at:at+32], b[at+32:at+64])
	copy(b[at+32:at+64], tau1)
	bad := filepath.Join(t.TempDir(), "phase1-0003.bin")
	require.NoError(t, os.WriteFile(bad, b, 0o644))
	ins := []string{"verify"}
	for i := range 3 {
		ins = append(ins, "--in", filepath.Join(dir, transcriptName(ceremony.KindPhase1, i)))
	}
	out, err = cli(t, deps, append(ins, "--in", bad)...)
	require.Error(t, err)
	t.Log("\n" + out + err.Error())
	lines = strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 4, out)
	assert.Contains(t, lines[2], "contribution verified")
	assert.Regexp(t, `^phase1 #3 [0-9a-f]{64} FAILED: failed to verify contribution to τ`, lines[3])

	// The same change in the ceremony directory: verify --dir fails too, and
	// the keys no longer match.
	require.NoError(t, os.WriteFile(p3, b, 0o644))
	_, err = cli(t, deps, "verify", "--dir", dir)
	assert.Error(t, err)

	// Usage errors.
	for _, args := range [][]string{{}, {"init"}, {"contribute"}, {"finalize", "--dir", dir, "--out", keys}, {"init-phase2", "--dir", dir, "--beacon", "abcd"}, {"verify"}, {"nope"}} {
		_, err := cli(t, deps, args...)
		assert.Error(t, err, "%v", args)
	}
}

// TestCeremonyRealCircuits runs a three-party ceremony on the service's own
// circuits through the command, starts the service on its keys
// (ZK_KEYS_DIR) and checks that a decision's proof verifies on the
// embedded chain. Phase 1 over the real circuits' domain takes minutes on
// two cores, so it runs only with HEALTHAGENTS_TEST_CEREMONY_REAL=1 (and
// never with -short); TestCeremonyCommand runs the same steps on small
// circuits in the normal suite.
func TestCeremonyRealCircuits(t *testing.T) {
	if testing.Short() || os.Getenv("HEALTHAGENTS_TEST_CEREMONY_REAL") != "1" {
		t.Skip("set HEALTHAGENTS_TEST_CEREMONY_REAL=1 to run a ceremony on the real circuits (minutes)")
	}
	deps := zkpCeremony()
	dir, keys, _ := threeParties(t, deps)
	out, err := cli(t, deps, "verify", "--dir", dir, "--keys", keys)
	require.NoError(t, err, out)
	// Publishable as they are: every file readable by all, no lock left.
	entries, err := os.ReadDir(keys)
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.HasPrefix(e.Name(), "."), "%s left in the published keys", e.Name())
		fi, err := e.Info()
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), e.Name())
	}

	var log bytes.Buffer
	a, err := app.OpenWithOutput(t.Context(), app.Config{DataDir: t.TempDir(), ProofTimeout: testProofTimeout, ZKKeysDir: keys}, slog.New(slog.NewJSONHandler(&log, nil)), io.Discard)
	require.NoError(t, err)
	defer a.Close()
	assert.Equal(t, zkp.SetupCeremony, a.ZKSetup())
	assert.Contains(t, log.String(), `"zk_setup":"ceremony"`)
	res, err := a.Service.VerifyEligibility(t.Context(), sealedRecord(t, a), "PROC002")
	require.NoError(t, err)
	assert.True(t, res.ZKProofVerified, "the ceremony's keys prove a decision that the chain's verifier accepts")
}

// sealedRecord seals testdata/record.json for a.
func sealedRecord(t *testing.T, a *app.App) *cipher.Envelope {
	t.Helper()
	b, err := os.ReadFile("../../testdata/record.json")
	require.NoError(t, err)
	r, err := record.Parse(b)
	require.NoError(t, err)
	plain, err := r.Marshal()
	require.NoError(t, err)
	env, err := cipher.Seal(r.PatientID, plain, a.Keyring)
	require.NoError(t, err)
	return &env
}

// TestChainDeployTakesZKKeysDir: `chain deploy` deploys the verifiers for
// ZK_KEYS_DIR's keys when it is set, checked as the service checks them: a
// directory that is not a ceremony's output is refused, naming it.
func TestChainDeployTakesZKKeysDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := deployKeys(t.Context(), func(k string) string { return map[string]string{"ZK_KEYS_DIR": dir}[k] }, t.TempDir())
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "ZK_KEYS_DIR "+dir+": "), err.Error())
}
