package store_test

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/federated/dp"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

// change is a coordinator's first writes: the initial model, round 0 with
// one submission, and the ledger.
func change(version string, eps float64) federated.Change {
	return federated.Change{
		Rounds:     []*federated.RoundState{{Number: 0, Phase: federated.PhaseAdvertiseKeys, TaskHash: "h-" + version}},
		Submission: &federated.Submission{Round: 0, Org: "hospital-a"},
		Model:      &federated.ModelVersion{Version: version, Round: -1, Hash: "hash-" + version, Weights: []float64{1, 2}},
		Ledger:     &dp.Ledger{Budget: dp.Budget{Epsilon: eps, Delta: 1e-5}},
	}
}

// TestFederatedStoreTasksApart: two tasks on one database keep their own
// rounds, submissions, model history and ledger; the same model version
// and round numbers exist in both.
func TestFederatedStoreTasksApart(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		ctx := t.Context()
		fs, err := store.NewFederatedStore(db)
		require.NoError(t, err)
		a, b := fs, fs.ForTask("sepsis")
		assert.Empty(t, a.Task())
		assert.Equal(t, "sepsis", b.Task())
		for _, s := range []*store.FederatedStore{a, b} {
			snap, err := s.LoadFederated(ctx)
			require.NoError(t, err)
			assert.Nil(t, snap)
		}
		require.NoError(t, a.SaveFederated(ctx, change("1.0.0", 1)))
		snap, err := b.LoadFederated(ctx)
		require.NoError(t, err)
		assert.Nil(t, snap, "the other task sees nothing of the default task's")
		require.NoError(t, b.SaveFederated(ctx, change("1.0.0", 3)), "same version and round numbers in another task")
		require.NoError(t, b.SaveFederated(ctx, federated.Change{Submission: &federated.Submission{Round: 0, Org: "hospital-b"}}))

		sa, err := a.LoadFederated(ctx)
		require.NoError(t, err)
		sb, err := b.LoadFederated(ctx)
		require.NoError(t, err)
		assert.Equal(t, "h-1.0.0", sa.Round.TaskHash)
		assert.Len(t, sa.Submissions, 1)
		assert.Len(t, sb.Submissions, 2)
		assert.Equal(t, 1.0, sa.Ledger.Budget.Epsilon)
		assert.Equal(t, 3.0, sb.Ledger.Budget.Epsilon)
		assert.Len(t, sa.History, 1)
		assert.Len(t, sb.History, 1)

		// A round's figures go on the version they measure, in this task
		// only; an unknown version is refused and changes nothing.
		ev := *change("1.0.0", 1).Model
		ev.Metrics = &federated.Metrics{Accuracy: 0.9, EvalSamples: 10, EvaluatedVersion: "1.0.0"}
		require.NoError(t, a.SaveFederated(ctx, federated.Change{Evaluated: &ev}))
		ghost := ev
		ghost.Version = "1.0.9"
		require.Error(t, a.SaveFederated(ctx, federated.Change{Evaluated: &ghost, Ledger: &dp.Ledger{}}))
		sa, err = a.LoadFederated(ctx)
		require.NoError(t, err)
		require.NotNil(t, sa.History[0].Metrics)
		assert.InDelta(t, 0.9, sa.History[0].Metrics.Accuracy, 0)
		assert.Equal(t, 1.0, sa.Ledger.Budget.Epsilon, "the refused change left the ledger")
		sb, err = b.LoadFederated(ctx)
		require.NoError(t, err)
		assert.Nil(t, sb.History[0].Metrics)

		fenced := b.WithLeaseFence("federated:task:sepsis", "nobody", 1)
		assert.Equal(t, "sepsis", fenced.Task(), "a fence keeps the task")
		require.ErrorIs(t, fenced.SaveFederated(ctx, federated.Change{}), store.ErrFenced)
	})
}

