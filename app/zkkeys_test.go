package app_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/internal/testcache"
	"github.com/healthagents/healthagents/zkp"
	"github.com/healthagents/healthagents/zkp/ceremony"
)

// keysDir writes a ZK_KEYS_DIR holding the key pairs under src (a
// DATA_DIR/zkp) in the layout `healthagents ceremony finalize` writes: the
// same files, each manifest recording origin "ceremony", and a
// ceremony.json describing them. It stands in for a ceremony's output
// (which takes minutes on the real circuits: see
// cmd/healthagents TestCeremonyRealCircuits) to test how the service loads
// and checks such a directory; edit, when given, changes a circuit's
// files first.
func keysDir(t *testing.T, src string, edit func(dir string)) string {
	t.Helper()
	dir := t.TempDir()
	m := ceremony.Manifest{Format: ceremony.ManifestFormat, Power: 11,
		Phase1: []string{strings.Repeat("a", 64), strings.Repeat("b", 64)}, Phase1Beacon: "00",
		Phase2: []string{strings.Repeat("c", 64), strings.Repeat("d", 64)}, Phase2Beacon: "00"}
	for _, name := range zkp.CircuitNames() {
		for _, ext := range []string{".pk", ".vk"} {
			b, err := os.ReadFile(filepath.Join(src, name+ext))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, name+ext), b, 0o600))
		}
		var man map[string]any
		b, err := os.ReadFile(filepath.Join(src, name+".json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &man))
		man["origin"] = zkp.OriginCeremony
		writeJSON(t, filepath.Join(dir, name+".json"), man)
		m.Circuits = append(m.Circuits, ceremony.CircuitKey{Name: name, CCSSHA256: man["ccs_sha256"].(string), VKSHA256: man["vk_sha256"].(string)})
	}
	writeJSON(t, filepath.Join(dir, ceremony.ManifestFile), m)
	if edit != nil {
		edit(dir)
	}
	return dir
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o600))
}

// editJSON rewrites one field of a JSON file.
func editJSON(t *testing.T, path string, f func(map[string]any)) {
	t.Helper()
	var v map[string]any
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &v))
	f(v)
	writeJSON(t, path, v)
}

// TestZKKeysDirLoaded: with ZK_KEYS_DIR the service proves with those keys
// (decisions verified on the embedded chain), and /status, App.ZKSetup and
// the start-up log say "ceremony".
func TestZKKeysDirLoaded(t *testing.T) {
	shared(t)
	keys := keysDir(t, filepath.Join(sharedDir, "zkp"), nil)
	// The prover tables from the test cache, checked against the proving
	// key when read (zkp.WithTableStore), rather than built again.
	tables, err := testcache.Open()
	require.NoError(t, err)
	var log bytes.Buffer
	a, err := app.OpenWithOutput(t.Context(), app.Config{DataDir: t.TempDir(), ZKKeysDir: keys, ZKTables: tables},
		slog.New(slog.NewJSONHandler(&log, nil)), io.Discard)
	require.NoError(t, err)
	defer a.Close()
	assert.Equal(t, zkp.SetupCeremony, a.ZKSetup())
	assert.Contains(t, log.String(), `"zk_setup":"ceremony"`)
	assert.NotContains(t, log.String(), "single-party")

	res, err := a.Service.VerifyEligibility(t.Context(), sealed(t, a, nil), "PROC002")
	require.NoError(t, err)
	assert.True(t, res.ZKProofVerified)

	ts := httptest.NewServer(a.Handler)
	defer ts.Close()
	status, body := getJSON(t, ts.URL+"/status")
	require.Equal(t, 200, status)
	assert.Equal(t, "ceremony", body["zk_setup"])
}

// TestDevelopmentKeysLogged: without ZK_KEYS_DIR the start-up log says
// zk_setup development, with a warning that says who can forge proofs.
func TestDevelopmentKeysLogged(t *testing.T) {
	var log bytes.Buffer
	a, err := app.OpenWithOutput(t.Context(), app.Config{DataDir: keyedDir(t)}, slog.New(slog.NewJSONHandler(&log, nil)), io.Discard)
	require.NoError(t, err)
	defer a.Close()
	assert.Equal(t, zkp.SetupDevelopment, a.ZKSetup())
	assert.Contains(t, log.String(), `"zk_setup":"development"`)
	assert.Contains(t, log.String(), "can forge proofs")
}

