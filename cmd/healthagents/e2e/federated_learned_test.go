package e2e

import (
	"encoding/json"
	"fmt"
	"math"
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
)

// pooledCSVScaling is the mean and population standard deviation of each
// learned feature over the training records of every CSV (the held-out
// split set aside as each participant does), values clipped to the range.
func pooledCSVScaling(t *testing.T, tf *federated.TaskFile, csvs []string) []federated.LearnedScaling {
	t.Helper()
	var out []federated.LearnedScaling
	for _, f := range tf.Features {
		var n, s1, s2 float64
		for _, path := range csvs {
			recs := clitest.ReadCSV(t, tf, path)
			train, _ := federated.SplitHeldOut(recs, tf.HeldOut)
			for _, r := range train {
				v, ok := r.Observations[f.Name]
				if !ok || (r.Diagnosis != tf.Label.Positive && r.Diagnosis != tf.Label.Negative) {
					continue
				}
				v = math.Max(f.Range[0], math.Min(f.Range[1], v))
				n, s1, s2 = n+1, s1+v, s2+v*v
			}
		}
		m := s1 / n
		out = append(out, federated.LearnedScaling{Name: f.Name, Mean: m, Scale: math.Sqrt(s2/n - m*m), Count: int64(n)})
	}
	return out
}

