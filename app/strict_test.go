package app_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/store"
)

// closedAddr is a loopback address where nothing listens.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// TestStrictSettingsRefuseBeforeCreating: every bad setting, and every
// development part HEALTHAGENTS_ENV=production refuses, stops the start
// with one line naming the variable to set, before anything is created
// under DATA_DIR or printed (no key, database, chain, bootstrap token or log
// line), and secrets in the value are never echoed.
func TestStrictSettingsRefuseBeforeCreating(t *testing.T) {
	t.Parallel()
	fernet, err := cipher.GenerateKey()
	require.NoError(t, err)
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	chainKey := "0x" + hex.EncodeToString(crypto.FromECDSA(key))
	files := t.TempDir()
	garbage := filepath.Join(files, "garbage.pem")
	require.NoError(t, os.WriteFile(garbage, []byte("not a certificate s3cret"), 0o600))
	zkDir := filepath.Join(files, "zk")
	require.NoError(t, os.Mkdir(zkDir, 0o700))
	closed := closedAddr(t)
	// A development node over JSON-RPC: the embedded chain served over
	// HTTP (chain id 1337, as geth --dev).
	devAddr := closedAddr(t)
	dev, err := chain.NewSimulated(t.Context(), chain.WithHTTP(devAddr))
	require.NoError(t, err)
	t.Cleanup(func() { _ = dev.Close() })

	prod := map[string]string{
		"HEALTHAGENTS_ENV": "production", "FERNET_KEY": fernet, "ADMIN_TOKEN": "admin-token-s3cret",
		"CHAIN_ENDPOINT": "http://" + closed, "CHAIN_PRIVATE_KEY": chainKey, "CHAIN_REGISTRY": "0x" + strings.Repeat("22", 20),
		"ZK_KEYS_DIR": zkDir, "TRUSTED_PROXIES": "10.0.0.0/8", "CHAIN_ID": "11155111",
	}
	ownerKey := filepath.Join(files, "owner-real.key")
	require.NoError(t, os.WriteFile(ownerKey, []byte(hex.EncodeToString(crypto.FromECDSA(key))), 0o600))
	with := func(base map[string]string, set ...string) map[string]string {
		out := map[string]string{}
		for k, v := range base {
			out[k] = v
		}
		for i := 0; i+1 < len(set); i += 2 {
			if set[i+1] == "" {
				delete(out, set[i])
			} else {
				out[set[i]] = set[i+1]
			}
		}
		return out
	}
	for _, tt := range []struct {
		name string
		env  map[string]string
		want string // the start of the one-line error, or a part of it
	}{
		{"mysql DATABASE_URL", with(nil, "DATABASE_URL", "mysql://u:s3cret@db/x"), "DATABASE_URL: unsupported scheme"},
		{"postgress typo", with(nil, "DATABASE_URL", "postgress://u:s3cret@db/x"), "DATABASE_URL: unsupported scheme"},
		{"unreachable Redis", with(nil, "REDIS_URL", "redis://:s3cret@"+closed+"/0"), "REDIS_URL: Redis at " + closed + " does not answer"},
		{"missing TLS files", with(nil, "TLS_CERT_FILE", filepath.Join(files, "none.pem"), "TLS_KEY_FILE", filepath.Join(files, "none.key")), "TLS_CERT_FILE, TLS_KEY_FILE: "},
		{"unreadable TLS pair", with(nil, "TLS_CERT_FILE", garbage, "TLS_KEY_FILE", garbage), "TLS_CERT_FILE, TLS_KEY_FILE: "},
		{"HOST with a port", with(nil, "HOST", "0.0.0.0:8000"), "HOST must be"},
		{"HOST as a URL", with(nil, "HOST", "http://example.org"), "HOST must be"},
		{"bad chain key", with(nil, "CHAIN_ENDPOINT", "http://"+closed, "CHAIN_PRIVATE_KEY", "0xs3cret", "CHAIN_REGISTRY", "0x"+strings.Repeat("22", 20)), "CHAIN_PRIVATE_KEY must be"},
		{"short chain key", with(nil, "CHAIN_PRIVATE_KEY", "abcdef"), "CHAIN_PRIVATE_KEY must be"},
		{"bad chain registry", with(nil, "CHAIN_ENDPOINT", "http://"+closed, "CHAIN_PRIVATE_KEY", chainKey, "CHAIN_REGISTRY", "registry"), "CHAIN_REGISTRY must be"},
		{"chain endpoint scheme", with(nil, "CHAIN_ENDPOINT", "ftp://u:s3cret@node"), "CHAIN_ENDPOINT must be"},
		{"chain endpoint without its key", with(nil, "CHAIN_ENDPOINT", "http://"+closed), "CHAIN_ENDPOINT needs CHAIN_PRIVATE_KEY"},
		{"unreachable chain node", with(nil, "CHAIN_ENDPOINT", "http://"+closed+"/s3cret", "CHAIN_PRIVATE_KEY", chainKey, "CHAIN_REGISTRY", "0x"+strings.Repeat("22", 20)), "CHAIN_ENDPOINT: "},
		{"bad Fernet key", with(nil, "FERNET_KEY", "s3cret"), "FERNET_KEY must be"},
		{"bad trusted proxy", with(nil, "TRUSTED_PROXIES", "proxy.internal"), "TRUSTED_PROXIES: "},
		{"missing ZK_KEYS_DIR", with(nil, "ZK_KEYS_DIR", filepath.Join(files, "nowhere")), "ZK_KEYS_DIR "},
		{"missing owner key file", with(nil, "CHAIN_ENDPOINT", "http://"+closed, "CHAIN_PRIVATE_KEY", chainKey, "CHAIN_REGISTRY", "0x"+strings.Repeat("22", 20), "CHAIN_OWNER_KEY_FILE", filepath.Join(files, "owner.key")), "CHAIN_OWNER_KEY_FILE"},
		{"short admin token", with(nil, "ADMIN_TOKEN", "s3cret"), "ADMIN_TOKEN must be at least 16"},
		{"OTLP endpoint not a URL", with(nil, "OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318"), "OTEL_EXPORTER_OTLP_ENDPOINT must be"},
		{"negative admission queue", with(nil, "ADMISSION_QUEUE", "-1"), "ADMISSION_QUEUE must be"},
		{"admission wait without a unit", with(nil, "ADMISSION_WAIT", "5"), "ADMISSION_WAIT must be"},

		{"production/every part real: only the unreachable node stops it", prod, "CHAIN_ENDPOINT: "},
		{"production/generated Fernet key", with(prod, "FERNET_KEY", ""), "HEALTHAGENTS_ENV=production refuses to start with a generated Fernet key (set FERNET_KEY"},
		{"production/embedded chain", with(prod, "CHAIN_ENDPOINT", "", "CHAIN_PRIVATE_KEY", "", "CHAIN_REGISTRY", ""), "HEALTHAGENTS_ENV=production refuses to start with the embedded development chain (set CHAIN_ENDPOINT"},
		{"production/development chain id", with(prod, "CHAIN_ID", "31337"), "HEALTHAGENTS_ENV=production refuses to start with a development chain id 31337"},
		{"production/development node", with(prod, "CHAIN_ENDPOINT", "http://"+devAddr), "HEALTHAGENTS_ENV=production refuses to start with a development chain (CHAIN_ENDPOINT serves chain id 1337"},
		{"production/no CHAIN_ID", with(prod, "CHAIN_ID", ""), "HEALTHAGENTS_ENV=production refuses to start with no CHAIN_ID (set CHAIN_ID"},
		{"production/owner key file", with(prod, "CHAIN_OWNER_KEY_FILE", ownerKey), "HEALTHAGENTS_ENV=production refuses to start with CHAIN_OWNER_KEY_FILE (the registry owner's key does not belong on the server"},
		{"chain id not the node's", with(nil, "CHAIN_ENDPOINT", "http://"+devAddr, "CHAIN_PRIVATE_KEY", chainKey, "CHAIN_REGISTRY", "0x"+strings.Repeat("22", 20), "CHAIN_ID", "11155111"), "CHAIN_ID=11155111 but CHAIN_ENDPOINT serves chain id 1337"},
		{"production/development ZK keys", with(prod, "ZK_KEYS_DIR", ""), "HEALTHAGENTS_ENV=production refuses to start with development ZK keys (set ZK_KEYS_DIR"},
		{"production/plain HTTP", with(prod, "TRUSTED_PROXIES", ""), "HEALTHAGENTS_ENV=production refuses to start with plain HTTP (set TLS_CERT_FILE and TLS_KEY_FILE, or TRUSTED_PROXIES"},
		{"production/no first key", with(prod, "ADMIN_TOKEN", ""), "HEALTHAGENTS_ENV=production refuses to start with no way to create a first key (set ADMIN_TOKEN"},
		{"production/all at once", map[string]string{"HEALTHAGENTS_ENV": "production"}, "HEALTHAGENTS_ENV=production refuses to start with a generated Fernet key (set FERNET_KEY to your own key from a secret store); and the embedded"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "data")
			env := with(tt.env, "DATA_DIR", dir)
			var out, logs bytes.Buffer
			cfg, err := app.ConfigFromEnv(func(k string) string { return env[k] })
			if err == nil {
				var a *app.App
				a, err = app.OpenWithOutput(t.Context(), cfg, slog.New(slog.NewJSONHandler(&logs, nil)), &out)
				if a != nil {
					a.Close()
				}
			}
			require.Error(t, err)
			msg := err.Error()
			assert.Contains(t, msg, tt.want)
			assert.NotContains(t, msg, "\n", "one line")
			assert.NotContains(t, msg, "s3cret", "no secret echoed")
			_, statErr := os.Stat(dir)
			assert.True(t, os.IsNotExist(statErr), "nothing created under DATA_DIR")
			assert.Empty(t, out.String(), "no bootstrap token")
			assert.Empty(t, logs.String(), "nothing logged")
		})
	}
}

