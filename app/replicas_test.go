package app_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/store/storetest"
)

// replicaCall is one HTTP exchange with a replica.
type replicaCall struct {
	status int
	header http.Header
	body   []byte
}

func callReplica(t *testing.T, method, url, key, idemKey string, body any) replicaCall {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return replicaCall{resp.StatusCode, resp.Header, b}
}

// TestTwoReplicas runs two whole services (app.Open, as `healthagents
// serve` assembles them) on one PostgreSQL database, one Redis and one
// external JSON-RPC chain, both signing with the same CHAIN_PRIVATE_KEY,
// and checks that under concurrent load they behave as one service:
//
//   - proofs from both replicas are all recorded on chain, in mined
//     transactions with distinct nonces (the database nonce manager);
//   - a key's rate limit is shared (Redis): alternating replicas, the key
//     gets its limit once, not twice;
//   - an Idempotency-Key answered by one replica is replayed by the other
//     with Idempotent-Replayed: true; concurrent duplicates on both replicas
//     run once (the others wait or get 409);
//   - every webhook event is delivered exactly once, whichever replica's
//     dispatcher claims it;
//   - one federated coordinator holds the task's lease.
//
// It skips without HEALTHAGENTS_TEST_POSTGRES and HEALTHAGENTS_TEST_REDIS.
func TestTwoReplicas(t *testing.T) {
	redisURL := os.Getenv("HEALTHAGENTS_TEST_REDIS")
	if os.Getenv(storetest.PostgresEnv) == "" || redisURL == "" {
		t.Skip("needs HEALTHAGENTS_TEST_POSTGRES and HEALTHAGENTS_TEST_REDIS")
	}
	if testing.Short() {
		t.Skip("two whole services with proofs")
	}
	t.Parallel()
	ctx := t.Context()
	rs := startReplicas(t, 2)
	replicas, urls, rpcAddr := rs.apps, rs.urls, rs.rpcAddr
	a := replicas[0]

	// One federated coordinator for the task.
	var leases int
	require.NoError(t, a.DB.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM leader_leases WHERE name LIKE 'federated:%' AND expires_at > $1`,
		time.Now().UnixMicro()).Scan(&leases))
	assert.Equal(t, 1, leases)

	key, _, err := a.Keys.Create(ctx, apikey.CreateParams{Env: apikey.Dev, Organization: "replicas"})
	require.NoError(t, err)
	c, err := client.New(urls[1], client.WithAPIKey(key), client.WithMaxAttempts(1))
	require.NoError(t, err)
	var hooksMu sync.Mutex
	hooks := map[string]int{}
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hooksMu.Lock()
		hooks[r.Header.Get("webhook-id")]++
		hooksMu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(receiver.Close)
	_, err = c.CreateWebhook(ctx, receiver.URL, []string{healthagents.EventPrescriptionValidated, healthagents.EventPrescriptionApproved})
	require.NoError(t, err)
	env := sealed(t, a, func(r *record.Record) { r.Medications = nil })
	require.NoError(t, c.PutPatient(ctx, env), "registered through replica B")
	rx := healthagents.V1PrescriptionRequest{PatientID: env.PatientID, ProviderNPI: "1234567893",
		Medications: []healthagents.V1Medication{{NDCCode: "00071015523", Name: "atorvastatin", Quantity: 30, DaysSupply: 30}}}
	elig := healthagents.V1EligibilityRequest{PatientID: env.PatientID, MemberID: "W123456789", ProcedureCode: "PROC001", ProviderNPI: "1234567893"}

	// Concurrent load on both replicas; every decision carries its proof's
	// transaction.
	var (
		mu  sync.Mutex
		txs []string
		wg  sync.WaitGroup
	)
	const load = 8
	for i := range load {
		wg.Go(func() {
			url := urls[i%2]
			var r replicaCall
			if i%4 < 2 {
				r = callReplica(t, "POST", url+"/api/v1/prescriptions/validate", key, "", rx)
			} else {
				r = callReplica(t, "POST", url+"/api/v1/eligibility/verify", key, "", elig)
			}
			if !assert.Equal(t, 200, r.status, "%s", r.body) {
				return
			}
			var out struct {
				ZKProof           *healthagents.V1Proof `json:"zk_proof"`
				VerificationProof *healthagents.V1Proof `json:"verification_proof"`
			}
			require.NoError(t, json.Unmarshal(r.body, &out))
			p := out.ZKProof
			if p == nil {
				p = out.VerificationProof
			}
			if assert.NotNil(t, p, "%s", r.body) {
				mu.Lock()
				txs = append(txs, p.BlockchainTx)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Len(t, txs, load)
	eth, err := ethclient.DialContext(ctx, "http://"+rpcAddr)
	require.NoError(t, err)
	defer eth.Close()
	nonces := map[uint64]string{}
	for _, h := range txs {
		hash := common.HexToHash(h)
		rec, err := eth.TransactionReceipt(ctx, hash)
		require.NoError(t, err)
		assert.EqualValues(t, 1, rec.Status, "verified on chain: %s", h)
		tx, _, err := eth.TransactionByHash(ctx, hash)
		require.NoError(t, err)
		// With CHAIN_ANCHOR=batch (the default with CHAIN_ENDPOINT) a
		// replica's decisions share their batch's transaction.
		if nonces[tx.Nonce()] != h {
			assert.Empty(t, nonces[tx.Nonce()], "nonce %d used by two transactions", tx.Nonce())
		}
		nonces[tx.Nonce()] = h
	}

	// Idempotency across replicas: answered by A, replayed by B.
	first := callReplica(t, "POST", urls[0]+"/api/v1/prescriptions/validate", key, "replica-idem-1", rx)
	require.Equal(t, 200, first.status, "%s", first.body)
	again := callReplica(t, "POST", urls[1]+"/api/v1/prescriptions/validate", key, "replica-idem-1", rx)
	assert.Equal(t, 200, again.status)
	assert.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
	assert.JSONEq(t, string(first.body), string(again.body))

	// Concurrent duplicates on both replicas: one runs, the others wait or
	// get 409.
	count := func() int {
		var n int
		require.NoError(t, a.DB.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM v1_prescriptions`).Scan(&n))
		return n
	}
	before := count()
	results := make([]replicaCall, 4)
	start := make(chan struct{})
	for i := range results {
		wg.Go(func() {
			<-start
			results[i] = callReplica(t, "POST", urls[i%2]+"/api/v1/prescriptions/validate", key, "replica-idem-2", rx)
		})
	}
	close(start)
	wg.Wait()
	ids := map[string]bool{}
	for _, r := range results {
		require.Contains(t, []int{200, 409}, r.status, "%s", r.body)
		if r.status == 200 {
			var out struct {
				PrescriptionID string `json:"prescription_id"`
			}
			require.NoError(t, json.Unmarshal(r.body, &out))
			ids[out.PrescriptionID] = true
		}
	}
	assert.Len(t, ids, 1, "one validation, whoever answered")
	assert.Equal(t, before+1, count(), "run once")

	// A rate limit counted across both replicas: 10 a minute for this key.
	limited, lk, err := a.Keys.Create(ctx, apikey.CreateParams{Env: apikey.Dev, Organization: "replicas", RateLimit: 10})
	require.NoError(t, err)
	statuses := map[int]int{}
	for i := range 20 {
		r := callReplica(t, "GET", urls[i%2]+"/api/keys/"+lk.ID+"/usage", limited, "", nil)
		statuses[r.status]++
	}
	assert.LessOrEqual(t, statuses[200], 11, "shared: not 10 per replica (%v)", statuses)
	assert.GreaterOrEqual(t, statuses[200], 10, "%v", statuses)
	assert.Equal(t, 20, statuses[200]+statuses[429], "%v", statuses)

	// Every webhook event delivered once.
	var events int
	require.NoError(t, a.DB.SQL().QueryRowContext(ctx, `SELECT COUNT(DISTINCT message_id) FROM webhook_deliveries`).Scan(&events))
	require.Positive(t, events)
	require.Eventually(t, func() bool {
		hooksMu.Lock()
		defer hooksMu.Unlock()
		return len(hooks) == events
	}, 60*time.Second, 20*time.Millisecond)
	time.Sleep(300 * time.Millisecond) // a second delivery would show now
	hooksMu.Lock()
	defer hooksMu.Unlock()
	for id, n := range hooks {
		assert.Equal(t, 1, n, "webhook %s delivered %d times", id, n)
	}
	t.Logf("%d decisions on nonces %v; %d webhook events; rate limit %v", len(txs), keys(nonces), events, statuses)
}

