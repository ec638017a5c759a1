package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/chain/rorpc"
	"github.com/healthagents/healthagents/internal/testcache/zkkeys"
)

// decisionRow finds the decisions table's row of endpoint in bench's output
// and returns its columns: decisions, decisions/s, transactions,
// decisions/tx, without tx, gas, gas/decision, failed receipts.
func decisionRow(t *testing.T, out, endpoint string) []string {
	t.Helper()
	return tableRow(t, out, "\ndecisions: ", endpoint)
}

// tableRow finds, in the table of bench's output that starts at heading,
// endpoint's row and returns its columns after the name.
func tableRow(t *testing.T, out, heading, endpoint string) []string {
	t.Helper()
	_, table, ok := strings.Cut(out, heading)
	require.True(t, ok, "no table %q:\n%s", strings.TrimSpace(heading), out)
	m := regexp.MustCompile(`(?m)^[ \t]*` + regexp.QuoteMeta(endpoint) + `((?:[ \t]+\S+)+)[ \t]*$`).FindStringSubmatch(table)
	require.NotNil(t, m, "no %s row:\n%s", endpoint, table)
	return strings.Fields(m[1])
}

// sumGas reads the receipts of txs from rpc, each once.
func sumGas(t *testing.T, rpc string, txs map[string]int) uint64 {
	t.Helper()
	c, err := ethclient.DialContext(t.Context(), rpc)
	require.NoError(t, err)
	defer c.Close()
	var gas uint64
	for tx := range txs {
		r, err := c.TransactionReceipt(t.Context(), common.HexToHash(tx))
		require.NoError(t, err)
		gas += r.GasUsed
	}
	return gas
}

// TestBenchGasSharedTransactions: decisions that share a transaction (as a
// batch's do) count its gas once. A test server answers the decision
// endpoints naming three real transactions of different gas, mined on a
// simulated chain served read-only over JSON-RPC, in turn; bench -rpc reads
// their receipts: gas/decision is the sum over the three distinct receipts
// over the answers, not a receipt's gas per answer.
func TestBenchGasSharedTransactions(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	l, err := chain.NewSimulated(ctx, chain.WithDataDir(t.TempDir()))
	require.NoError(t, err)
	defer l.Close()
	c, ok := l.RPCClient()
	require.True(t, ok)
	addr, stop, err := rorpc.Listen("127.0.0.1:0", c)
	require.NoError(t, err)
	defer stop(ctx)
	rpc := "http://" + addr

	var txs []string
	to := common.Address{0x42}
	for _, size := range []int{0, 40, 300} { // different call data, different gas
		r, err := l.Transact(ctx, &to, bytes.Repeat([]byte{0xab}, size), 0)
		require.NoError(t, err)
		txs = append(txs, r.TxHash.Hex())
	}
	var mu sync.Mutex
	named := map[string]map[string]int{} // path → tx → answers
	var next atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		tx := txs[next.Add(1)%int64(len(txs))]
		mu.Lock()
		if named[r.URL.Path] == nil {
			named[r.URL.Path] = map[string]int{}
		}
		named[r.URL.Path][tx]++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"eligible": true, "blockchain_tx": tx})
	}))
	defer srv.Close()

	settings := env(map[string]string{"DATA_DIR": t.TempDir()})
	var out bytes.Buffer
	err = run(ctx, []string{"bench", "-url", srv.URL, "-key", "k", "-endpoints", "verify-eligibility,validate-prescription",
		"-n", "12", "-c", "3", "-rpc", rpc, "-record", "../../testdata/record.json"}, settings, nil, &out, io.Discard)
	require.NoError(t, err)
	t.Log(out.String())
	for path, endpoint := range map[string]string{"/verify-eligibility": "verify-eligibility", "/validate-prescription": "validate-prescription"} {
		row := decisionRow(t, out.String(), endpoint)
		require.Len(t, row, 8, endpoint)
		gas := sumGas(t, rpc, named[path])
		assert.Equal(t, "12", row[0], endpoint)
		assert.Equal(t, "3", row[2], "%s: three distinct transactions", endpoint)
		assert.Equal(t, "4.00", row[3], endpoint)
		assert.Equal(t, "0", row[4], endpoint)
		assert.Equal(t, fmt.Sprint(gas), row[5], endpoint)
		assert.Equal(t, fmt.Sprintf("%.1f", float64(gas)/12), row[6], endpoint)
		assert.Equal(t, "0", row[7], endpoint)
	}

	// Without -rpc there is no gas figure, and a node that does not know
	// the transaction is an error, not a zero.
	out.Reset()
	require.NoError(t, run(ctx, []string{"bench", "-url", srv.URL, "-key", "k", "-endpoints", "verify-eligibility", "-n", "3", "-c", "1",
		"-record", "../../testdata/record.json"}, settings, nil, &out, io.Discard))
	row := decisionRow(t, out.String(), "verify-eligibility")
	assert.Equal(t, []string{"3", row[1], "3", "1.00", "0", "–", "(-rpc)", "–", "(-rpc)", "–"}, row)
	other, err := chain.NewSimulated(ctx, chain.WithDataDir(t.TempDir()))
	require.NoError(t, err)
	defer other.Close()
	oc, _ := other.RPCClient()
	otherAddr, stopOther, err := rorpc.Listen("127.0.0.1:0", oc)
	require.NoError(t, err)
	defer stopOther(ctx)
	err = run(ctx, []string{"bench", "-url", srv.URL, "-key", "k", "-endpoints", "verify-eligibility", "-n", "2", "-c", "1",
		"-rpc", "http://" + otherAddr, "-record", "../../testdata/record.json"}, settings, nil, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "receipt of verify-eligibility's transaction")
}

