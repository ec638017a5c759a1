package app_test

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
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
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/store/storetest"
	"github.com/healthagents/healthagents/verify"
	"github.com/healthagents/healthagents/verify/verifytest"
	"github.com/healthagents/healthagents/zkp/statement"
)

// TestBatchAnchoringTwoReplicas: two whole services (app.Open, as
// `healthagents serve` assembles them) on one store — PostgreSQL with
// HEALTHAGENTS_TEST_POSTGRES, else one SQLite file — and one chain reached
// through its JSON-RPC endpoint, signing with one CHAIN_PRIVATE_KEY, with
// CHAIN_ANCHOR=batch, CHAIN_BATCH_SIZE=4 and a window longer than the test.
// Each replica gets two eligibility and two prescription decisions at once:
// every answer is 200, each replica anchors its four in one batch covering
// both circuits (distinct nonces: the replicas share the nonce manager),
// each decision's statement.batch path leads from its leaf to the root of
// its receipt's BatchRecorded, and both verifiers — verify.Decision and
// docs/verify.md's JavaScript verifier (with HEALTHAGENTS_TEST_VERIFYJS,
// which .ci/run sets) — pass every check of each decision from its whole
// answer (statement and proof) against the chain. A decision whose path is
// doctored fails both, on the path check alone, with the same line.
func TestBatchAnchoringTwoReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("two whole services with proofs")
	}
	t.Parallel()
	ctx := t.Context()
	dsn := filepath.Join(t.TempDir(), "shared.db")
	if os.Getenv(storetest.PostgresEnv) != "" {
		dsn = storetest.PostgresDSN(t)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	rpcAddr := ln.Addr().String()
	require.NoError(t, ln.Close())
	submitter, err := crypto.GenerateKey()
	require.NoError(t, err)
	_, useNode := externalNode(t, rpcAddr, submitter)
	fernetKey, err := cipher.GenerateKey()
	require.NoError(t, err)
	var (
		apps []*app.App
		urls []string
	)
	for range 2 {
		cfg := app.Config{DataDir: keyedDir(t), DatabaseURL: dsn, FernetKey: fernetKey, AdmissionWait: time.Minute,
			ChainAnchor: "batch", ChainBatchSize: 4, ChainBatchWindow: time.Hour}
		useNode(&cfg, "http://"+rpcAddr)
		a, err := app.OpenWithOutput(ctx, cfg, slog.New(slog.DiscardHandler), io.Discard)
		require.NoError(t, err)
		t.Cleanup(func() { a.Close() })
		<-a.ZK.Warm()
		ts := httptest.NewServer(a.Handler)
		t.Cleanup(ts.Close)
		apps, urls = append(apps, a), append(urls, ts.URL)
	}
	a := apps[0]
	key, _, err := a.Keys.Create(ctx, apikey.CreateParams{Env: apikey.Dev, Organization: "batches"})
	require.NoError(t, err)
	st := callReplica(t, "GET", urls[1]+"/status", key, "", nil)
	require.Equal(t, 200, st.status, "%s", st.body)
	var status healthagents.SystemStatus
	require.NoError(t, json.Unmarshal(st.body, &status))
	assert.Equal(t, "batch", status.Blockchain.Anchor)

	c, err := client.New(urls[1], client.WithAPIKey(key), client.WithMaxAttempts(1))
	require.NoError(t, err)
	env := sealed(t, a, func(r *record.Record) { r.Medications = nil })
	require.NoError(t, c.PutPatient(ctx, env), "registered through replica B")
	rx := healthagents.V1PrescriptionRequest{PatientID: env.PatientID, ProviderNPI: "1234567893",
		Medications: []healthagents.V1Medication{{NDCCode: "00071015523", Name: "atorvastatin", Quantity: 30, DaysSupply: 30}}}
	elig := healthagents.V1EligibilityRequest{PatientID: env.PatientID, MemberID: "W123456789", ProcedureCode: "PROC001", ProviderNPI: "1234567893"}

	type answer struct {
		replica int
		kind    string
		body    []byte // the whole answer, as a holder of the decision keeps it
		proof   *healthagents.V1Proof
		st      statement.Statement
	}
	var (
		mu      sync.Mutex
		answers []answer
		wg      sync.WaitGroup
	)
	for i := range 8 {
		wg.Go(func() {
			replica, kind := i%2, "prescription"
			var r replicaCall
			if i/2%2 == 0 {
				r = callReplica(t, "POST", urls[replica]+"/api/v1/prescriptions/validate", key, "", rx)
			} else {
				kind = "eligibility"
				r = callReplica(t, "POST", urls[replica]+"/api/v1/eligibility/verify", key, "", elig)
			}
			if !assert.Equal(t, 200, r.status, "%s", r.body) {
				return
			}
			var out struct {
				ZKProof           *healthagents.V1Proof `json:"zk_proof"`
				VerificationProof *healthagents.V1Proof `json:"verification_proof"`
				Statement         json.RawMessage       `json:"statement"`
			}
			require.NoError(t, json.Unmarshal(r.body, &out))
			ans := answer{replica: replica, kind: kind, body: r.body, proof: out.ZKProof}
			if ans.proof == nil {
				ans.proof = out.VerificationProof
			}
			if !assert.NotNil(t, ans.proof, "%s", r.body) {
				return
			}
			require.NoError(t, json.Unmarshal(out.Statement, &ans.st), "the statement reads strictly")
			mu.Lock()
			answers = append(answers, ans)
			mu.Unlock()
		})
	}
	wg.Wait()
	require.Len(t, answers, 8, "every answer 200")

	eth, err := ethclient.DialContext(ctx, "http://"+rpcAddr)
	require.NoError(t, err)
	defer eth.Close()
	registry := a.Ledger.Registry()
	gov := chain.NewGoverned(eth, registry)
	batches := map[common.Hash]chain.BatchRecorded{}
	replicaOf := map[common.Hash]int{}
	kinds := map[common.Hash]map[string]int{}
	for i, ans := range answers {
		tx := common.HexToHash(ans.proof.BlockchainTx)
		require.NotNil(t, ans.st.Batch, "answer %d names its batch", i)
		ev, ok := batches[tx]
		if !ok {
			rec, err := eth.TransactionReceipt(ctx, tx)
			require.NoError(t, err)
			ev, err = gov.DecodeBatch(rec)
			require.NoError(t, err, "answer %d: its transaction recorded a batch", i)
			batches[tx], replicaOf[tx], kinds[tx] = ev, ans.replica, map[string]int{}
			t.Logf("batch of %d decisions (%d circuits): %d gas, %d per decision", ev.Size, len(ev.CircuitIDs), rec.GasUsed, rec.GasUsed/ev.Size)
		}
		kinds[tx][ans.kind]++
		assert.Equal(t, ans.replica, replicaOf[tx], "a replica anchors its own decisions")
		leaf, err := ans.st.LeafOf()
		require.NoError(t, err)
		require.NoError(t, ans.st.Batch.Check(leaf), "answer %d: the path leads from its leaf to its root", i)
		assert.Equal(t, 0, ans.st.Batch.Root.Cmp(ev.Root), "answer %d: the root its receipt's BatchRecorded recorded", i)
		assert.EqualValues(t, ev.Size, ans.st.Batch.Size)
		assert.True(t, ev.Covers(ans.st.Opening.CircuitID))

		proof, err := verify.ParseProof(ans.proof.ProofData, ans.proof.PublicInputs)
		require.NoError(t, err)
		rep, err := verify.Decision(ctx, eth, tx, verify.Options{Registry: registry, Statement: &ans.st, Proof: proof})
		require.NoError(t, err)
		assert.True(t, rep.OK(), "answer %d (%s):\n%s", i, ans.kind, rep)

		// The JavaScript verifier, given the whole answer as a third party
		// would be: every check passes, and the batch's lines are the Go
		// checker's word for word.
		if js, code := runVerifyJS(t, "http://"+rpcAddr, registry, tx, ans.body); code >= 0 {
			assert.Equal(t, 0, code, "answer %d (%s): %s", i, ans.kind, js)
			assert.NotContains(t, js, "FAIL", "answer %d", i)
			assert.Contains(t, js, "verified: all 17 checks passed", "answer %d", i)
			for _, c := range rep.Checks {
				if c.Name == "batch" || c.Name == "path" || c.Name == "verifier" || c.Name == "proof" {
					assert.Contains(t, js, c.String()+"\n", "answer %d", i)
				}
			}
		}
	}

	// One answer with a doctored path (a sibling off by one): both verifiers
	// refuse it on the path check alone, with the same line.
	bad := answers[0]
	var doctored statement.Statement
	require.NoError(t, json.Unmarshal(mustField(t, bad.body, "statement"), &doctored), "a copy of the statement")
	doctored.Batch.Path[0].Add(doctored.Batch.Path[0], big.NewInt(1))
	tx := common.HexToHash(bad.proof.BlockchainTx)
	proof, err := verify.ParseProof(bad.proof.ProofData, bad.proof.PublicInputs)
	require.NoError(t, err)
	rep, err := verify.Decision(ctx, eth, tx, verify.Options{Registry: registry, Statement: &doctored, Proof: proof})
	require.NoError(t, err)
	require.Equal(t, []string{"path"}, rep.Failed(), "%s", rep)
	if js, code := runVerifyJS(t, "http://"+rpcAddr, registry, tx, withField(t, bad.body, "statement", doctored)); code >= 0 {
		assert.Equal(t, 1, code, js)
		assert.Equal(t, []string{"path"}, verifytest.FailedChecks(js), js)
		for _, c := range rep.Checks {
			if !c.OK {
				assert.Contains(t, js, c.String()+"\n", "the Go checker's failing line, word for word")
			}
		}
		assert.Contains(t, js, "REFUSED")
	}

	require.Len(t, batches, 2, "one full batch per replica")
	nonces := map[uint64]bool{}
	for tx, ev := range batches {
		assert.EqualValues(t, 4, ev.Size)
		assert.Equal(t, map[string]int{"eligibility": 2, "prescription": 2}, kinds[tx], "a mixed batch")
		assert.Len(t, ev.CircuitIDs, 2)
		t2, _, err := eth.TransactionByHash(ctx, tx)
		require.NoError(t, err)
		assert.False(t, nonces[t2.Nonce()], "nonce %d used twice", t2.Nonce())
		nonces[t2.Nonce()] = true
	}
}

