package app_test

import (
	"errors"
	"flag"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/app"
)

var update = flag.Bool("update", false, "rewrite the settings table of docs/decisions.md from app.Settings")

// TestUnknownSettingRefused: each misspelt name of issue 27, and a random
// name with each prefix, is refused with one line naming the nearest
// setting; the test suites' variables, Kubernetes service links and Kubo's
// IPFS_PATH pass, and so do variables that are not ours.
func TestUnknownSettingRefused(t *testing.T) {
	t.Parallel()
	for set, nearest := range map[string]string{
		"FEDERATED_EPSILLON=8":       "FEDERATED_EPSILON",
		"FEDERATED_ROUNS=3":          "FEDERATED_ROUNDS",
		"CHAIN_ENDPIONT=http://x":    "CHAIN_ENDPOINT",
		"ZK_KEY_DIR=/k":              "ZK_KEYS_DIR",
		"COVERAGE_TRUSTED=self":      "COVERAGE_TRUST",
		"REDIS_ULR=redis://x":        "REDIS_URL",
		"IPFS_ENDPOIT=http://x":      "IPFS_ENDPOINT",
		"ADMISSION_QUEU=3":           "ADMISSION_QUEUE",
		"ENVELOPE_TTLL=1h":           "ENVELOPE_TTL",
		"HEALTHAGENTS_EVN=prod":      "HEALTHAGENTS_ENV",
		"MAX_CONECTIONS=9":           "MAX_CONNECTIONS",
		"LOG_LEVELS=debug":           "LOG_LEVEL",
		"TRUSTED_PROXY=10.0.0.1":     "TRUSTED_PROXIES",
		"HEALTHAGENTS_FROB=1":        "",
		"FEDERATED_QWXZ=1":           "",
		"CHAIN_QWXZ=1":               "",
		"ZK_QWXZ=1":                  "",
		"COVERAGE_QWXZ=1":            "",
		"WEBHOOK_QWXZ=1":             "",
		"REDIS_QWXZ=1":               "",
		"IPFS_QWXZ=1":                "",
		"ADMISSION_QWXZ=1":           "",
		"ENVELOPE_QWXZ=1":            "",
		"FERNET_QWXZ=1":              "",
		"DATABASE_QWXZ=1":            "",
		"ADMIN_QWXZ=1":               "",
		"TLS_QWXZ=1":                 "",
		"HEALTHAGENTS_URL_TYPO=http": "HEALTHAGENTS_URL",
	} {
		name, _, _ := strings.Cut(set, "=")
		err := app.CheckEnviron([]string{"PATH=/usr/bin", set, "HOME=/root"})
		require.Error(t, err, set)
		var u *app.UnknownSettingError
		require.True(t, errors.As(err, &u), set)
		assert.Equal(t, name, u.Name)
		if nearest != "" {
			assert.Equal(t, nearest, u.Nearest, set)
		}
		assert.Equal(t, name+": unknown setting; did you mean "+u.Nearest+"?", err.Error())
		assert.NotContains(t, err.Error(), "\n")
	}
	// A random name with each prefix names a real setting, preferring its
	// own first word on a tie.
	err := app.CheckEnviron([]string{"CHAIN_QWXZ=1"})
	var u *app.UnknownSettingError
	require.True(t, errors.As(err, &u))
	assert.True(t, strings.HasPrefix(u.Nearest, "CHAIN_"), u.Nearest)

	// Two at once: one line each, sorted.
	err = app.CheckEnviron([]string{"ZK_KEY_DIR=/k", "FEDERATED_EPSILLON=8"})
	assert.Equal(t, "FEDERATED_EPSILLON: unknown setting; did you mean FEDERATED_EPSILON?\nZK_KEY_DIR: unknown setting; did you mean ZK_KEYS_DIR?", err.Error())

	assert.NoError(t, app.CheckEnviron([]string{
		"PATH=/usr/bin", "HOME=/root", "HOSTNAME=api-0", "TERM=xterm", "POD_IP=10.0.0.5",
		"FEDERATED_EPSILON=8", "HEALTHAGENTS_ENV=production", "DATA_DIR=/d",
		"HEALTHAGENTS_TEST_POSTGRES=postgres://x", "HEALTHAGENTS_TEST_ANYTHING=1",
		"HEALTHAGENTS_SERVICE_HOST=10.0.0.11", "HEALTHAGENTS_SERVICE_PORT=8000", "HEALTHAGENTS_SERVICE_PORT_HTTP=8000",
		"HEALTHAGENTS_PORT=tcp://10.0.0.11:8000", "HEALTHAGENTS_PORT_8000_TCP=tcp://10.0.0.11:8000",
		"HEALTHAGENTS_PORT_8000_TCP_PROTO=tcp", "HEALTHAGENTS_PORT_8000_TCP_PORT=8000", "HEALTHAGENTS_PORT_8000_TCP_ADDR=10.0.0.11",
		"REDIS_SERVICE_HOST=10.0.0.12", "REDIS_PORT=tcp://10.0.0.12:6379",
		"IPFS_PATH=/tmp/ipfs", "OTEL_EXPORTER_OTLP_HEADERS=x=y", "GOFLAGS=-mod=mod",
	}))
	// HEALTHAGENTS_PORT that is not a service link is a typo of PORT's kind.
	assert.Error(t, app.CheckEnviron([]string{"HEALTHAGENTS_PORT=8000"}))
}