// TestBenchGasOnTheService: bench -rpc against the service on the embedded
// chain, in each anchoring mode. The handler is wrapped to read the
// blockchain_tx of every answer as it leaves; the gas bench reports is the
// sum of those distinct receipts' gas over the answers. With
// CHAIN_ANCHOR=each every decision has its own transaction; with
// CHAIN_ANCHOR=batch, CHAIN_BATCH_SIZE=4 and four requests at once, the
// four decisions of an endpoint share one. The run has -verify: after each
// endpoint's run every decision is checked as verify-decision would, and
// all verify (each mode's statements; batch mode's leaves with their
// answers' proofs).
func TestBenchGasOnTheService(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"each", "batch"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			benchGasOnTheService(t, mode)
		})
	}
}

func benchGasOnTheService(t *testing.T, mode string) {
	ctx := t.Context()
	settings := env(map[string]string{"DATA_DIR": zkkeys.DataDir(t)})
	cfg, err := app.ConfigFromEnv(settings)
	require.NoError(t, err)
	cfg.ProofTimeout = testProofTimeout
	cfg.ChainRPCListen = "127.0.0.1:0"
	cfg.ChainAnchor = mode
	cfg.AdmissionWait = time.Minute
	c, txs := "2", 4
	if mode == "batch" {
		// A batch closes at 4 statements; the window only ends a run
		// that lost a request.
		cfg.ChainBatchSize, cfg.ChainBatchWindow = 4, 2*time.Minute
		c, txs = "4", 1
	}
	a, err := app.OpenWithOutput(ctx, cfg, nil, io.Discard)
	require.NoError(t, err)
	defer a.Close()
	<-a.ZK.Warm()
	var mu sync.Mutex
	answered := map[string]map[string]int{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		a.Handler.ServeHTTP(rec, r)
		var answer struct {
			Tx string `json:"blockchain_tx"`
		}
		if rec.Code == http.StatusOK && json.Unmarshal(rec.Body.Bytes(), &answer) == nil && answer.Tx != "" {
			mu.Lock()
			if answered[r.URL.Path] == nil {
				answered[r.URL.Path] = map[string]int{}
			}
			answered[r.URL.Path][answer.Tx]++
			mu.Unlock()
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}))
	defer ts.Close()
	rpc := "http://" + a.ChainRPCAddr

	var out bytes.Buffer
	err = run(ctx, []string{"bench", "-url", ts.URL, "-endpoints", "verify-eligibility,validate-prescription", "-n", "4", "-c", c,
		"-rpc", rpc, "-verify", "-record", "../../testdata/record.json"}, settings, nil, &out, io.Discard)
	require.NoError(t, err, out.String())
	t.Log(out.String())
	assert.Contains(t, out.String(), "--registry "+a.Ledger.Registry().Hex()+" (GET /status)")
	for path, endpoint := range map[string]string{"/verify-eligibility": "verify-eligibility", "/validate-prescription": "validate-prescription"} {
		assert.Equal(t, []string{"4", "4", "0", "0"}, verificationRow(t, out.String(), endpoint), endpoint)
		assert.Contains(t, out.String(), endpoint+": all 4 decisions verified")
		require.Len(t, answered[path], txs, "%s: %d transaction(s) for 4 decisions", endpoint, txs)
		row := decisionRow(t, out.String(), endpoint)
		require.Len(t, row, 8, endpoint)
		gas := sumGas(t, rpc, answered[path])
		assert.Equal(t, []string{"4", row[1], fmt.Sprint(txs), fmt.Sprintf("%.2f", 4/float64(txs)), "0", fmt.Sprint(gas),
			fmt.Sprintf("%.1f", float64(gas)/4), "0"}, row, endpoint)
		if mode == "each" {
			assert.Greater(t, gas/4, uint64(200_000), "%s: a record verifies a Groth16 proof on chain", endpoint)
		} else {
			assert.Less(t, gas/4, uint64(50_000), "%s: one recordBatch for four decisions", endpoint)
		}
	}
}
