package main

import (
	"bytes"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/cipher"
)

// serve runs the real service in-process, as `healthagents serve` would.
func serve(t *testing.T, cfg app.Config) string {
	t.Helper()
	a, err := app.Open(t.Context(), cfg, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(srv.Close)
	return srv.URL
}

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestQuickstart(t *testing.T) {
	t.Parallel()
	key, err := cipher.GenerateKey()
	require.NoError(t, err)

	t.Run("ok/FERNET_KEY", func(t *testing.T) {
		t.Parallel()
		url := serve(t, app.Config{DataDir: t.TempDir(), FernetKey: key})
		var out bytes.Buffer
		err := run(t.Context(), []string{"-procedure", "PROC002"}, env(map[string]string{"HEALTHAGENTS_URL": url, "FERNET_KEY": key}), &out)
		require.NoError(t, err, out.String())
		assert.Contains(t, out.String(), ": healthy (version 0.1.0)")
		assert.Contains(t, out.String(), "sealed record of PT-000123")
		assert.Contains(t, out.String(), "procedure PROC002: eligible=true coverage=60% prior_authorization=false")
	})
	t.Run("ok/key file the server generated", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		url := serve(t, app.Config{DataDir: dir})
		var out bytes.Buffer
		err := run(t.Context(), []string{"-url", url, "-key-file", filepath.Join(dir, "fernet.key")}, env(nil), &out)
		require.NoError(t, err, out.String())
		assert.Contains(t, out.String(), "procedure PROC001: eligible=true coverage=80% prior_authorization=true")
	})
	t.Run("fail/wrong key", func(t *testing.T) {
		t.Parallel()
		other, err := cipher.GenerateKey()
		require.NoError(t, err)
		url := serve(t, app.Config{DataDir: t.TempDir(), FernetKey: key})
		err = run(t.Context(), []string{"-url", url}, env(map[string]string{"FERNET_KEY": other}), &bytes.Buffer{})
		require.ErrorContains(t, err, "Invalid encrypted data format")
	})
	t.Run("fail/unknown procedure", func(t *testing.T) {
		t.Parallel()
		url := serve(t, app.Config{DataDir: t.TempDir(), FernetKey: key})
		err := run(t.Context(), []string{"-url", url, "-procedure", "PROC999"}, env(map[string]string{"FERNET_KEY": key}), &bytes.Buffer{})
		require.ErrorContains(t, err, "Procedure code PROC999 not found")
	})
	t.Run("fail/no key", func(t *testing.T) {
		t.Parallel()
		err := run(t.Context(), []string{"-key-file", filepath.Join(t.TempDir(), "none")}, env(nil), &bytes.Buffer{})
		require.ErrorContains(t, err, "set FERNET_KEY")
		require.ErrorIs(t, err, os.ErrNotExist)
	})
}