// TestSettingsReadByConfig: the settings ConfigFromEnv asks for are exactly
// the table's service rows (recorded with the chain settings switched on,
// so that those read only with CHAIN_ENDPOINT are asked for too).
func TestSettingsReadByConfig(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	asked := map[string]bool{}
	record := func(set map[string]string) func(string) string {
		return func(k string) string {
			mu.Lock()
			defer mu.Unlock()
			asked[k] = true
			return set[k]
		}
	}
	_, _ = app.ConfigFromEnv(record(nil))
	_, _ = app.ConfigFromEnv(record(map[string]string{
		"CHAIN_ENDPOINT":    "http://127.0.0.1:8545",
		"CHAIN_PRIVATE_KEY": "0x" + strings.Repeat("11", 32),
		"CHAIN_REGISTRY":    "0x" + strings.Repeat("22", 20),
	}))
	require.Contains(t, asked, "CHAIN_OWNER", "the chain settings were read")
	var service []string
	seen := map[string]bool{}
	for _, s := range app.Settings() {
		assert.False(t, seen[s.Name], "%s has one row", s.Name)
		seen[s.Name] = true
		assert.Regexp(t, `^[A-Z][A-Z0-9_]*$`, s.Name)
		assert.NotEmpty(t, s.Default, s.Name)
		assert.NotEmpty(t, s.Usage, s.Name)
		assert.NotEmpty(t, s.Read, s.Name)
		assert.NotContains(t, s.Doc+s.Usage+s.Default, "|", "%s: a pipe would break the docs' table", s.Name)
		if slices.Contains(s.Read, app.ReadService) {
			service = append(service, s.Name)
		}
	}
	var got []string
	for k := range asked {
		got = append(got, k)
	}
	assert.ElementsMatch(t, service, got, "ConfigFromEnv reads the table's service settings, no more, no fewer")
}

// TestSettingsDocs: the settings table of docs/decisions.md is the one
// SettingsMarkdown renders from the table (-update rewrites it).
func TestSettingsDocs(t *testing.T) {
	t.Parallel()
	const path = "../docs/decisions.md"
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	re := regexp.MustCompile(`(?s)(<!-- settings:begin -->\n).*?(<!-- settings:end -->)`)
	require.True(t, re.Match(raw), "docs/decisions.md has the settings markers")
	want := []byte(strings.Replace(string(raw), string(re.Find(raw)), "<!-- settings:begin -->\n"+app.SettingsMarkdown()+"<!-- settings:end -->", 1))
	if *update {
		require.NoError(t, os.WriteFile(path, want, 0o644))
		return
	}
	assert.Equal(t, string(want), string(raw), "docs/decisions.md's settings table is stale: go test ./app -run TestSettingsDocs -update")
}
