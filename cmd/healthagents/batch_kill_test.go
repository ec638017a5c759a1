package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/cmd/healthagents/internal/clitest"
	"github.com/healthagents/healthagents/internal/testcache/zkkeys"
	"github.com/healthagents/healthagents/verify"
	"github.com/healthagents/healthagents/zkp/statement"
)

// TestBatchKilledBeforeAnchoring: `healthagents serve` (the command,
// re-executed as TestServeChild) with CHAIN_ANCHOR=batch, CHAIN_BATCH_SIZE=4
// and a window of an hour on a persistent DATA_DIR (the embedded chain kept
// there). Four concurrent decisions fill a batch and are answered 200; two
// more are proven (the server's proof counter says so) and then the process
// is killed with SIGKILL while they wait for a batch that never closes:
// neither gets a 200. After a restart on the same DATA_DIR the four
// answered decisions still pass verify.Decision against the kept chain,
// and the registry holds exactly one BatchRecorded — theirs: no batch with
// the two unanswered decisions was recorded. A crash loses no answered
// decision and answers none it did not anchor.
func TestBatchKilledBeforeAnchoring(t *testing.T) {
	if testing.Short() {
		t.Skip("runs and kills a server process")
	}
	t.Parallel()
	ctx := t.Context()
	dir := zkkeys.DataDir(t)
	fernet, err := cipher.GenerateKey()
	require.NoError(t, err)
	kr, err := cipher.ParseKeyring(fernet)
	require.NoError(t, err)
	const admin = "batch-kill-admin"
	rpc := fmt.Sprintf("127.0.0.1:%d", clitest.FreePort(t))
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "HOST=127.0.0.1", fmt.Sprintf("PORT=%d", clitest.FreePort(t)), "LOG_LEVEL=info",
		"DATA_DIR=" + dir, "ADMIN_TOKEN=" + admin, "FERNET_KEY=" + fernet, "CHAIN_RPC_LISTEN=" + rpc,
		"CHAIN_ANCHOR=batch", "CHAIN_BATCH_SIZE=4", "CHAIN_BATCH_WINDOW=1h",
	}
	p := startServer(t, env)
	key, status, err := createKey(ctx, p.url, admin, map[string]any{"name": "batches", "tier": "enterprise"})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)
	plain, err := os.ReadFile("../../testdata/record.json")
	require.NoError(t, err)
	envl, err := cipher.Seal("PT-000123", plain, kr)
	require.NoError(t, err)
	c, err := client.New(p.url, client.WithAPIKey(key), client.WithMaxAttempts(1))
	require.NoError(t, err)
	require.NoError(t, c.PutPatient(ctx, &envl))
	elig := healthagents.V1EligibilityRequest{PatientID: envl.PatientID, MemberID: "W123456789", ProcedureCode: "PROC001", ProviderNPI: "1234567893"}

	type answer struct {
		proof *healthagents.V1Proof
		st    statement.Statement
		body  []byte // the whole answer, as a client keeps it
	}
	answers := make([]answer, 4)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			status, out, err := call(ctx, "POST", p.url+"/api/v1/eligibility/verify", key, elig)
			if !assert.NoError(t, err) || !assert.Equal(t, http.StatusOK, status, "%s", out) {
				return
			}
			var res struct {
				VerificationProof *healthagents.V1Proof `json:"verification_proof"`
				Statement         json.RawMessage       `json:"statement"`
			}
			require.NoError(t, json.Unmarshal(out, &res))
			require.NotNil(t, res.VerificationProof, "%s", out)
			answers[i].proof, answers[i].body = res.VerificationProof, out
			require.NoError(t, json.Unmarshal(res.Statement, &answers[i].st))
		})
	}
	wg.Wait()
	require.False(t, t.Failed())
	tx := answers[0].proof.BlockchainTx
	for i, a := range answers {
		require.NotNil(t, a.st.Batch, "answer %d", i)
		assert.Equal(t, 4, a.st.Batch.Size, "answer %d: one full batch", i)
		assert.Equal(t, tx, a.proof.BlockchainTx, "answer %d: the same batch", i)
	}

	// Two more: proven, then waiting for a batch of four that never fills.
	type result struct {
		status int
		err    error
	}
	late := make(chan result, 2)
	for range 2 {
		go func() {
			status, _, err := call(ctx, "POST", p.url+"/api/v1/eligibility/verify", key, elig)
			late <- result{status, err}
		}()
	}
	require.Eventually(t, func() bool { return proofsMade(t, p.url) == 6 }, 2*time.Minute, 20*time.Millisecond,
		"the server proves the two late decisions") // a bound for a busy machine
	select {
	case r := <-late:
		t.Fatalf("a late decision was answered before its batch could close: %d %v", r.status, r.err)
	default:
	}
	p.kill(t)
	for range 2 {
		r := <-late
		assert.NotEqual(t, http.StatusOK, r.status, "no late decision was answered (%v)", r.err)
	}

	// Restarted on the same DATA_DIR: the answered decisions verify.
	p = startServer(t, env)
	status, out, err := call(ctx, "GET", p.url+"/status", key, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status, "%s", out)
	var st healthagents.SystemStatus
	require.NoError(t, json.Unmarshal(out, &st))
	assert.Equal(t, "batch", st.Blockchain.Anchor)
	registry := common.HexToAddress(st.Blockchain.Registry)
	eth, err := ethclient.DialContext(ctx, "http://"+rpc)
	require.NoError(t, err)
	defer eth.Close()
	for i, a := range answers {
		proof, err := verify.ParseProof(a.proof.ProofData, a.proof.PublicInputs)
		require.NoError(t, err)
		rep, err := verify.Decision(ctx, eth, common.HexToHash(a.proof.BlockchainTx), verify.Options{Registry: registry, Statement: &a.st, Proof: proof})
		require.NoError(t, err)
		assert.True(t, rep.OK(), "answer %d after the restart:\n%s", i, rep)

		// The command and the JavaScript verifier (HEALTHAGENTS_TEST_VERIFYJS)
		// read the statement and the proof from the whole answer.
		file := filepath.Join(t.TempDir(), "answer.json")
		require.NoError(t, os.WriteFile(file, a.body, 0o600))
		args := []string{"--rpc", "http://" + rpc, "--registry", registry.Hex(), "--tx", a.proof.BlockchainTx, "--statement", file}
		out, err := runVerify(t, args...)
		require.NoError(t, err, out)
		assert.NotContains(t, out, "FAIL", out)
		if js, code := runVerifyJS(t, args...); code >= 0 {
			assert.Equal(t, 0, code, js)
			assert.NotContains(t, js, "FAIL", js)
		}
	}
	batchRecorded := crypto.Keccak256Hash([]byte("BatchRecorded(uint256,uint256,uint256[],address)"))
	logs, err := eth.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: big.NewInt(0), Addresses: []common.Address{registry},
		Topics: [][]common.Hash{{batchRecorded}}})
	require.NoError(t, err)
	require.Len(t, logs, 1, "one batch recorded: the answered one")
	assert.Equal(t, tx, logs[0].TxHash.Hex())
}

// proofsMade is the server's count of proofs made (every circuit, every
// outcome), from GET /metrics.
func proofsMade(t *testing.T, base string) int {
	t.Helper()
	status, out, err := call(t.Context(), "GET", base+"/metrics", "", nil)
	if err != nil || status != http.StatusOK {
		return -1
	}
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "healthagents_proof_duration_seconds_count{") {
			continue
		}
		v, err := strconv.Atoi(line[strings.LastIndexByte(line, ' ')+1:])
		require.NoError(t, err, line)
		n += v
	}
	return n
}
