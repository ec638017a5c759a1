package e2e

import (
	"crypto/ecdh"
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
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
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/internal/testcache/zkkeys"
)

// centralizedAccuracy trains the task's model on all training records
// pooled (the hospitals' held-out records set aside exactly as each
// participant does) for steps full-batch epochs, and returns the held-out
// accuracy of that model and of w on the same held-out records.
func centralizedAccuracy(t *testing.T, tf *federated.TaskFile, csvs []string, steps int, w []float64) (central, fed float64, n int) {
	t.Helper()
	task := tf.Task()
	var train, test federated.Dataset
	for _, path := range csvs {
		recs := clitest.ReadCSV(t, tf, path)
		tr, te := federated.SplitHeldOut(recs, tf.HeldOut)
		a, _, err := task.Examples(tr)
		require.NoError(t, err)
		b, _, err := task.Examples(te)
		require.NoError(t, err)
		train.X, train.Y = append(train.X, a.X...), append(train.Y, a.Y...)
		test.X, test.Y = append(test.X, b.X...), append(test.Y, b.Y...)
	}
	m, err := task.NewModel()
	require.NoError(t, err)
	spec := task.Training
	spec.Epochs = steps
	upd, err := federated.Train(t.Context(), m, make([]float64, m.NumWeights()), train, spec, rand.New(rand.NewPCG(1, 1)))
	require.NoError(t, err)
	return federated.Evaluate(m, upd.Delta, test).Accuracy(), federated.Evaluate(m, w, test).Accuracy(), test.Len()
}

// waitTaskEnded waits for each participant to exit cleanly after seeing
// the task end, having printed the held-out accuracy of the models it got,
// and returns their outputs.
func waitTaskEnded(t *testing.T, parts []*clitest.Proc, within time.Duration) []string {
	t.Helper()
	outs := make([]string, len(parts))
	for i, p := range parts {
		select {
		case err := <-p.Err:
			require.NoError(t, err, "participant %d:\n%s", i, p.Output())
		case <-time.After(within):
			t.Fatalf("participant %d did not finish:\n%s", i, p.Output())
		}
		outs[i] = p.Output()
		t.Logf("participant %d:\n%s", i, outs[i])
		assert.Contains(t, outs[i], "no round is open: the task has ended", "participant %d", i)
		assert.Contains(t, outs[i], "local held-out accuracy", "participant %d", i)
	}
	return outs
}

// freeTierRate and freeTierBurst are the participants' --rate and
// --burst. The free tier (the tests' participants have free keys) allows
// 100 requests a minute with a burst of 100; a participant's own limiter
// keeps it within that however fast rounds go, and the runs that count the
// server's answers assert that none was 429. A burst of 50 leaves room for
// a participant killed and restarted once (the new process's limiter
// starts full while the key's bucket does not): two processes of one key
// in turn make at most 100 + 100 a minute × t requests in any t. A round
// is about nine requests per participant (a look and an answer per phase,
// the round's model), and the runs have at most seven rounds: their
// requests are not spaced, and the rounds go as fast as the participants
// answer. At --rate 100 and the default --burst 5 a round took ~6 s (the
// limiter spacing requests 0.6 s apart), at the default --rate 60 ~10 s.
const (
	freeTierRate  = "100"
	freeTierBurst = "50"
)

// setUp skips the run under -short, runs it beside the others, and
// returns the built binary and the repository's root.
func setUp(t *testing.T) (bin, root string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	require.NoError(t, err)
	return clitest.Binary(t), root
}

// server is a `healthagents serve` process of an end-to-end run.
type server struct {
	*clitest.Proc
	bin, base, log string
	env            []string
}

// startServer starts bin's server on a free loopback port, its data in
// dir/data and its log in dir/server.log (shown, the tail, when the test
// fails), with ADMIN_TOKEN admin and the given settings, and waits until
// it is healthy.
func startServer(t *testing.T, bin, dir, admin string, settings ...string) *server {
	t.Helper()
	zkkeys.Into(t, filepath.Join(dir, "data", "zkp")) // the test cache's Groth16 keys: no set-up at the first start
	port := clitest.FreePort(t)
	s := &server{bin: bin, base: fmt.Sprintf("http://127.0.0.1:%d", port), log: filepath.Join(dir, "server.log"),
		env: append(append(os.Environ(), "DATA_DIR="+filepath.Join(dir, "data"), "HOST=127.0.0.1", fmt.Sprintf("PORT=%d", port),
			"ADMIN_TOKEN="+admin, "LOG_LEVEL=info"), settings...)}
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(s.log)
			t.Logf("server log (tail):\n%s", clitest.Tail(string(b), 4000))
		}
	})
	s.restart(t)
	return s
}