// replicaSet is n services on one PostgreSQL database (a fresh schema),
// the Redis of HEALTHAGENTS_TEST_REDIS and one JSON-RPC chain, all signing
// with one submitting key and sharing one Fernet key, each with its own
// DATA_DIR, each served over HTTP.
type replicaSet struct {
	apps    []*app.App
	urls    []string
	rpcAddr string
}

// startReplicas starts a replicaSet; callers skip first without the
// PostgreSQL and Redis settings.
func startReplicas(t *testing.T, n int) *replicaSet {
	t.Helper()
	ctx := t.Context()
	redisURL := os.Getenv("HEALTHAGENTS_TEST_REDIS")
	dsn := storetest.PostgresDSN(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	rs := &replicaSet{rpcAddr: ln.Addr().String()}
	require.NoError(t, ln.Close())
	submitter, err := crypto.GenerateKey()
	require.NoError(t, err)
	_, useNode := externalNode(t, rs.rpcAddr, submitter)
	fernetKey, err := cipher.GenerateKey()
	require.NoError(t, err)
	for range n {
		// A queued request waits up to a minute, not the default 5 s: the
		// tests check what the replicas answer, and on a busy machine the
		// default would shed their bursts with 503 (TestOverloadSheds and
		// TestBurstOfTwelveRealProofs check shedding).
		cfg := app.Config{DataDir: keyedDir(t), DatabaseURL: dsn, RedisURL: redisURL, FernetKey: fernetKey, AdmissionWait: time.Minute}
		useNode(&cfg, "http://"+rs.rpcAddr)
		a, err := app.OpenWithOutput(ctx, cfg, slog.New(slog.DiscardHandler), io.Discard)
		require.NoError(t, err)
		t.Cleanup(func() { a.Close() })
		<-a.ZK.Warm()
		ts := httptest.NewServer(a.Handler)
		t.Cleanup(ts.Close)
		rs.apps, rs.urls = append(rs.apps, a), append(rs.urls, ts.URL)
	}
	return rs
}

func keys[V any](m map[uint64]V) []string {
	var out []string
	for k := range m {
		out = append(out, fmt.Sprint(k))
	}
	return out
}
