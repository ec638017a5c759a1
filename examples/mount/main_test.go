package main

import (
	"bufio"
	"context"
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
	base, done := start(t, ctx, []string{"-addr", "127.0.0.1:0", "-prefix", "/api/health/"},
		func(k string) string { return map[string]string{"FERNET_KEY": key}[k] })

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
	env, err := client.SealRecord(&record.Record{
		PatientID: "PT-000789",
		Coverage: &record.Coverage{
			MemberID: "M1", Status: "active", Start: fmt.Sprintf("%d-01-01", year), End: fmt.Sprintf("%d-12-31", year),
		},
	}, key)
	require.NoError(t, err)
	res, err := c.VerifyEligibility(t.Context(), env, "PROC004")
	require.NoError(t, err)
	assert.True(t, res.Eligible)
	assert.InDelta(t, 90, res.CoveragePct, 0)

	_, err = c.ValidatePrescription(t.Context(), env, "NOPE-1")
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
	noEnv := func(string) string { return "" }
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
	err := run(t.Context(), []string{"-addr", "127.0.0.1:0"}, func(string) string { return "bad-key" }, io.Discard)
	require.ErrorContains(t, err, "FERNET_KEY")
}
