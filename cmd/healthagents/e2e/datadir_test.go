package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/cmd/healthagents/internal/clitest"
	"github.com/healthagents/healthagents/internal/testcache/zkkeys"
)

// program is one binary serving the API: its path, its arguments and the
// path prefix its API is under.
type program struct {
	name, bin, prefix string
	args              []string
}

// TestDataDirSharedByPrograms: a DATA_DIR written by one program opens in
// another differently named one, both ways: `healthagents serve`, then
// examples/mount on its DATA_DIR, then `healthagents serve` again on what
// examples/mount left. Each later start serves (over CHAIN_RPC_LISTEN) the
// receipt of the decision the program before it recorded, and records one
// of its own. (The embedded chain once lived under a directory named after
// the executable, so the second program started on an empty chain beside
// the shared embedded.json and refused to start.) One DATA_DIR and three
// starts cover both ways: examples/mount, which builds its prover tables
// at every start (it reads no test variable), starts once; its start on a
// new DATA_DIR is examples/mount's own TestMount.
func TestDataDirSharedByPrograms(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts two programs")
	}
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	require.NoError(t, err)
	// Both programs come linked from the test cache (clitest.Build): a
	// link only when their sources changed since the last run.
	mountBin := clitest.Build(t, "./examples/mount")
	ha := program{name: "healthagents", bin: clitest.Binary(t), args: []string{"serve"}}
	mount := program{name: "mount", bin: mountBin, prefix: "/healthagents"}

	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	zkkeys.Into(t, filepath.Join(data, "zkp")) // the test cache's ZK keys: no set-up at the first start
	seal := exec.CommandContext(t.Context(), ha.bin, "seal", filepath.Join(root, "testdata", "record.json"))
	seal.Env = append(os.Environ(), "DATA_DIR="+data)
	sealed, err := seal.Output()
	require.NoError(t, err)

	first := startProgram(t, ha, dir, data)
	tx := first.decide(t, sealed)
	first.stop(t)
	for i, p := range []program{mount, ha} {
		before := []program{ha, mount}[i]
		next := startProgram(t, p, dir, data)
		ec, err := ethclient.DialContext(t.Context(), next.rpc)
		require.NoError(t, err)
		rc, err := ec.TransactionReceipt(t.Context(), common.HexToHash(tx))
		require.NoError(t, err, "%s serves the receipt %s recorded", p.name, before.name)
		assert.Equal(t, uint64(1), rc.Status)
		ec.Close()
		tx = next.decide(t, sealed)
		next.stop(t)
	}
}

// running is a started program.
type running struct {
	*clitest.Proc
	api, rpc string
}

// startProgram starts p on data with free ports for its API and its
// read-only chain RPC, and waits until it is healthy.
func startProgram(t *testing.T, p program, dir, data string) *running {
	t.Helper()
	port, rpcPort := clitest.FreePort(t), clitest.FreePort(t)
	env := append(os.Environ(), "DATA_DIR="+data, "HOST=127.0.0.1", fmt.Sprintf("PORT=%d", port),
		fmt.Sprintf("ADDR=127.0.0.1:%d", port), fmt.Sprintf("CHAIN_RPC_LISTEN=127.0.0.1:%d", rpcPort), "LOG_LEVEL=warn")
	log := filepath.Join(dir, p.name+".log")
	r := &running{Proc: clitest.StartProc(t, p.bin, env, log, p.args...),
		api: fmt.Sprintf("http://127.0.0.1:%d%s", port, p.prefix), rpc: fmt.Sprintf("http://127.0.0.1:%d", rpcPort)}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s log (tail):\n%s", p.name, clitest.Tail(r.Output(), 4000))
		}
	})
	clitest.WaitHealthy(t, r.api+"/health")
	return r
}

// decide posts a root-family eligibility check of the sealed record and
// returns the transaction that recorded its decision.
func (r *running) decide(t *testing.T, envelope []byte) string {
	t.Helper()
	body, err := json.Marshal(map[string]any{"patient_data": json.RawMessage(envelope), "procedure_code": "PROC001"})
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, r.api+"/verify-eligibility", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
	var answer struct {
		BlockchainTx string `json:"blockchain_tx"`
	}
	require.NoError(t, json.Unmarshal(raw, &answer))
	require.NotEmpty(t, answer.BlockchainTx, "%s", raw)
	return answer.BlockchainTx
}

// stop ends the program as a terminal's Ctrl-C would and waits for it.
func (r *running) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, r.Cmd.Process.Signal(syscall.SIGINT))
	select {
	case err := <-r.Err:
		require.NoError(t, err)
	case <-time.After(time.Minute):
		t.Fatal("the program did not stop within a minute")
	}
}
