package app_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/ipfs/go-cid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/ipfs"
)

// TestOpenWiresIPFSEndpoint: app.Open with IPFS_ENDPOINT gives the node a
// /health check (503 while it is down) and registrations that need it. With
// HEALTHAGENTS_TEST_IPFS set, the same runs against a real Kubo node: PUT
// pins the ciphertext, DELETE unpins it.
func TestOpenWiresIPFSEndpoint(t *testing.T) {
	shared(t) // the Groth16 keys, set up once under sharedDir
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	down := "http://" + l.Addr().String()
	require.NoError(t, l.Close())

	endpoints := []string{down}
	if real := os.Getenv("HEALTHAGENTS_TEST_IPFS"); real != "" {
		endpoints = append(endpoints, real)
	}
	for _, endpoint := range endpoints {
		a, err := app.OpenWithOutput(t.Context(), app.Config{DataDir: keyedDir(t), IPFSEndpoint: endpoint}, slog.New(slog.DiscardHandler), io.Discard)
		require.NoError(t, err)
		require.NotNil(t, a.IPFS)
		ts := httptest.NewServer(a.Handler)

		key, _, err := a.Keys.Create(t.Context(), apikey.CreateParams{Env: apikey.Dev, Scopes: []apikey.Scope{apikey.ScopePatients}})
		require.NoError(t, err)
		env := sealed(t, a, nil)
		body, err := json.Marshal(env)
		require.NoError(t, err)
		call := func(method string, body []byte) (int, string) {
			req, err := http.NewRequestWithContext(t.Context(), method, ts.URL+"/api/v1/patients/"+env.PatientID, bytes.NewReader(body))
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}

		health, err := http.Get(ts.URL + "/health")
		require.NoError(t, err)
		health.Body.Close()
		status, detail := call(http.MethodPut, body)

		if endpoint == down {
			assert.Equal(t, http.StatusServiceUnavailable, health.StatusCode)
			assert.Equal(t, http.StatusServiceUnavailable, status)
			assert.JSONEq(t, `{"detail":"Service temporarily unavailable"}`, detail)
		} else {
			assert.Equal(t, http.StatusOK, health.StatusCode)
			require.Equal(t, http.StatusOK, status, detail)
			node, err := ipfs.New(endpoint)
			require.NoError(t, err)
			c, err := cid.Decode(env.IPFSCID)
			require.NoError(t, err)
			back, err := node.Cat(t.Context(), c, len(env.EncryptedData))
			require.NoError(t, err)
			assert.Equal(t, env.EncryptedData, string(back))
			status, detail = call(http.MethodDelete, nil)
			require.Equal(t, http.StatusOK, status, detail)
			assert.ErrorIs(t, node.Unpin(t.Context(), c), ipfs.ErrNotPinned, "DELETE unpinned it")
		}
		ts.Close()
		require.NoError(t, a.Close())
	}
}
