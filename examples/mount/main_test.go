package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/internal/testcache/zkkeys"
	"github.com/healthagents/healthagents/record"
)

// start runs the program on a free port and returns its base URL and a
// channel that yields run's result after ctx ends.
func start(t *testing.T, ctx context.Context, args []string, getenv func(string) string) (string, <-chan error) {
	t.Helper()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, args, getenv, pw)
		_ = pw.CloseWithError(io.EOF)
		done <- err
	}()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		require.NoError(t, <-done)
		t.Fatal("the program printed nothing")
	}
	m := regexp.MustCompile(`^listening on (http://\S+)`).FindStringSubmatch(sc.Text())
	require.NotNil(t, m, sc.Text())
	lines := make(chan struct{})
	go func() { // keep draining so the program never blocks writing
		for sc.Scan() {
		}
		close(lines)
	}()
	t.Cleanup(func() { <-lines })
	return m[1], done
}

func TestMount(t *testing.T) {
	t.Parallel()
	key, err := cipher.GenerateKey()
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	env := map[string]string{"FERNET_KEY": key, "DATA_DIR": zkkeys.DataDir(t)}
	base, done := start(t, ctx, []string{"-addr", "127.0.0.1:0", "-prefix", "/api/health/"},
		func(k string) string { return env[k] })

	// The host program's own route.
	resp, err := http.Get(base + "/hello")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "hello from the host program\n", string(body))

	// The API under the prefix, driven with the SDK.
	c, err := client.New(base + "/api/health")
	require.NoError(t, err)
	h, err := c.Health(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "healthy", h.Status)

	year := time.Now().Year()
	sealed, err := client.SealRecord(&record.Record{
		PatientID: "PT-000789",
		Coverage: &record.Coverage{
			MemberID: "M1", Status: "active", Start: fmt.Sprintf("%d-01-01", year), End: fmt.Sprintf("%d-12-31", year),
		},
	}, key)
	require.NoError(t, err)
	var info client.ResponseInfo
	res, err := c.With(client.WithResponseInfo(&info)).VerifyEligibility(t.Context(), sealed, "PROC004")
	require.NoError(t, err)
	assert.True(t, res.Eligible)
	assert.InDelta(t, 90, res.CoveragePct, 0)
	// The full service: the decision was proven and verified on chain, and
	// the public caller drew on a rate limit.
	assert.True(t, res.ZKProofVerified, "proofs are wired")
	require.NotNil(t, info.RateLimit, "limits are wired")
	assert.Equal(t, 10, info.RateLimit.Limit)

	// API keys are wired: key routes refuse a caller without one.
	resp, err = http.Get(base + "/api/health/api/keys")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 401, resp.StatusCode)

	// The documentation works under the prefix, and the document names it.
	resp, err = http.Get(base + "/api/health/docs")
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	assert.Contains(t, string(page), `src="docs/swagger-ui-bundle.js"`)
	resp, err = http.Get(base + "/api/health/openapi.json")
	require.NoError(t, err)
	var doc struct{ Servers []struct{ URL string } }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&doc))
	resp.Body.Close()
	require.NotEmpty(t, doc.Servers)
	assert.Equal(t, base+"/api/health", doc.Servers[0].URL)

	_, err = c.ValidatePrescription(t.Context(), sealed, "NOPE-1")
	assert.True(t, client.IsNotFound(err), "%v", err)

	// Outside the prefix the API's paths are not served.
	resp, err = http.Get(base + "/health")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 404, resp.StatusCode)

	cancel()
	require.NoError(t, <-done)
}

func TestMountFailures(t *testing.T) {
	t.Parallel()
	dataDir := zkkeys.DataDir(t) // "bad address" opens the service before it listens
	noEnv := func(k string) string { return map[string]string{"DATA_DIR": dataDir}[k] }
	for name, args := range map[string][]string{
		"root prefix":  {"-addr", "127.0.0.1:0", "-prefix", "/"},
		"bad address":  {"-addr", "127.0.0.1:notaport"},
		"unknown flag": {"-nope"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			require.Error(t, run(t.Context(), args, noEnv, io.Discard))
		})
	}
	dir := t.TempDir()
	err := run(t.Context(), []string{"-addr", "127.0.0.1:0"}, func(k string) string {
		return map[string]string{"FERNET_KEY": "bad-key", "DATA_DIR": dir}[k]
	}, io.Discard)
	require.ErrorContains(t, err, "FERNET_KEY")
}
