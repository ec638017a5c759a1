package app_test

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/app"
)

// TestDatabaseURLScheme: a DATABASE_URL in a scheme the service does not
// speak is refused with one line naming the variable and the scheme, never
// the password; PostgreSQL URLs and file paths pass.
func TestDatabaseURLScheme(t *testing.T) {
	t.Parallel()
	for url, ok := range map[string]bool{
		"postgres://u:pw@db/x":         true,
		"postgresql://u@db/x":          true,
		"/var/lib/healthagents/x.db":   true,
		"data/healthagents.db":         true,
		"mysql://u:s3cret@host/db":     false,
		"postgress://u:s3cret@host/db": false,
		"sqlite://x.db":                false,
	} {
		_, err := app.ConfigFromEnv(func(k string) string { return map[string]string{"DATABASE_URL": url}[k] })
		if ok {
			assert.NoError(t, err, url)
			continue
		}
		require.Error(t, err, url)
		assert.True(t, strings.HasPrefix(err.Error(), "DATABASE_URL: unsupported scheme"), err.Error())
		assert.NotContains(t, err.Error(), "s3cret")
		assert.NotContains(t, err.Error(), "\\n")
	}
	_, err := app.ConfigFromEnv(func(k string) string { return map[string]string{"REDIS_URL": "http://u:s3cret@h"}[k] })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "REDIS_URL")
	assert.NotContains(t, err.Error(), "s3cret")
}

// TestReplicaURL: REPLICA_URL is an http(s) base URL with a host and
// nothing a replica could not forward to; a bad one is one line naming the
// setting that does not echo it.
func TestReplicaURL(t *testing.T) {
	t.Parallel()
	for v, ok := range map[string]bool{
		"http://10.0.0.5:8000":     true,
		"https://api-a.internal/":  true,
		"http://api-a:8000/prefix": true,
		"api-a:8000":               false,
		"ftp://api-a":              false,
		"http://":                  false,
		"http://u:s3cret@api-a":    false,
		"http://api-a/?x=1":        false,
	} {
		c, err := app.ConfigFromEnv(func(k string) string { return map[string]string{"REPLICA_URL": v}[k] })
		if ok {
			require.NoError(t, err, v)
			assert.Equal(t, strings.TrimSuffix(v, "/"), c.ReplicaURL)
			continue
		}
		require.Error(t, err, v)
		assert.True(t, strings.HasPrefix(err.Error(), "REPLICA_URL must be"), err.Error())
		assert.NotContains(t, err.Error(), "s3cret")
	}
}

// TestUnreachableRedisRefusesStart: with REDIS_URL naming a port where
// nothing answers, Open fails at once naming REDIS_URL, and creates nothing
// under DATA_DIR (no key, no database, no bootstrap token).
func TestUnreachableRedisRefusesStart(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	dir := t.TempDir() + "/data"
	_, err = app.OpenWithOutput(t.Context(), app.Config{DataDir: dir, RedisURL: "redis://:s3cret@" + addr + "/0"}, slog.New(slog.DiscardHandler), io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "REDIS_URL: Redis at "+addr+" does not answer")
	assert.NotContains(t, err.Error(), "s3cret")
	_, statErr := os.Stat(dir)
	assert.True(t, os.IsNotExist(statErr), "nothing created under DATA_DIR")
}

// TestReadinessChecksRedis: with REDIS_URL set (a real Redis), /readyz and
// /health name redis among the dependencies checked.
func TestReadinessChecksRedis(t *testing.T) {
	t.Parallel()
	url := os.Getenv("HEALTHAGENTS_TEST_REDIS")
	if url == "" {
		t.Skip("HEALTHAGENTS_TEST_REDIS is not set")
	}
	a, err := app.OpenWithOutput(t.Context(), app.Config{DataDir: keyedDir(t), RedisURL: url}, slog.New(slog.DiscardHandler), io.Discard)
	require.NoError(t, err)
	defer a.Close()
	ts := httptest.NewServer(a.Handler)
	defer ts.Close()
	status, body := getJSON(t, ts.URL+"/readyz")
	require.Equal(t, 200, status, "%v", body)
	assert.Equal(t, "ok", body["checks"].(map[string]any)["redis"])
}

// TestReadinessNamesAStoppedDependency: with the database closed under a
// running service, /readyz answers 503 naming the database, and nothing of
// where it lives; the chain, still up, is not named.
func TestReadinessNamesAStoppedDependency(t *testing.T) {
	t.Parallel()
	dir := keyedDir(t)
	a, err := app.OpenWithOutput(t.Context(), app.Config{DataDir: dir}, slog.New(slog.DiscardHandler), io.Discard)
	require.NoError(t, err)
	defer a.Close()
	ts := httptest.NewServer(a.Handler)
	defer ts.Close()
	status, body := getJSON(t, ts.URL+"/readyz")
	require.Equal(t, 200, status, "%v", body)
	require.NoError(t, a.DB.Close()) // the database stops answering
	status, body = getJSON(t, ts.URL+"/readyz")
	assert.Equal(t, 503, status)
	assert.Equal(t, map[string]any{"detail": "Service temporarily unavailable: not answering: database"}, body)
	assert.NotContains(t, fmt.Sprint(body), dir)
}
