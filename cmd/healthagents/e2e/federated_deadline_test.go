package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/cmd/healthagents/internal/clitest"
	"github.com/healthagents/healthagents/federated/normproof"
	"github.com/healthagents/healthagents/internal/testcache/normkeys"
)

// Issue 28's proved run at the timeout that lost round 0 before: proofs on,
// a 2-minute round timeout (30-second phases), a federated-only
// coordinator. The participants, who register themselves, fetch the
// proving key when they start; the coordinator is killed in round 0 and
// restarted. Every round closes with the three hospitals and none is
// abandoned. The keys under the coordinator's DATA_DIR are the test
// cache's, as in TestFederatedEndToEndProved, so that what a 30-second
// phase holds is what a deployment's holds (a start, a fetch, a proof), not
// the decode of keys no one has seen before: with keys set up afresh at
// every run the participants decoded them with every check before they
// advertised (~35 s at load 30) and round 0 was abandoned. That a
// coordinator sets its keys up before it opens round 0 is
// app.TestProvedRunSetsUpItsKeysBeforeRoundZero.
func TestFederatedProvedTwoMinuteRounds(t *testing.T) {
	bin, root := setUp(t)
	dir := t.TempDir()
	csvs := clitest.SplitCSV(t, filepath.Join(root, "testdata", "wdbc", "wdbc.csv"), dir, 3)
	taskPath := filepath.Join(root, "testdata", "wdbc", "task.json")
	const rounds = 2
	const admin = "federated-deadline-admin-token-0123456789abcdef"
	shape := normproof.Shape{Weights: 31, Extra: 5, Peers: 2, Bits: 25} // round 0's: three hospitals
	normkeys.Into(t, filepath.Join(dir, "data", "federated-proofs"), shape)
	srv := startServer(t, bin, dir, admin, "HEALTHAGENTS_ROLE=federated", "FEDERATED_TASK="+taskPath, "FEDERATED_DP=off",
		"FEDERATED_PROOFS=on", fmt.Sprintf("FEDERATED_ROUNDS=%d", rounds), "FEDERATED_ROUND_TIMEOUT=2m")
	adm, err := client.New(srv.base, client.WithAPIKey(admin))
	require.NoError(t, err)
	// hospital-a's first masked input waits at its gate: round 0 is in its
	// masked-input phase, proofs made.
	aGate := newGate(t, srv.base, maskedInput)
	var parts []*clitest.Proc
	for i, path := range csvs {
		org := fmt.Sprintf("hospital-%c", 'a'+i)
		k := federatedKey(t, adm, org)
		server := srv.base
		if i == 0 {
			server = aGate.url
		}
		parts = append(parts, clitest.StartProc(t, bin, os.Environ(), filepath.Join(dir, org+".out"),
			"participant", "--server", server, "--api-key", k.APIKey, "--data", path, "--rate", freeTierRate, "--burst", freeTierBurst))
	}
	// Killed in round 0, once every participant has its key and its
	// proving key and hospital-a has proved its update, and back.
	for _, p := range parts {
		p.WaitOutput(t, "fetching the proving key of shape "+shape.Name(), 3*time.Minute)
		p.WaitOutput(t, "participant hospital-", time.Minute)
	}
	aGate.waitHeld(t, 3*time.Minute)
	require.NoError(t, srv.Cmd.Process.Signal(syscall.SIGKILL))
	<-srv.Err
	srv.restart(t)
	aGate.pass()

	for _, out := range waitTaskEnded(t, parts, 8*time.Minute) {
		assert.Contains(t, out, "round 0 closed: model 1.0.1 from 3 organizations")
		assert.Contains(t, out, fmt.Sprintf("final model 1.0.%d", rounds))
	}
	logs := clitest.MustRead(t, srv.log)
	assert.Contains(t, logs, `"msg":"federated round resumed"`, "the restart came mid-round")
	assert.NotContains(t, logs, `"msg":"federated round abandoned"`)
	closed := map[int]int{}
	for _, line := range strings.Split(logs, "\n") {
		var l struct {
			Msg          string `json:"msg"`
			Round        int    `json:"round"`
			Contributors int    `json:"contributors"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "federated round closed" {
			closed[l.Round] = l.Contributors
		}
	}
	assert.Equal(t, map[int]int{0: 3, 1: 3}, closed, "every round closed with the three hospitals")
	require.NoError(t, srv.Cmd.Process.Signal(syscall.SIGTERM))
	<-srv.Err
}
