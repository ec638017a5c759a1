package main

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/cmd/healthagents/internal/clitest"
	"github.com/healthagents/healthagents/internal/testcache/zkkeys"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

// TestTwoServeProcesses runs two `healthagents serve` processes (the
// command's run("serve"), re-executed as TestServeChild) with their own
// DATA_DIR on one PostgreSQL database, one Redis and one external JSON-RPC
// chain, signing with one CHAIN_PRIVATE_KEY: concurrent eligibility checks
// on both are all proven and recorded in mined transactions with distinct
// nonces; an Idempotency-Key answered by one is replayed by the other; a
// key's rate limit is counted once across both; exactly one of them holds
// the federated lease, and when that process is killed (SIGKILL) the
// other takes the coordinator over. Skips without HEALTHAGENTS_TEST_POSTGRES
// and HEALTHAGENTS_TEST_REDIS. Declared in z_longest_test.go.
func twoServeProcesses(t *testing.T) {
	redisURL := os.Getenv("HEALTHAGENTS_TEST_REDIS")
	if os.Getenv(storetest.PostgresEnv) == "" || redisURL == "" {
		t.Skip("needs HEALTHAGENTS_TEST_POSTGRES and HEALTHAGENTS_TEST_REDIS")
	}
	if testing.Short() {
		t.Skip("runs server processes with proofs")
	}
	t.Parallel()
	ctx := t.Context()
	dsn := storetest.PostgresDSN(t)

	// The external chain: a dev node served over JSON-RPC.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	rpcAddr := ln.Addr().String()
	require.NoError(t, ln.Close())
	submitter, err := crypto.GenerateKey()
	require.NoError(t, err)
	ownerKey, err := crypto.GenerateKey()
	require.NoError(t, err)
	node, err := chain.NewSimulated(ctx, chain.WithHTTP(rpcAddr), chain.WithKey(submitter), chain.WithOwnerKey(ownerKey))
	require.NoError(t, err)
	t.Cleanup(func() { node.Close() })
	ownerFile := filepath.Join(t.TempDir(), "owner.key")
	require.NoError(t, os.WriteFile(ownerFile, []byte(hex.EncodeToString(crypto.FromECDSA(ownerKey))), 0o600))

	fernet, err := cipher.GenerateKey()
	require.NoError(t, err)
	kr, err := cipher.ParseKeyring(fernet)
	require.NoError(t, err)
	const admin = "replicas-admin-token"
	var procs []*process
	for range 2 {
		dir := zkkeys.DataDir(t) // the same Groth16 keys in both: replicas prove alike
		port := clitest.FreePort(t)
		procs = append(procs, startServer(t, []string{
			"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "HOST=127.0.0.1", fmt.Sprintf("PORT=%d", port), "LOG_LEVEL=info",
			fmt.Sprintf("REPLICA_URL=http://127.0.0.1:%d", port),
			"DATA_DIR=" + dir, "ADMIN_TOKEN=" + admin, "FERNET_KEY=" + fernet, "DATABASE_URL=" + dsn, "REDIS_URL=" + redisURL,
			"CHAIN_ENDPOINT=http://" + rpcAddr, "CHAIN_PRIVATE_KEY=" + hex.EncodeToString(crypto.FromECDSA(submitter)),
			"CHAIN_REGISTRY=" + node.Registry().Hex(), "CHAIN_OWNER_KEY_FILE=" + ownerFile,
			// One transaction per decision, so the nonces below count them;
			// batches from two replicas: app.TestBatchAnchoringTwoReplicas.
			"CHAIN_ANCHOR=each",
			// The survivor takes over once the dead leader's lease has
			// run out: replicasLease instead of 15 s.
			clitest.FederatedLeaseEnv + "=" + replicasLease.String(),
		}))
	}

	// Concurrent eligibility checks on both processes.
	key, status, err := createKey(ctx, procs[0].url, admin, map[string]any{"name": "load", "tier": "enterprise"})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)
	plain, err := os.ReadFile("../../testdata/record.json")
	require.NoError(t, err)
	envl, err := cipher.Seal("PT-000123", plain, kr)
	require.NoError(t, err)
	body := map[string]any{"patient_data": envl, "procedure_code": "PROC002"}
	eth, err := ethclient.DialContext(ctx, "http://"+rpcAddr)
	require.NoError(t, err)
	defer eth.Close()
	account := crypto.PubkeyToAddress(submitter.PublicKey)
	before, err := eth.NonceAt(ctx, account, nil)
	require.NoError(t, err)
	var (
		mu       sync.Mutex
		verified int
		wg       sync.WaitGroup
	)
	for i := range 8 {
		wg.Go(func() {
			status, out, err := call(ctx, "POST", procs[i%2].url+"/verify-eligibility", key, body)
			if !assert.NoError(t, err) || !assert.Equal(t, 200, status, "%s", out) {
				return
			}
			var res struct {
				ZKProofVerified bool `json:"zk_proof_verified"`
			}
			require.NoError(t, json.Unmarshal(out, &res))
			if assert.True(t, res.ZKProofVerified, "%s", out) {
				mu.Lock()
				verified++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// Every check was verified on chain (a transaction refused for its
	// nonce would have failed the request), and the submitting account
	// sent one transaction per check (no nonce used twice, none lost).
	after, err := eth.NonceAt(ctx, account, nil)
	require.NoError(t, err)
	assert.Equal(t, 8, verified)
	assert.Equal(t, before+8, after, "one mined transaction per check")

	// Idempotency across processes: a key minted on one is replayed by the other.
	first := idemCall(t, procs[0].url, admin, "proc-idem")
	again := idemCall(t, procs[1].url, admin, "proc-idem")
	require.Equal(t, 200, first.status)
	assert.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
	assert.Equal(t, first.body, again.body)

	// A rate limit shared through Redis.
	limited, _, err := createKey(ctx, procs[0].url, admin, map[string]any{"name": "limited", "rate_limit": 6})
	require.NoError(t, err)
	limitedID := strings.Split(limited, "_")[2] // sk_dev_<id>_<secret>
	ok := 0
	for i := range 12 {
		status, _, err := call(ctx, "GET", procs[i%2].url+"/api/keys/"+limitedID+"/usage", limited, nil)
		require.NoError(t, err)
		if status == http.StatusOK {
			ok++
		}
	}
	assert.GreaterOrEqual(t, ok, 6)
	assert.LessOrEqual(t, ok, 7, "counted across both processes")

	// One federated coordinator; killed, the other takes over.
	db, err := store.Open(ctx, dsn)
	require.NoError(t, err)
	defer db.Close()
	holder := func() string {
		var h string
		err := db.SQL().QueryRowContext(ctx, `SELECT holder FROM leader_leases WHERE name LIKE 'federated:%' AND expires_at > $1`,
			time.Now().UnixMicro()).Scan(&h)
		if err != nil {
			return ""
		}
		return h
	}
	leaderID := holder()
	require.NotEmpty(t, leaderID)
	leader := -1
	for i, p := range procs {
		id, err := os.ReadFile(filepath.Join(envOf(p, "DATA_DIR"), "replica.id"))
		require.NoError(t, err)
		if string(id) == leaderID {
			leader = i
		}
	}
	require.NotEqual(t, -1, leader, "the lease is held by one of the two")
	survivor := procs[1-leader]
	fedKey, _, err := createKey(ctx, survivor.url, admin, map[string]any{"name": "fed", "organization": "fed-org", "scopes": []string{"federated"}})
	require.NoError(t, err)
	orgKey, err := ecdh.X25519().GenerateKey(rand.Reader)
	require.NoError(t, err)
	mustCall(t, "POST", survivor.url+"/api/v1/federated/organizations", fedKey, map[string]any{"organization_name": "Fed Org",
		"endpoint": "https://fed.example", "encryption_key": hex.EncodeToString(orgKey.PublicKey().Bytes())}, http.StatusCreated)
	status, out, err := call(ctx, "GET", survivor.url+"/api/v1/federated/rounds/current", fedKey, nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, status, "the follower forwards the round protocol to the leader (REPLICA_URL): %s", out)
	assert.Eventually(t, func() bool { // its log is read from a pipe, a moment behind
		return strings.Contains(procs[leader].logs.String(), `"route":"GET /api/v1/federated/rounds/current","status":200`)
	}, time.Minute, 50*time.Millisecond, "the leader served it") // a bound for a busy machine; idle, a moment
	procs[leader].kill(t)
	status, out, err = call(ctx, "GET", survivor.url+"/api/v1/federated/rounds/current", fedKey, nil)
	require.NoError(t, err)
	if status != http.StatusOK { // the dead leader's lease has not run out yet
		assert.Equal(t, http.StatusServiceUnavailable, status, "%s", out)
	}
	require.Eventually(t, func() bool {
		status, _, err := call(ctx, "GET", survivor.url+"/api/v1/federated/rounds/current", fedKey, nil)
		return err == nil && status == http.StatusOK && holder() != leaderID
	}, 2*time.Minute, 50*time.Millisecond, "taken over after the leader died") // the lease, then the next renewal tick
}

// replicasLease is the federated leader lease of TestTwoServeProcesses's
// replicas: renewed every second (app.WithLeaderLease renews every ttl/3,
// at least every second), so a leader keeps it through a renewal 3 s late
// on a busy machine, and the survivor takes over within ~5 s of the kill.
const replicasLease = 4 * time.Second

type idemAnswer struct {
	status int
	header http.Header
	body   string
}

func idemCall(t *testing.T, base, bearer, key string) idemAnswer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", base+"/auth/keys", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+bearer)
	req.Header.Set("Idempotency-Key", key)
	resp, err := crashClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return idemAnswer{resp.StatusCode, resp.Header, string(b)}
}

// envOf returns a setting a process was started with.
func envOf(p *process, name string) string {
	for _, kv := range p.cmd.Env {
		if len(kv) > len(name) && kv[:len(name)+1] == name+"=" {
			return kv[len(name)+1:]
		}
	}
	panic(fmt.Sprintf("no %s", name))
}
