package app_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/server"
)

// A federated-only coordinator (HEALTHAGENTS_ROLE=federated) starts no
// chain, sets up no decision circuit and generates no Fernet key: DATA_DIR
// holds the database and nothing of the clinical stack. It serves the
// federated task and answers the clinical routes 503 — with a Fernet key
// too, since it has no chain to prove a decision on. Its start on an
// existing DATA_DIR is logged (docs/benchmarks.md), not asserted.
func TestFederatedRoleStartsLean(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const admin = "lean-coordinator-admin-token-0123456789abcdef"
	env := map[string]string{"DATA_DIR": dir, "HEALTHAGENTS_ROLE": "federated", "ADMIN_TOKEN": admin, "FEDERATED_DP": "off"}
	open := func(env map[string]string) (*app.App, *httptest.Server, time.Duration) {
		cfg, err := app.ConfigFromEnv(func(k string) string { return env[k] })
		require.NoError(t, err)
		start := time.Now()
		a, err := app.OpenWithOutput(t.Context(), cfg, slog.New(slog.DiscardHandler), io.Discard)
		require.NoError(t, err)
		ts := httptest.NewServer(a.Handler)
		resp, err := http.Get(ts.URL + "/health")
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		took := time.Since(start)
		t.Cleanup(func() { ts.Close(); a.Close() })
		return a, ts, took
	}
	_, ts, first := open(env)
	for _, name := range []string{"chain", "zkp", "fernet.key", "federated-proofs"} {
		_, err := os.Stat(filepath.Join(dir, name))
		assert.ErrorIs(t, err, os.ErrNotExist, "%s: nothing of the clinical stack", name)
	}
	adm, err := client.New(ts.URL, client.WithAPIKey(admin))
	require.NoError(t, err)
	k, err := adm.CreateKey(t.Context(), &client.CreateKeyRequest{Name: "h", Scopes: []string{"federated", "eligibility"}, Organization: "hospital-a"})
	require.NoError(t, err)
	hc, err := client.New(ts.URL, client.WithAPIKey(k.APIKey), client.WithMaxAttempts(1))
	require.NoError(t, err)
	task, err := hc.FederatedTask(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "hospital-a", task.OrganizationID)
	verify := func(ts *httptest.Server) int {
		b, err := json.Marshal(map[string]any{"patient_data": server.ExampleEnvelope(), "procedure_code": "70551"})
		require.NoError(t, err)
		req, err := http.NewRequest("POST", ts.URL+"/verify-eligibility", bytes.NewReader(b))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+k.APIKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		t.Logf("%d %s", resp.StatusCode, body)
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusServiceUnavailable, verify(ts), "no key: no record is opened")

	// Again on the same DATA_DIR, with a Fernet key that opens the example
	// envelope: still no decision without a proof.
	env2 := map[string]string{"FERNET_KEY": server.ExampleFernetKey}
	for k, v := range env {
		env2[k] = v
	}
	_, ts2, again := open(env2)
	assert.Equal(t, http.StatusServiceUnavailable, verify(ts2), "no chain: no unproven decision")
	_, err = os.Stat(filepath.Join(dir, "chain"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	t.Logf("federated coordinator healthy in %v (new DATA_DIR), %v (existing DATA_DIR)", first.Round(time.Millisecond), again.Round(time.Millisecond))
}
