package main

import (
	"crypto/ecdh"
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/client"
)

// Proved rounds over real processes: with FEDERATED_PROOFS=on the binary
// sets up the update-bound circuit's keys once (kept under DATA_DIR), each
// `healthagents participant` fetches the proving key of its round's shape
// and proves every masked update, and the run completes with every
// hospital in every round. (Refusal of an update beyond the clip bound over
// HTTP: server.TestProvedRoundOverHTTP.)
func TestFederatedEndToEndProved(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := builtBinary(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	dir := t.TempDir()
	csvs := splitCSV(t, filepath.Join(root, "testdata", "wdbc", "wdbc.csv"), dir, 3)
	const rounds = 3
	const admin = "federated-proved-admin-token-0123456789abcdef"
	port := freePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	dataDir := filepath.Join(dir, "data")
	serverLog := filepath.Join(dir, "server.log")
	startProc(t, bin, append(os.Environ(), "DATA_DIR="+dataDir, "HOST=127.0.0.1", fmt.Sprintf("PORT=%d", port),
		"ADMIN_TOKEN="+admin, "LOG_LEVEL=warn", "FEDERATED_TASK="+filepath.Join(root, "testdata", "wdbc", "task.json"),
		"FEDERATED_DP=off", "FEDERATED_PROOFS=on", fmt.Sprintf("FEDERATED_ROUNDS=%d", rounds), "FEDERATED_ROUND_TIMEOUT=20m"), serverLog, "serve")
	waitHealthy(t, base+"/health")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log (tail):\n%s", tail(mustRead(t, serverLog), 4000))
		}
	})
	ctx := t.Context()
	adm, err := client.New(base, client.WithAPIKey(admin))
	require.NoError(t, err)
	var parts []*proc
	var reader *client.Client
	for i, path := range csvs {
		org := fmt.Sprintf("hospital-%c", 'a'+i)
		k, err := adm.CreateKey(ctx, &client.CreateKeyRequest{Name: org, Scopes: []string{"federated"}, Organization: org})
		require.NoError(t, err)
		oc, err := client.New(base, client.WithAPIKey(k.APIKey))
		require.NoError(t, err)
		reader = oc
		pub, err := ecdh.X25519().GenerateKey(crand.Reader)
		require.NoError(t, err)
		_, err = oc.RegisterFederatedOrganization(ctx, client.OrganizationRequest{
			OrganizationName: org, Endpoint: "https://" + org + ".example", EncryptionKey: hex.EncodeToString(pub.PublicKey().Bytes()),
		})
		require.NoError(t, err)
		parts = append(parts, startProc(t, bin, os.Environ(), filepath.Join(dir, org+".out"),
			"participant", "--server", base, "--api-key", k.APIKey, "--data", path))
	}
	task, err := reader.FederatedTask(ctx)
	require.NoError(t, err)
	assert.True(t, task.Proofs)
	// A busy machine may take longer than a phase for the first setup of
	// the shape; ask for it once so the rounds measure proving, not setup.
	_, _, err = reader.With(client.WithTimeout(5*time.Minute)).FederatedProofKeys(ctx, "w31-e5-p2-b25")
	require.NoError(t, err)
	_, _, err = reader.FederatedProofKeys(ctx, "w999-e5-p2-b25")
	var ce *client.Error
	require.ErrorAs(t, err, &ce, "a shape the run cannot have")
	assert.Equal(t, 400, ce.StatusCode)

	for i, p := range parts {
		select {
		case err := <-p.err:
			require.NoError(t, err, "participant %d:\n%s", i, p.output())
		case <-time.After(8 * time.Minute):
			t.Fatalf("participant %d did not finish:\n%s", i, p.output())
		}
		out := p.output()
		t.Logf("participant %d:\n%s", i, out)
		assert.Contains(t, out, "proved rounds true")
		assert.Contains(t, out, "fetching the proving key of shape w31-e5-p2-b25")
		assert.Contains(t, out, fmt.Sprintf("final model 1.0.%d (round %d, 3 organizations)", rounds, rounds-1))
	}
	for _, ext := range []string{".pk", ".vk"} {
		_, err := os.Stat(filepath.Join(dataDir, "federated-proofs", "w31-e5-p2-b25"+ext))
		assert.NoError(t, err, "the keys are kept under DATA_DIR")
	}
}