// runVerifyJS runs docs/verify.md's JavaScript verifier
// (examples/verify-js/verify.mjs) on a decision's whole answer and returns
// its output and exit status; code is -1 when HEALTHAGENTS_TEST_VERIFYJS is
// unset (.ci/verifyjs.sh installs the script's packages and sets it).
func runVerifyJS(t *testing.T, rpc string, registry common.Address, tx common.Hash, answer []byte) (out string, code int) {
	t.Helper()
	if os.Getenv("HEALTHAGENTS_TEST_VERIFYJS") == "" {
		return "", -1
	}
	dir, err := filepath.Abs("../examples/verify-js")
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "answer.json")
	require.NoError(t, os.WriteFile(file, answer, 0o600))
	cmd := exec.CommandContext(t.Context(), "node", "verify.mjs", "--rpc", rpc, "--registry", registry.Hex(), "--tx", tx.Hex(), "--statement", file)
	cmd.Dir = dir
	b, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(b), ee.ExitCode()
	}
	require.NoError(t, err, string(b))
	return string(b), 0
}

// mustField is the raw value of a JSON object's field.
func mustField(t *testing.T, doc []byte, name string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(doc, &m))
	v, ok := m[name]
	require.True(t, ok, "no %q in %s", name, doc)
	return v
}

// withField is doc, a JSON object, with its field name replaced by v.
func withField(t *testing.T, doc []byte, name string, v any) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(doc, &m))
	b, err := json.Marshal(v)
	require.NoError(t, err)
	m[name] = b
	out, err := json.Marshal(m)
	require.NoError(t, err)
	return out
}
