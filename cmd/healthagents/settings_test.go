package main

import (
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/app"
)

// TestSettingsAreDocumented: every environment variable the service reads
// has a row in docs/decisions.md's settings table and is named in this
// command's package documentation. The variables are the ones
// app.ConfigFromEnv asks for, recorded, with the chain settings switched on
// so that those read only with CHAIN_ENDPOINT are asked for too.
func TestSettingsAreDocumented(t *testing.T) {
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

	decisions, err := os.ReadFile("../../docs/decisions.md")
	require.NoError(t, err)
	settings := string(decisions)[strings.Index(string(decisions), "## Settings"):]
	pkgDoc, err := os.ReadFile("main.go")
	require.NoError(t, err)
	for name := range asked {
		assert.Regexp(t, `(?m)^\| (?:[A-Z_]+, )*`+name+`[ ,]`, settings, "%s has a row in docs/decisions.md#settings", name)
		assert.Contains(t, string(pkgDoc), name, "%s is named in cmd/healthagents's package doc", name)
	}
}