// Issue #18's learned scaling, tasks side by side and encrypted-records
// input over real processes: the binary serves the WDBC task file as its
// default task, and an admin creates, over the API, a second task whose 30
// features are all "learned" (no mean or scale given), with its own number
// of rounds; the participants train that task (--task). Two hospitals
// train from CSV and the third
// from Fernet-encrypted records opened with its own key file. Round 0 is
// the statistics round; the hospital reading encrypted records is killed
// right after it and resumes from its state file; the scaling the server
// publishes is the pooled statistics of the three hospitals' training
// records, and the model trained with it is within 0.02 of centralized
// training with those statistics. Run with the wrong key, the participant
// stops with one clear line.
func TestFederatedLearnedScalingEndToEnd(t *testing.T) {
	bin, root := setUp(t)
	taskPath := filepath.Join(root, "testdata", "wdbc", "task-learned.json")
	tf, err := federated.ParseTaskFile(strings.NewReader(clitest.MustRead(t, taskPath)))
	require.NoError(t, err)
	dir := t.TempDir()
	csvs := clitest.SplitCSV(t, filepath.Join(root, "testdata", "wdbc", "wdbc.csv"), dir, 3)
	keyFile := filepath.Join(dir, "hospital-c.key")
	records := filepath.Join(dir, "hospital-c.ndjson")
	nrec := clitest.SealCSV(t, tf, csvs[2], records, clitest.WriteKey(t, keyFile))

	const rounds = 6 // the statistics round and five training rounds
	const admin = "federated-learned-admin-token-0123456789abcdef"
	srv := startServer(t, bin, dir, admin, "FEDERATED_TASK="+filepath.Join(root, "testdata", "wdbc", "task.json"), "FEDERATED_DP=off",
		"FEDERATED_ROUNDS=2", "FEDERATED_ROUND_TIMEOUT=2m")
	base := srv.base

	ctx := t.Context()
	adm, err := client.New(base, client.WithAPIKey(admin))
	require.NoError(t, err)
	var def client.TaskDefinition
	require.NoError(t, json.Unmarshal([]byte(clitest.MustRead(t, taskPath)), &def))
	nrounds := rounds
	// Creating a task takes a key with the federated and keys:admin scopes
	// bound to no organization (ADMIN_TOKEN itself only issues keys).
	tk, err := adm.CreateKey(ctx, &client.CreateKeyRequest{Name: "network-admin", Scopes: []string{"federated", "keys:admin"}})
	require.NoError(t, err)
	networkAdmin, err := client.New(base, client.WithAPIKey(tk.APIKey))
	require.NoError(t, err)
	created, err := networkAdmin.CreateFederatedTask(ctx, client.FederatedTaskRequest{Task: def, Settings: &client.FederatedRunSettings{Rounds: &nrounds}})
	require.NoError(t, err)
	assert.Equal(t, tf.ID, created.ID)
	assert.Equal(t, rounds, created.MaxRounds, "the task's own rounds, not FEDERATED_ROUNDS")
	rk, err := adm.CreateKey(ctx, &client.CreateKeyRequest{Name: "network-operator", Scopes: []string{"federated"}})
	require.NoError(t, err)
	operator, err := client.New(base, client.WithAPIKey(rk.APIKey))
	require.NoError(t, err)
	tasks, err := client.All(operator.ListFederatedTasks(ctx))
	require.NoError(t, err)
	require.Len(t, tasks, 2)
	assert.Equal(t, []string{"wdbc/v1", "wdbc-learned/v1"}, []string{tasks[0].ID, tasks[1].ID}, "the default task first")
	assert.True(t, tasks[0].Default)
	reader := operator.ForFederatedTask(tf.ID)
	task, err := reader.FederatedTask(ctx)
	require.NoError(t, err)
	require.NotNil(t, task.Definition)
	assert.Equal(t, "learned", task.Definition.Features[0].Scaling)
	assert.Equal(t, []float64{0, 50}, task.Definition.Features[0].Range)
	assert.Nil(t, task.LearnedScaling, "nothing learned before the statistics round")

	// hospital-c is killed once the statistics round closed, before it
	// joins round 1.
	cGate := newGate(t, base, advertise(1))
	var args [][]string
	for i, path := range csvs {
		org := fmt.Sprintf("hospital-%c", 'a'+i)
		key := federatedOrg(t, adm, base, org).APIKey
		server := base
		if i == 2 {
			server = cGate.url
		}
		a := []string{"participant", "--server", server, "--api-key", key, "--task", tf.ID, "--rate", freeTierRate, "--burst", freeTierBurst}
		if i == 2 {
			a = append(a, "--records", records, "--key-file", keyFile)
		} else {
			a = append(a, "--data", path)
		}
		args = append(args, a)
	}

	// The wrong key: one clear line, and the process stops.
	wrongKey := filepath.Join(dir, "wrong.key")
	clitest.WriteKey(t, wrongKey)
	wrongArgs := append(args[2][:len(args[2])-1:len(args[2])-1], wrongKey)
	bad := clitest.StartProc(t, bin, os.Environ(), filepath.Join(dir, "wrong.out"), wrongArgs...)
	select {
	case err := <-bad.Err:
		require.Error(t, err, "a wrong key fails the participant")
	case <-time.After(time.Minute):
		t.Fatal("the participant with the wrong key did not stop")
	}
	assert.Contains(t, bad.Output(), fmt.Sprintf("--key-file opens none of the %d envelopes in %s: wrong key?", nrec, records))
	assert.Equal(t, 1, strings.Count(strings.TrimSpace(bad.Output()), "\n")+1, "one line:\n%s", bad.Output())

	var parts []*clitest.Proc
	for i, a := range args {
		parts = append(parts, clitest.StartProc(t, bin, os.Environ(), filepath.Join(dir, fmt.Sprintf("hospital-%c.out", 'a'+i)), a...))
	}
	parts[2].WaitOutput(t, fmt.Sprintf("records: %d envelopes opened", nrec), time.Minute)

	// The encrypted-records participant, killed once the statistics round
	// closed, resumes from its state file.
	cGate.waitHeld(t, 3*time.Minute)
	assert.Contains(t, parts[2].Output(), "round 0 closed: statistics round, scaling of 30 learned features from 3 organizations")
	require.NoError(t, parts[2].Cmd.Process.Signal(syscall.SIGKILL))
	<-parts[2].Err
	var state struct {
		LearnedScaling []json.RawMessage `json:"learned_scaling"`
	}
	require.NoError(t, json.Unmarshal([]byte(clitest.MustRead(t, records+".participant.json")), &state))
	assert.Len(t, state.LearnedScaling, 30, "the state file keeps the learned scaling")
	parts[2] = clitest.StartProc(t, bin, os.Environ(), parts[2].Out, args[2]...)
	parts[2].WaitOutput(t, "resuming: 1 rounds joined, last round 0", time.Minute)

	waitTaskEnded(t, parts, 6*time.Minute)

	m, err := reader.FederatedModel(ctx)
	require.NoError(t, err)
	assert.Equal(t, rounds-1, m.TrainingRound, "the last round closed")
	var versions int
	_, err = fmt.Sscanf(m.ModelVersion, "1.0.%d", &versions)
	require.NoError(t, err)
	trained := versions - 1 // the statistics round made a version too
	assert.GreaterOrEqual(t, trained, rounds-2, "training rounds that produced a model (one lost to the kill)")
	task, err = reader.FederatedTask(ctx)
	require.NoError(t, err)
	require.Len(t, task.LearnedScaling, 30)
	assert.Equal(t, task.LearnedScaling, m.Scaling, "the model carries the scaling the task publishes")

	// The learned scaling is the pooled statistics, within fixed-point error.
	want := pooledCSVScaling(t, tf, csvs)
	given := *tf
	given.Features = nil
	for i, f := range tf.Features {
		got := task.LearnedScaling[i]
		r := f.Range[1] - f.Range[0]
		assert.Equal(t, f.Name, got.Name)
		assert.Equal(t, want[i].Count, got.Count, f.Name)
		assert.InDelta(t, want[i].Mean, got.Mean, r*1e-8, f.Name)
		assert.InDelta(t, want[i].Scale, got.Scale, r*1e-8, f.Name)
		given.Features = append(given.Features, federated.FeatureSpec{Name: f.Name, Column: f.Column, Scaling: "given", Mean: want[i].Mean, Scale: want[i].Scale})
	}
	require.NoError(t, given.Validate())

	w, err := client.DecodeWeights(m)
	require.NoError(t, err)
	accC, accF, n := centralizedAccuracy(t, &given, csvs, trained*tf.LocalEpochs, w)
	t.Logf("held-out accuracy on %d records: centralized with the pooled statistics %.4f, federated with the learned scaling %.4f (model %s, %d training rounds)", n, accC, accF, m.ModelVersion, trained)
	require.Greater(t, accC, 0.9)
	require.InDelta(t, accC, accF, 0.02)

	logs := clitest.MustRead(t, srv.log)
	assert.Contains(t, logs, `"msg":"federated statistics round closed"`)
	assert.NotContains(t, logs, `"status":429`, "the participants' polling fits the free tier")
	// The default task ran beside it, untouched: nobody joined its rounds.
	dm, err := operator.FederatedModel(ctx)
	require.NoError(t, err)
	assert.Equal(t, "1.0.0", dm.ModelVersion, "the default task's model")
	for _, p := range parts {
		assert.NotContains(t, p.Output(), "842302", "no record content in a participant's output")
	}
	require.NoError(t, srv.Cmd.Process.Signal(syscall.SIGTERM))
	<-srv.Err
}
