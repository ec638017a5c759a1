package zkp

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func copyKeyDir(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(testKeyDir)
	require.NoError(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(testKeyDir, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dst, e.Name()), b, 0o600))
	}
	return dst
}

func vkBytes(t *testing.T, sys *System, name string) []byte {
	t.Helper()
	var b bytes.Buffer
	_, err := sys.VerifyingKey(name).WriteTo(&b)
	require.NoError(t, err)
	return b.Bytes()
}

func TestKeysReusedAcrossRestart(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	reloaded, err := LoadOrSetup(ctx, testKeyDir)
	require.NoError(t, err)
	for _, name := range CircuitNames() {
		assert.Equal(t, vkBytes(t, testSys, name), vkBytes(t, reloaded, name), name)
		// The same key bytes in one process: decoded and self-checked once,
		// one set of prover tables.
		assert.Same(t, testSys.circuits[name], reloaded.circuits[name], name)
		info, ok := reloaded.Info(name)
		require.True(t, ok)
		assert.Equal(t, OriginSetup, info.Origin)
	}

	// A proof from the reloaded proving key verifies with the original
	// verifying key, and the other way round.
	p, err := NewProver(reloaded, testTimeout)
	require.NoError(t, err)
	proof, err := proveEligible(ctx, p)
	require.NoError(t, err)
	require.NoError(t, newTestVerifier(t).Verify(ctx, proof))

	orig, err := proveEligible(ctx, newTestProver(t))
	require.NoError(t, err)
	v, err := NewVerifier(reloaded)
	require.NoError(t, err)
	require.NoError(t, v.Verify(ctx, orig))
}

func TestLoadRejectsMismatchedKeys(t *testing.T) {
	t.Parallel()
	editManifest := func(t *testing.T, dir, name string, edit func(*manifest)) {
		path := filepath.Join(dir, name+".json")
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		var m manifest
		require.NoError(t, json.Unmarshal(raw, &m))
		edit(&m)
		raw, err = json.Marshal(&m)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, raw, 0o600))
	}
	for name, spoil := range map[string]func(t *testing.T, dir string){
		"fail/circuit changed": func(t *testing.T, dir string) {
			editManifest(t, dir, CircuitEligibilityV3, func(m *manifest) { m.CCSSHA256 = "00" + m.CCSSHA256[2:] })
		},
		"fail/proving key corrupt": func(t *testing.T, dir string) {
			path := filepath.Join(dir, CircuitEligibilityV3+".pk")
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			b[len(b)/2] ^= 1
			require.NoError(t, os.WriteFile(path, b, 0o600))
		},
		"fail/verifying key of another circuit": func(t *testing.T, dir string) {
			b, err := os.ReadFile(filepath.Join(dir, CircuitPrescriptionV4+".vk"))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, CircuitEligibilityV3+".vk"), b, 0o600))
			var m manifest
			raw, err := os.ReadFile(filepath.Join(dir, CircuitPrescriptionV4+".json"))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(raw, &m))
			editManifest(t, dir, CircuitEligibilityV3, func(e *manifest) { e.VKSHA256 = m.VKSHA256 })
		},
		"fail/manifest garbage": func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, CircuitPrescriptionV4+".json"), []byte("{"), 0o600))
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := copyKeyDir(t)
			spoil(t, dir)
			_, err := LoadOrSetup(t.Context(), dir)
			require.ErrorIs(t, err, ErrKeyMismatch)
		})
	}
}

func TestSetupReplacesIncompletePair(t *testing.T) {
	t.Parallel()
	dir := copyKeyDir(t)
	// A crash after the keys but before the manifest: the pair is redone
	// (the smaller circuit's, to keep the set-up short).
	require.NoError(t, os.Remove(filepath.Join(dir, CircuitEligibilityV3+".json")))
	sys, err := LoadOrSetup(t.Context(), dir)
	require.NoError(t, err)
	assert.Equal(t, vkBytes(t, testSys, CircuitPrescriptionV4), vkBytes(t, sys, CircuitPrescriptionV4))
	assert.NotEqual(t, vkBytes(t, testSys, CircuitEligibilityV3), vkBytes(t, sys, CircuitEligibilityV3))
	assert.NotSame(t, testSys.circuits[CircuitEligibilityV3], sys.circuits[CircuitEligibilityV3], "new keys are checked on their own")
	_, err = os.Stat(filepath.Join(dir, CircuitEligibilityV3+".json"))
	require.NoError(t, err)
	leftovers, err := filepath.Glob(filepath.Join(dir, "*.tmp-*"))
	require.NoError(t, err)
	assert.Empty(t, leftovers)
}

// TestCeremony takes keys from gnark's mpcsetup for both circuits (the
// seeded ceremonyFixture), loads them with LoadCeremony and installs them
// with Save. -short skips it: the ceremony costs minutes of CPU the first
// time (then it comes from the test cache).
func TestCeremony(t *testing.T) {
	if testing.Short() {
		t.Skip("mpcsetup ceremony over the real circuits")
	}
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	files := ceremonyFixture(t, dir)

	sys, err := LoadCeremony(ctx, files)
	require.NoError(t, err)
	p, err := NewProver(sys, testTimeout)
	require.NoError(t, err)
	v, err := NewVerifier(sys)
	require.NoError(t, err)
	proof, err := proveEligible(ctx, p)
	require.NoError(t, err)
	require.NoError(t, v.Verify(ctx, proof))
	// Keys of different set-ups do not mix.
	require.ErrorIs(t, newTestVerifier(t).Verify(ctx, proof), ErrInvalidProof)
	// The fixed-base prover works from ceremony keys too.
	ck, err := sys.circuit(CircuitEligibilityV3)
	require.NoError(t, err)
	readyGroth16(t, ck)
	proof, err = proveEligible(ctx, p)
	require.NoError(t, err)
	require.NoError(t, v.Verify(ctx, proof))

	// Installed under a key directory, LoadOrSetup reuses them.
	keyDir := filepath.Join(dir, "keys")
	require.NoError(t, sys.Save(ctx, keyDir))
	again, err := LoadOrSetup(ctx, keyDir)
	require.NoError(t, err)
	info, _ := again.Info(CircuitEligibilityV3)
	assert.Equal(t, OriginCeremony, info.Origin)
	assert.Equal(t, vkBytes(t, sys, CircuitPrescriptionV4), vkBytes(t, again, CircuitPrescriptionV4))

	// A ceremony verifying key beside another set-up's proving key fails
	// the self-check at load.
	mixed := files[CircuitEligibilityV3]
	mixed.ProvingKey = filepath.Join(testKeyDir, CircuitEligibilityV3+".pk")
	_, err = LoadCeremony(ctx, map[string]CeremonyKeys{CircuitEligibilityV3: mixed, CircuitPrescriptionV4: files[CircuitPrescriptionV4]})
	require.ErrorIs(t, err, ErrKeyMismatch)

	// Every circuit needs keys.
	_, err = LoadCeremony(ctx, map[string]CeremonyKeys{CircuitEligibilityV3: files[CircuitEligibilityV3]})
	require.Error(t, err)
}