// restart starts the server (again) with the same settings and data,
// appending to the same log, and waits until it is healthy.
func (s *server) restart(t *testing.T) {
	t.Helper()
	s.Proc = clitest.StartProc(t, s.bin, s.env, s.log, "serve")
	clitest.WaitHealthy(t, s.base+"/health")
}

// federatedOrg creates org's key (scope federated, default tier) and
// registers the organization.
func federatedOrg(t *testing.T, adm *client.Client, base, org string) *client.KeyCreated {
	t.Helper()
	ctx := t.Context()
	k := federatedKey(t, adm, org)
	oc, err := client.New(base, client.WithAPIKey(k.APIKey))
	require.NoError(t, err)
	pub, err := ecdh.X25519().GenerateKey(crand.Reader)
	require.NoError(t, err)
	_, err = oc.RegisterFederatedOrganization(ctx, client.OrganizationRequest{
		OrganizationName: org, Endpoint: "https://" + org + ".example", EncryptionKey: hex.EncodeToString(pub.PublicKey().Bytes()),
	})
	require.NoError(t, err)
	return k
}

// federatedKey creates a federated key of organization org and does not
// register the organization: `healthagents participant` registers it.
func federatedKey(t *testing.T, adm *client.Client, org string) *client.KeyCreated {
	t.Helper()
	k, err := adm.CreateKey(t.Context(), &client.CreateKeyRequest{Name: org, Scopes: []string{"federated"}, Organization: org})
	require.NoError(t, err)
	return k
}

