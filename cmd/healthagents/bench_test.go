package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/internal/testcache/zkkeys"
	"github.com/healthagents/healthagents/ratelimit"
	"github.com/healthagents/healthagents/server"
)

// TestBenchOpenLoop drives /health at a fixed rate from many client
// addresses and reports the server's peak memory (here: this process).
func TestBenchOpenLoop(t *testing.T) {
	t.Parallel()
	key, err := cipher.GenerateKey()
	require.NoError(t, err)
	kr, err := cipher.ParseKeyring(key)
	require.NoError(t, err)
	svc, err := healthagents.New(kr)
	require.NoError(t, err)
	h, err := server.New(server.Deps{Service: svc})
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	defer ts.Close()
	settings := env(map[string]string{"DATA_DIR": t.TempDir()})
	var out bytes.Buffer
	err = run(t.Context(), []string{"bench", "-url", ts.URL, "-endpoints", "health", "-n", "40", "-rate", "400", "-c", "64",
		"-spread", "10", "-pid", strconv.Itoa(os.Getpid()), "-record", "../../testdata/record.json"}, settings, nil, &out, io.Discard)
	require.NoError(t, err)
	t.Log(out.String())
	assert.Contains(t, out.String(), "open loop at 400 requests/s, at most 64 outstanding, X-Forwarded-For over 10 client addresses")
	assert.Contains(t, out.String(), "200×40")
	assert.Contains(t, out.String(), "shed p50")
	if runtime.GOOS == "linux" {
		assert.Regexp(t, `peak RSS \(VmHWM\) [0-9.]+ MiB before the run, [0-9.]+ MiB after`, out.String())
	}

	for _, bad := range [][]string{{"-rate", "-1"}, {"-spread", "-2"}, {"-c", "5000"}} {
		err = run(t.Context(), append([]string{"bench"}, bad...), settings, nil, io.Discard, io.Discard)
		assert.Error(t, err, bad)
	}
}

// TestBenchOwnKeys: without -key, bench creates keys of its own on the
// server's database, enough that the run meets no per-minute figure: 600
// GET /status (500 a minute per caller) need two keys, and not one answer
// is a 429. The keys are revoked after the run.
func TestBenchOwnKeys(t *testing.T) {
	t.Parallel()
	settings := env(map[string]string{"DATA_DIR": zkkeys.DataDir(t)})
	cfg, err := app.ConfigFromEnv(settings)
	require.NoError(t, err)
	cfg.ProofTimeout = testProofTimeout
	a, err := app.OpenWithOutput(t.Context(), cfg, nil, io.Discard)
	require.NoError(t, err)
	defer a.Close()
	ts := httptest.NewServer(a.Handler)
	defer ts.Close()

	var out bytes.Buffer
	err = run(t.Context(), []string{"bench", "-url", ts.URL, "-endpoints", "status", "-n", "600", "-c", "8",
		"-record", "../../testdata/record.json"}, settings, nil, &out, io.Discard)
	require.NoError(t, err)
	t.Log(out.String())
	assert.Contains(t, out.String(), "2 enterprise key(s) of its own")
	assert.Contains(t, out.String(), "200×600")
	assert.NotContains(t, out.String(), "429×", "no request refused by a rate limit")

	keys, _, err := a.Keys.List(t.Context(), apikey.ListOptions{Limit: 100})
	require.NoError(t, err)
	bench := 0
	for _, k := range keys {
		if k.Name == "bench" {
			bench++
			assert.False(t, k.RevokedAt.IsZero(), "bench key %s left active", k.ID)
		}
	}
	assert.Equal(t, 2, bench)
}

func TestBenchKeyCount(t *testing.T) {
	t.Parallel()
	p := ratelimit.DefaultPolicy()
	assert.Equal(t, 1, benchKeyCount(p, []string{"health", "verify-eligibility"}, 100))
	assert.Equal(t, 4, benchKeyCount(p, []string{"health", "verify-eligibility"}, 400))
	assert.Equal(t, 2, benchKeyCount(p, []string{"status"}, 600))
	assert.Equal(t, 1, benchKeyCount(p, []string{"submit-federated-update"}, 50))
}

// TestBenchHelp: -h prints every flag and runs nothing.
func TestBenchHelp(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"bench", "-h"}, env(map[string]string{"DATA_DIR": t.TempDir()}), nil, &out, io.Discard))
	for _, f := range []string{"-url", "-n", "-c", "-rate", "-spread", "-pid", "-endpoints", "-record", "-key", "-records", "-admin-token", "-rpc", "-verify"} {
		assert.Regexp(t, `(?m)^  `+regexp.QuoteMeta(f)+`( |$)`, out.String(), "bench -h lacks %s", f)
	}
}

// TestBenchPrintsRefusalDetails: under the table, bench prints the detail
// of the first refusal of each status, so a run that met a 400 says why.
func TestBenchPrintsRefusalDetails(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch n.Add(1) % 3 {
		case 0:
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"detail":"Validation error: field 'x' is wrong"}`)
		case 1:
			w.WriteHeader(http.StatusConflict)
			_, _ = io.WriteString(w, `{"detail":"round moved on"}`)
		default:
			_, _ = io.WriteString(w, `{"status":"healthy"}`)
		}
	}))
	defer ts.Close()
	var out bytes.Buffer
	err := run(t.Context(), []string{"bench", "-url", ts.URL, "-key", "k", "-endpoints", "health", "-n", "9", "-c", "1",
		"-record", "../../testdata/record.json"}, env(map[string]string{"DATA_DIR": t.TempDir()}), nil, &out, io.Discard)
	require.NoError(t, err)
	assert.Contains(t, out.String(), "200×3 400×3 409×3")
	assert.Contains(t, out.String(), `health: first 400 answer: "Validation error: field 'x' is wrong"`)
	assert.Contains(t, out.String(), `health: first 409 answer: "round moved on"`)
}