// TestZKKeysDirRefused: keys that do not fit the compiled circuits, or are
// not a ceremony's, or not the ones ceremony.json records, refuse the start
// with a one-line error naming ZK_KEYS_DIR.
func TestZKKeysDirRefused(t *testing.T) {
	shared(t)
	src := filepath.Join(sharedDir, "zkp")
	elig, presc := zkp.CircuitNames()[0], zkp.CircuitNames()[1]
	copyFile := func(dir, from, to string) {
		b, err := os.ReadFile(filepath.Join(dir, from))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, to), b, 0o600))
	}
	for _, c := range []struct {
		name string
		dir  string
		want string
	}{
		{"fail/keys for another circuit", keysDir(t, src, func(dir string) {
			// The prescription circuit's pair and manifest, under the
			// eligibility circuit's names.
			for _, ext := range []string{".pk", ".vk", ".json"} {
				copyFile(dir, presc+ext, elig+ext)
			}
			editJSON(t, filepath.Join(dir, elig+".json"), func(m map[string]any) { m["circuit"] = elig })
		}), "keys for another circuit"},
		{"fail/verifying key of another circuit, manifest edited to match", keysDir(t, src, func(dir string) {
			copyFile(dir, presc+".vk", elig+".vk")
			var m map[string]any
			b, _ := os.ReadFile(filepath.Join(src, presc+".json"))
			require.NoError(t, json.Unmarshal(b, &m))
			editJSON(t, filepath.Join(dir, elig+".json"), func(e map[string]any) { e["vk_sha256"] = m["vk_sha256"] })
		}), elig},
		{"fail/development keys", keysDir(t, src, func(dir string) {
			for _, name := range zkp.CircuitNames() {
				editJSON(t, filepath.Join(dir, name+".json"), func(m map[string]any) { m["origin"] = zkp.OriginSetup })
			}
		}), "development keys"},
		{"fail/no ceremony.json", keysDir(t, src, func(dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, ceremony.ManifestFile)))
		}), "ceremony finalize"},
		{"fail/ceremony.json records another verifying key", keysDir(t, src, func(dir string) {
			editJSON(t, filepath.Join(dir, ceremony.ManifestFile), func(m map[string]any) {
				m["circuits"].([]any)[1].(map[string]any)["vk_sha256"] = strings.Repeat("0", 64)
			})
		}), presc},
		{"fail/a circuit missing", keysDir(t, src, func(dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, presc+".json")))
		}), presc},
		{"fail/keys of the previous prescription circuit", keysDir(t, src, func(dir string) {
			// A ceremony's output from before issue 30: prescription-v3's
			// files, refused by the name of the circuit this binary proves.
			for _, ext := range []string{".pk", ".vk", ".json"} {
				require.NoError(t, os.Rename(filepath.Join(dir, presc+ext), filepath.Join(dir, "prescription-v3"+ext)))
			}
		}), "no keys for the prescription-v4 circuit"},
		{"fail/keys of the previous eligibility circuit", keysDir(t, src, func(dir string) {
			for _, ext := range []string{".pk", ".vk", ".json"} {
				require.NoError(t, os.Rename(filepath.Join(dir, elig+ext), filepath.Join(dir, "eligibility-v2"+ext)))
			}
		}), "no keys for the eligibility-v3 circuit"},
		{"fail/no such directory", filepath.Join(t.TempDir(), "missing"), "missing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, err := app.OpenWithOutput(t.Context(), app.Config{DataDir: t.TempDir(), ZKKeysDir: c.dir}, slog.New(slog.DiscardHandler), io.Discard)
			if !assert.Error(t, err) {
				a.Close()
				return
			}
			msg := err.Error()
			t.Log(msg)
			assert.True(t, strings.HasPrefix(msg, "ZK_KEYS_DIR "+c.dir+": "), msg)
			assert.Contains(t, msg, c.want)
			assert.NotContains(t, msg, "\n", "one line")
		})
	}
}

// TestZKKeysDirChainMismatch: a DATA_DIR whose embedded chain holds a
// verifier for another key than ZK_KEYS_DIR's refuses the start with an
// error naming ZK_KEYS_DIR and the verifier.
func TestZKKeysDirChainMismatch(t *testing.T) {
	a := shared(t)
	dir := t.TempDir()
	// The chain under DATA_DIR/chain registered the prescription circuit's
	// key for the eligibility circuit: another key than ZK_KEYS_DIR's.
	ledger, err := chain.NewSimulated(t.Context(), chain.WithDataDir(filepath.Join(dir, "chain")))
	require.NoError(t, err)
	other, err := chain.VerifyingKeyFromGnark(a.ZK.VerifyingKey(zkp.CircuitNames()[1]))
	require.NoError(t, err)
	require.NoError(t, ledger.Register(t.Context(), chain.Kind(zkp.CircuitNames()[0]), other))
	require.NoError(t, ledger.Close())

	keys := keysDir(t, filepath.Join(sharedDir, "zkp"), nil)
	_, err = app.OpenWithOutput(t.Context(), app.Config{DataDir: dir, ZKKeysDir: keys}, slog.New(slog.DiscardHandler), io.Discard)
	require.Error(t, err)
	t.Log(err)
	assert.Contains(t, err.Error(), "does not hold the verifying key of ZK_KEYS_DIR "+keys)
	assert.Contains(t, err.Error(), "chain_vk_hash")
}
