package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/credential"
)

// TestIssuerKeygenAndSign: a payer makes a key (written 0600, public key
// printed) and signs coverage terms from stdin; the printed credential
// verifies under that key, and a term changed afterwards does not.
func TestIssuerKeygenAndSign(t *testing.T) {
	t.Parallel()
	env := func(string) string { return "" }
	keyFile := filepath.Join(t.TempDir(), "payer.key")
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"issuer", "keygen", "--out", keyFile}, env, nil, &out, &bytes.Buffer{}))
	fi, err := os.Stat(keyFile)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	pub := strings.TrimPrefix(strings.Split(out.String(), "\n")[0], "public_key=")
	require.Len(t, pub, 64)
	assert.Contains(t, out.String(), "issuer_key_hash=")
	assert.Error(t, run(t.Context(), []string{"issuer", "keygen", "--out", keyFile}, env, nil, &out, &bytes.Buffer{}), "an existing key file is never overwritten")

	terms := `{"member_id":"W123456789","salt":"42","payer_id":"60054","plan_id":"PPO-GOLD","status":"active",
		"start":"2026-01-01","end":"2026-12-31","deductible":1500,"deductible_met":200,"copay":25,
		"expires":"2026-12-31","revocation_nonce":1,"excluded_procedures":["PROC005"],"coverage_overrides":{"PROC002":70}}`
	out.Reset()
	require.NoError(t, run(t.Context(), []string{"issuer", "sign", "--key", keyFile}, env, strings.NewReader(terms), &out, &bytes.Buffer{}))
	var c credential.Credential
	require.NoError(t, json.Unmarshal(out.Bytes(), &c))
	assert.Equal(t, pub, c.Issuer)
	require.NoError(t, c.Check("W123456789", time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)))
	c.Terms.Copay = 0
	assert.ErrorIs(t, c.Verify(), credential.ErrBadSignature)

	assert.Error(t, run(t.Context(), []string{"issuer", "sign", "--key", keyFile}, env, strings.NewReader(`{"member_id":"x","bogus":1}`), &out, &bytes.Buffer{}), "unknown term")
	assert.Error(t, run(t.Context(), []string{"issuer", "sign"}, env, strings.NewReader(terms), &out, &bytes.Buffer{}), "no key")
	var help bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"issuer", "sign", "-h"}, env, nil, &out, &help))
	assert.Contains(t, help.String(), "-key")
}

// TestServeHelp: `serve --help` prints the usage and starts nothing; an
// unknown argument is refused instead of being ignored.
func TestServeHelp(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"serve", "--help"}, func(string) string { return "" }, nil, &out, &bytes.Buffer{}))
	assert.Contains(t, out.String(), "usage: healthagents serve")
	assert.Contains(t, out.String(), "DATABASE_URL")
	err := run(t.Context(), []string{"serve", "--port", "9"}, func(string) string { return "" }, nil, &out, &bytes.Buffer{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "serve takes no arguments")
}

// TestEverySubcommandHelp: -h on every subcommand prints its usage or flags
// and exits cleanly, starting nothing.
func TestEverySubcommandHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"serve", "-h"}, {"seal", "-h"}, {"chain", "-h"}, {"chain", "deploy", "-h"}, {"keys", "-h"},
		{"keys", "create", "-h"}, {"bench", "-h"}, {"participant", "-h"}, {"issuer", "keygen", "-h"}, {"issuer", "sign", "-h"},
		{"ceremony", "-h"}, {"ceremony", "init", "-h"}, {"ceremony", "contribute", "-h"}, {"ceremony", "verify", "-h"}, {"verify-decision", "-h"}, {"help"}} {
		var out, errOut bytes.Buffer
		err := run(t.Context(), args, func(string) string { return "" }, strings.NewReader(""), &out, &errOut)
		require.NoError(t, err, "%v", args)
		assert.NotEmpty(t, out.String()+errOut.String(), "%v prints its usage", args)
	}
}
