package main

import (
	"bytes"
	"io"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
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
