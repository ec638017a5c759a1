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
)

// Issue 28's proved run at the timeout that lost round 0 before: proofs on,
// a 2-minute round timeout (30-second phases), a federated-only
// coordinator. The coordinator sets the proving keys up before it opens
// round 0 and the participants, who register themselves, fetch them when
// they start; the coordinator is killed in round 0 and restarted. Every
// round closes with the three hospitals and none is abandoned.
func TestFederatedProvedTwoMinuteRounds(t *testing.T) {
	bin, root := setUp(t)
	dir := t.TempDir()
	csvs := clitest.SplitCSV(t, filepath.Join(root, "testdata", "wdbc", "wdbc.csv"), dir, 3)
	taskPath := filepath.Join(root, "testdata", "wdbc", "task.json")
	const rounds = 2
	const admin = "federated-deadline-admin-token-0123456789abcdef"
	srv := startServer(t, bin, dir, admin, "HEALTHAGENTS_ROLE=federated", "FEDERATED_TASK="+taskPath, "FEDERATED_DP=off",
		"FEDERATED_PROOFS=on", fmt.Sprintf("FEDERATED_ROUNDS=%d", rounds), "FEDERATED_ROUND_TIMEOUT=2m")
	for _, ext := range []string{".pk", ".vk"} {
		_, err := os.Stat(filepath.Join(dir, "data", "federated-proofs", "w31-e5-p2-b25"+ext))
		require.NoError(t, err, "the keys of round 0's shape exist before round 0")
	}
	adm, err := client.New(srv.base, client.WithAPIKey(admin))
	require.NoError(t, err)
	var parts []*clitest.Proc
	for i, path := range csvs {
		org := fmt.Sprintf("hospital-%c", 'a'+i)
		k := federatedKey(t, adm, org)
		parts = append(parts, clitest.StartProc(t, bin, os.Environ(), filepath.Join(dir, org+".out"),
			"participant", "--server", srv.base, "--api-key", k.APIKey, "--data", path, "--rate", freeTierRate))
	}
	// Killed in round 0, once every participant has its key and its
	// proving key, and back.
	for _, p := range parts {
		p.WaitOutput(t, "fetching the proving key of shape w31-e5-p2-b25", 3*time.Minute)
		p.WaitOutput(t, "participant hospital-", time.Minute)
	}
	require.NoError(t, srv.Cmd.Process.Signal(syscall.SIGKILL))
	<-srv.Err
	srv.restart(t)

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