// The "done when", over real processes: the binary serves a task
// file (WDBC, DP off); three `healthagents participant` processes, each with
// its own CSV and nothing but an API key (each registers its organization
// itself), train over HTTP with keys of the default (free) tier; one
// participant is killed and restarted, then the coordinator is; the run
// still ends with every round's model, no 429, and the model's held-out
// accuracy is within 0.02 of centralized training on the same records.
func TestFederatedEndToEnd(t *testing.T) {
	bin, root := setUp(t)
	taskPath := filepath.Join(root, "testdata", "wdbc", "task.json")
	dir := t.TempDir()
	csvs := clitest.SplitCSV(t, filepath.Join(root, "testdata", "wdbc", "wdbc.csv"), dir, 3)
	const rounds = 6
	const admin = "federated-e2e-admin-token-0123456789abcdef"
	// A coordinator only: no chain, no decision circuits, no Fernet key.
	srv := startServer(t, bin, dir, admin, "HEALTHAGENTS_ROLE=federated", "FEDERATED_TASK="+taskPath, "FEDERATED_DP=off",
		fmt.Sprintf("FEDERATED_ROUNDS=%d", rounds), "FEDERATED_ROUND_TIMEOUT=2m")
	base := srv.base

	ctx := t.Context()
	adm, err := client.New(base, client.WithAPIKey(admin))
	require.NoError(t, err)
	rk, err := adm.CreateKey(ctx, &client.CreateKeyRequest{Name: "network-operator", Scopes: []string{"federated"}})
	require.NoError(t, err)
	reader, err := client.New(base, client.WithAPIKey(rk.APIKey))
	require.NoError(t, err)
	task, err := reader.FederatedTask(ctx)
	require.NoError(t, err)
	assert.Equal(t, "wdbc/v1", task.ID)
	require.NotNil(t, task.Definition)
	assert.Len(t, task.Definition.Features, 30)
	assert.Equal(t, rounds, task.MaxRounds)
	assert.False(t, task.Privacy.Enabled, "FEDERATED_DP=off")

	// hospital-a is killed once it closed round 1, before it joins round
	// 2; the coordinator once round 3 closed, with round 4 waiting for
	// hospital-b's keys.
	gates := []*gate{newGate(t, base, advertise(2)), newGate(t, base, advertise(4))}
	var parts []*clitest.Proc
	var args [][]string
	for i, path := range csvs {
		org := fmt.Sprintf("hospital-%c", 'a'+i)
		// Nothing but a key: the participant registers its organization.
		k := federatedKey(t, adm, org)
		assert.Equal(t, "free", k.Tier, "the default tier")
		server := base
		if i < len(gates) {
			server = gates[i].url
		}
		a := []string{"participant", "--server", server, "--api-key", k.APIKey, "--data", path, "--rate", freeTierRate, "--burst", freeTierBurst}
		if i > 0 {
			// Named, the default task is trained through its own endpoints
			// (/api/v1/federated/tasks/wdbc%2Fv1/...); hospital-a uses the
			// unscoped ones.
			a = append(a, "--task", "wdbc/v1")
		}
		args = append(args, a)
		parts = append(parts, clitest.StartProc(t, bin, os.Environ(), filepath.Join(dir, org+".out"), a...))
	}

	// A participant killed after round 1 resumes from its state file.
	gates[0].waitHeld(t, 3*time.Minute)
	assert.Contains(t, parts[0].Output(), "round 1 closed")
	require.NoError(t, parts[0].Cmd.Process.Signal(syscall.SIGKILL))
	<-parts[0].Err
	parts[0] = clitest.StartProc(t, bin, os.Environ(), parts[0].Out, args[0]...)
	parts[0].WaitOutput(t, "resuming: 2 rounds joined, last round 1", time.Minute)

	// The coordinator killed after round 3, in round 4, resumes from its
	// database.
	gates[1].waitHeld(t, 3*time.Minute)
	assert.Contains(t, parts[1].Output(), "round 3 closed")
	require.NoError(t, srv.Cmd.Process.Signal(syscall.SIGKILL), "the run must still be going")
	<-srv.Err
	before := strings.Count(clitest.MustRead(t, srv.log), `"msg":"federated round closed"`)
	abandoned := strings.Count(clitest.MustRead(t, srv.log), `"msg":"federated round abandoned"`)
	restarted := time.Now()
	srv.restart(t)
	clitest.WaitHealthy(t, base+"/health")
	t.Logf("federated coordinator healthy again %v after its restart on the existing DATA_DIR", time.Since(restarted).Round(time.Millisecond))
	gates[1].pass()

	waitTaskEnded(t, parts, 5*time.Minute)

	m, err := reader.FederatedModel(ctx)
	require.NoError(t, err)
	assert.Equal(t, rounds-1, m.TrainingRound, "the last round closed")
	var closed int
	_, err = fmt.Sscanf(m.ModelVersion, "1.0.%d", &closed)
	require.NoError(t, err)
	// At most the rounds the two kills interrupted were lost.
	assert.GreaterOrEqual(t, closed, rounds-2, "rounds that produced a model")
	for i, p := range parts {
		assert.Contains(t, p.Output(), "final model "+m.ModelVersion, "participant %d", i)
		assert.Contains(t, p.Output(), fmt.Sprintf("organization hospital-%c registered, X25519 public key", 'a'+i), "participant %d registered itself", i)
	}
	// The evaluation round after the last training round measured the
	// final model: the answer's accuracy is that version's.
	require.NotNil(t, m.Accuracy, "the final model's pooled accuracy")
	assert.Equal(t, m.ModelVersion, m.AccuracyModelVersion)
	assert.Positive(t, m.EvalSamples)
	w, err := client.DecodeWeights(m)
	require.NoError(t, err)
	tf, err := federated.ParseTaskFile(strings.NewReader(clitest.MustRead(t, taskPath)))
	require.NoError(t, err)
	accC, accF, n := centralizedAccuracy(t, tf, csvs, closed*tf.LocalEpochs, w)
	t.Logf("held-out accuracy on %d records: centralized %.4f, federated %.4f (model %s, %d rounds)", n, accC, accF, m.ModelVersion, closed)
	require.Greater(t, accC, 0.9)
	require.InDelta(t, accC, accF, 0.02)

	logs := clitest.MustRead(t, srv.log)
	assert.Greater(t, strings.Count(logs, `"msg":"federated round closed"`), before, "rounds closed after the coordinator's restart")
	assert.Less(t, before, rounds, "the coordinator was killed mid-run")
	// Its deadlines are uptime: the round it was killed in resumed with
	// its deadlines moved on by the downtime, and no round was lost.
	assert.Contains(t, logs, `"msg":"federated round resumed"`)
	assert.Equal(t, abandoned, strings.Count(logs, `"msg":"federated round abandoned"`), "no round abandoned after the restart")
	assert.Contains(t, logs, `"route":"GET /api/v1/federated/rounds/current"`, "the requests are in the log")
	assert.Contains(t, logs, `"route":"GET /api/v1/federated/tasks/{task}/rounds/current"`, "the task's own endpoints")
	assert.NotContains(t, logs, `"status":429`, "the participants' polling fits the free tier")
	for _, name := range []string{"chain", "fernet.key"} {
		_, err := os.Stat(filepath.Join(dir, "data", name))
		assert.ErrorIs(t, err, os.ErrNotExist, "a federated-only coordinator keeps no %s", name)
	}
	require.NoError(t, srv.Cmd.Process.Signal(syscall.SIGTERM))
	<-srv.Err
}
