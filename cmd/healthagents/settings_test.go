package main

import (
	"bytes"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/cmd/healthagents/internal/clitest"
)

// TestUnknownSettingStopsCommands: a misspelt setting stops serve and the
// subcommands that read settings before they open anything, with the one
// line naming the nearest setting; the offline subcommands run.
func TestUnknownSettingStopsCommands(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{nil, {"serve"}, {"keys", "list"}, {"seal", "x"}, {"bench"}, {"chain", "deploy"},
		{"participant", "--server", "http://127.0.0.1:1"}, {"x12", "270"}} {
		dir := t.TempDir()
		err := start(t.Context(), args, []string{"DATA_DIR=" + dir, "FEDERATED_EPSILLON=8", "HOST=127.0.0.1", "PORT=0"}, nil, io.Discard, io.Discard)
		require.Error(t, err, "%v", args)
		assert.Equal(t, "FEDERATED_EPSILLON: unknown setting; did you mean FEDERATED_EPSILON?", err.Error(), "%v", args)
		entries, _ := os.ReadDir(dir)
		assert.Empty(t, entries, "%v created nothing", args)
	}
	var out bytes.Buffer
	require.NoError(t, start(t.Context(), []string{"version"}, []string{"FEDERATED_EPSILLON=8"}, nil, &out, io.Discard))
	require.NoError(t, start(t.Context(), []string{"serve", "-h"}, []string{"FEDERATED_EPSILLON=8"}, nil, &out, io.Discard))
	// The environment reaches the command: a known setting is read.
	err := start(t.Context(), []string{"keys", "list"}, []string{"PORT=99999"}, nil, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "PORT must be a port number")
}

// TestServeHelpListsSettings: `serve -h` lists every setting of the table
// with its default.
func TestServeHelpListsSettings(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"serve", "-h"}, env(nil), nil, &out, io.Discard))
	for _, s := range app.Settings() {
		assert.Contains(t, out.String(), "  "+s.Name+" (default: ", s.Name)
	}
}

// TestSettingsReadAreInTable: every variable this command's code reads by
// name (getenv("X") in a non-test file) is a setting of the table, listed
// as read by a subcommand or by the service.
func TestSettingsReadAreInTable(t *testing.T) {
	t.Parallel()
	known := map[string]bool{}
	for _, s := range app.Settings() {
		known[s.Name] = true
	}
	read := regexp.MustCompile(`[gG]etenv\("([A-Z0-9_]+)"\)`)
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range read.FindAllStringSubmatch(string(src), -1) {
			n++
			assert.True(t, known[m[1]], "%s reads %s, which app.Settings does not list", f, m[1])
		}
	}
	assert.Greater(t, n, 5, "sanity: the reads were found")
}

// TestTestVariablesAreReserved: every HEALTHAGENTS_ variable named in the
// repository's tests (but those of the check itself) and test helpers is a setting or under
// app.TestPrefix, which the start check lets through: a shell that exports
// them for `go test` can run the binary.
func TestTestVariablesAreReserved(t *testing.T) {
	t.Parallel()
	known := map[string]bool{}
	for _, s := range app.Settings() {
		known[s.Name] = true
	}
	name := regexp.MustCompile(`"(HEALTHAGENTS_[A-Z0-9_]+)`)
	n := 0
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if slices.Contains([]string{"../../app/settings_table_test.go", "../../cmd/healthagents/settings_test.go"}, filepath.ToSlash(path)) {
			return nil // the tests of the check name wrong variables on purpose
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || !(strings.HasSuffix(path, "_test.go") || strings.Contains(path, "test"+string(filepath.Separator))) {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range name.FindAllStringSubmatch(string(src), -1) {
			n++
			v := strings.TrimSuffix(m[1], "_")
			assert.True(t, known[v] || strings.HasPrefix(v+"_", app.TestPrefix), "%s names %s: a test-only variable goes under %s", path, v, app.TestPrefix)
		}
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, n, 5, "sanity: the names were found")
}

// TestHarnessVariables: the variables clitest gives the processes it
// starts are the ones the command reads, under app.TestPrefix; a
// production start ignores them, a bad proof deadline is refused.
func TestHarnessVariables(t *testing.T) {
	t.Parallel()
	assert.Equal(t, testCacheEnv, clitest.CacheEnv)
	assert.Equal(t, testProofTimeoutEnv, clitest.ProofTimeoutEnv)
	assert.Equal(t, testWebhookLeaseEnv, clitest.WebhookLeaseEnv)
	assert.Equal(t, testWebhookTimeoutEnv, clitest.WebhookTimeoutEnv)
	assert.Equal(t, testFederatedLeaseEnv, clitest.FederatedLeaseEnv)
	for _, v := range harnessVariables {
		assert.True(t, strings.HasPrefix(v, app.TestPrefix), v)
	}
	given := map[string]string{testCacheEnv: t.TempDir(), testProofTimeoutEnv: "90s", testWebhookLeaseEnv: "25s",
		testWebhookTimeoutEnv: "2s", testFederatedLeaseEnv: "4s"}
	var cfg app.Config
	require.NoError(t, harnessed(&cfg, func(k string) string { return given[k] }, slog.New(slog.DiscardHandler)))
	assert.NotNil(t, cfg.ZKTables)
	assert.Equal(t, 90*time.Second, cfg.ProofTimeout)
	assert.Equal(t, 25*time.Second, cfg.WebhookLease)
	assert.Equal(t, 2*time.Second, cfg.WebhookTimeout)
	assert.Equal(t, 4*time.Second, cfg.FederatedLease)

	prod := app.Config{Production: true}
	require.NoError(t, harnessed(&prod, func(k string) string { return given[k] }, slog.New(slog.DiscardHandler)))
	assert.Nil(t, prod.ZKTables, "production ignores the test cache")
	assert.Zero(t, prod.ProofTimeout)
	assert.Zero(t, prod.WebhookLease)
	assert.Zero(t, prod.WebhookTimeout)
	assert.Zero(t, prod.FederatedLease)

	for _, v := range []string{testProofTimeoutEnv, testWebhookLeaseEnv, testWebhookTimeoutEnv, testFederatedLeaseEnv} {
		bad := maps.Clone(given)
		bad[v] = "soon"
		err := harnessed(&cfg, func(k string) string { return bad[k] }, slog.New(slog.DiscardHandler))
		require.ErrorContains(t, err, v)
	}
}