// TestProductionFirstKey: without ADMIN_TOKEN, a production start needs a
// key made beforehand (`healthagents keys create` on the database): an
// existing database with no key is refused, one holding a key opens and
// prints no bootstrap token.
func TestProductionFirstKey(t *testing.T) {
	t.Parallel()
	cfg := app.Config{DataDir: keyedDir(t), Production: true, TrustedProxies: []string{"10.0.0.0/8"}}
	app.AllowDevelopmentParts(&cfg)
	ctx := t.Context()
	db, err := app.OpenStore(ctx, cfg) // an empty database, as after a migration
	require.NoError(t, err)
	var out bytes.Buffer
	_, err = app.OpenWithOutput(ctx, cfg, nil, &out)
	require.ErrorContains(t, err, "no way to create a first key (set ADMIN_TOKEN")
	assert.Empty(t, out.String())

	createKey(ctx, t, db)
	require.NoError(t, db.Close())
	a, err := app.OpenWithOutput(ctx, cfg, nil, &out)
	require.NoError(t, err)
	defer a.Close()
	assert.Empty(t, out.String(), "production never prints a bootstrap token")
}

// createKey makes one live key offline, as `healthagents keys create` does.
func createKey(ctx context.Context, t *testing.T, db *store.DB) {
	t.Helper()
	ks, err := store.NewKeyStore(db)
	require.NoError(t, err)
	svc, err := apikey.New(ks)
	require.NoError(t, err)
	_, _, err = svc.Create(ctx, apikey.CreateParams{Env: apikey.Live, Scopes: apikey.AllScopes})
	require.NoError(t, err)
	require.NoError(t, svc.Close(ctx))
}