// TestFederatedTaskSpecs: created tasks are kept with their settings and
// listed oldest first; an id is taken once.
func TestFederatedTaskSpecs(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		ctx := t.Context()
		fs, err := store.NewFederatedStore(db)
		require.NoError(t, err)
		got, err := fs.Tasks(ctx)
		require.NoError(t, err)
		assert.Empty(t, got)
		at := time.Date(2026, 11, 25, 11, 0, 0, 0, time.UTC)
		mk := func(id string, eps float64, at time.Time) federated.TaskSpec {
			tf := &federated.TaskFile{ID: id, Features: []federated.FeatureSpec{{Name: "age", Mean: 50, Scale: 10}},
				Label: federated.LabelSpec{Positive: "E11", Negative: "none"}, Model: federated.ModelSpec{Type: "logistic_regression"},
				LearningRate: 0.5, LocalEpochs: 2}
			require.NoError(t, tf.Validate())
			return federated.TaskSpec{File: tf, CreatedBy: "key_admin", CreatedAt: at,
				Run: federated.RunSettings{Privacy: true, Epsilon: eps, Delta: 1e-5, ClipNorm: 1, Rounds: 10, MinParticipants: 3, RoundTimeout: time.Minute}}
		}
		first, second := mk("diabetes", 3, at), mk("sepsis", 8, at.Add(time.Second))
		require.NoError(t, fs.CreateTask(ctx, second))
		require.NoError(t, fs.CreateTask(ctx, first))
		require.ErrorIs(t, fs.CreateTask(ctx, mk("sepsis", 1, at)), store.ErrTaskExists)
		got, err = fs.Tasks(ctx)
		require.NoError(t, err)
		require.Len(t, got, 2)
		assert.Equal(t, first, got[0])
		assert.Equal(t, second, got[1], "kept as created, not replaced by the duplicate")
	})
}

// TestFederatedTasksMigration: the federated state of a database from
// before migration 0015 becomes the default task's (task ""), so an
// upgraded coordinator resumes where it stopped.
func TestFederatedTasksMigration(t *testing.T) {
	t.Parallel()
	all, err := store.ParseMigrations(os.DirFS("migrations"))
	require.NoError(t, err)
	var before []store.Migration
	for _, m := range all {
		if m.Version < 15 {
			before = append(before, m)
		}
	}
	require.Less(t, len(before), len(all), "migration 0015 exists")
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			old := storetest.Open(t, b, store.WithMigrations(before))
			ch := change("1.0.0", 2)
			js := func(v any) string {
				b, err := json.Marshal(v)
				require.NoError(t, err)
				return string(b)
			}
			for _, q := range []struct {
				sql  string
				args []any
			}{
				{`INSERT INTO federated_models (seq, version, round, hash, body, created_at) VALUES (1, ?, -1, ?, ?, 1)`, []any{ch.Model.Version, ch.Model.Hash, js(ch.Model)}},
				{`INSERT INTO federated_rounds (number, phase, state, updated_at) VALUES (0, ?, ?, 1)`, []any{string(ch.Rounds[0].Phase), js(ch.Rounds[0])}},
				{`INSERT INTO federated_submissions (round, seq, org, body, created_at) VALUES (0, 1, 'hospital-a', ?, 1)`, []any{js(ch.Submission)}},
				{`INSERT INTO federated_ledger (id, body, updated_at) VALUES (1, ?, 1)`, []any{js(ch.Ledger)}},
			} {
				_, err := old.SQL().ExecContext(ctx, old.Rebind(q.sql), q.args...)
				require.NoError(t, err, q.sql)
			}
			require.NoError(t, old.Close())

			db := storetest.Open(t, b)
			fs, err := store.NewFederatedStore(db)
			require.NoError(t, err)
			snap, err := fs.LoadFederated(ctx)
			require.NoError(t, err)
			require.NotNil(t, snap, "the default task keeps the rows")
			assert.Equal(t, "1.0.0", snap.History[0].Version)
			assert.Equal(t, "h-1.0.0", snap.Round.TaskHash)
			assert.Len(t, snap.Submissions, 1)
			assert.Equal(t, 2.0, snap.Ledger.Budget.Epsilon)
			other, err := fs.ForTask("sepsis").LoadFederated(ctx)
			require.NoError(t, err)
			assert.Nil(t, other)
			require.NoError(t, fs.SaveFederated(ctx, federated.Change{Model: &federated.ModelVersion{Version: "1.0.1", Round: 0, Hash: "x"}}),
				"the default task goes on writing after the upgrade")
		})
	}
}
