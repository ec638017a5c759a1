package federated

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/federated/dp"
	"github.com/healthagents/healthagents/record"
)

const sampleTaskFile = `{
  "id": "diabetes/v2",
  "features": [
    {"name": "glucose", "column": "Glucose", "mean": 120, "scale": 30},
    {"name": "bmi", "mean": 28, "scale": 6},
    {"name": "age", "mean": 50, "scale": 15}
  ],
  "label": {"positive": "positive", "negative": "negative"},
  "model": {"type": "logistic_regression", "l2": 0.001},
  "learning_rate": 0.5,
  "local_epochs": 5,
  "held_out": 0.25
}`

func TestParseTaskFile(t *testing.T) {
	t.Parallel()
	tf, err := ParseTaskFileBytes([]byte(sampleTaskFile))
	require.NoError(t, err)
	assert.Equal(t, "Glucose", tf.Features[0].Column)
	assert.Equal(t, "bmi", tf.Features[1].Column, "column defaults to the name")
	assert.Equal(t, 0.25, tf.HeldOut)
	task := tf.Task()
	require.NoError(t, task.Validate())
	assert.Equal(t, "diabetes/v2", task.Name)
	assert.Equal(t, TrainingSpec{Epochs: 5, LearningRate: 0.5}, task.Training)
	assert.Len(t, task.Features, 3)

	for name, tc := range map[string]struct{ from, to, field string }{
		"bad id":                  {`"diabetes/v2"`, `"../x y"`, "id "},
		"repeated":                {`"name": "bmi"`, `"name": "glucose"`, "features[1].name"},
		"zero scale":              {`"scale": 6`, `"scale": 0`, "features[1].scale"},
		"learned without range":   {`"mean": 28`, `"scaling": "learned", "mean": 28`, "features[1].range"},
		"learned with mean":       {`"mean": 28`, `"scaling": "learned", "range": [10, 60], "mean": 28`, "features[1].scaling"},
		"learned empty range":     {`"mean": 28`, `"scaling": "learned", "range": [60, 10], "mean": 28`, "features[1].range"},
		"range of given":          {`"mean": 28`, `"range": [10, 60], "mean": 28`, "features[1].range"},
		"softmax without classes": {`"logistic_regression"`, `"softmax"`, "label.classes"},
		"unknown model":           {`"logistic_regression"`, `"forest"`, "model.type"},
		"same labels":             {`"negative": "negative"`, `"negative": "positive"`, "label"},
		"learning rate":           {`"learning_rate": 0.5`, `"learning_rate": -1`, "learning_rate"},
		"epochs":                  {`"local_epochs": 5`, `"local_epochs": 0`, "local_epochs"},
		"held out":                {`"held_out": 0.25`, `"held_out": 1`, "held_out"},
		"unknown field":           {`"held_out": 0.25`, `"held_out": 0.25, "epsilon": 3`, `unknown field "epsilon"`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseTaskFileBytes([]byte(strings.Replace(sampleTaskFile, tc.from, tc.to, 1)))
			require.ErrorIs(t, err, ErrTask)
			assert.Contains(t, err.Error(), tc.field)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}

func TestSettingsFromEnv(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	s, err := SettingsFromEnv(env(nil))
	require.NoError(t, err)
	assert.True(t, s.Privacy)
	assert.Equal(t, 0.1, s.Epsilon)

	s, err = SettingsFromEnv(env(map[string]string{
		"FEDERATED_TASK": "/etc/task.json", "FEDERATED_EPSILON": "3", "FEDERATED_DELTA": "1e-6",
		"FEDERATED_CLIP_NORM": "2", "FEDERATED_ROUNDS": "20", "FEDERATED_MIN_PARTICIPANTS": "4",
		"FEDERATED_TARGET_PARTICIPANTS": "5", "FEDERATED_ROUND_TIMEOUT": "10m",
	}))
	require.NoError(t, err)
	cfg := s.Config(DefaultTask())
	assert.Equal(t, "/etc/task.json", s.TaskFile)
	assert.Equal(t, 3.0, cfg.Privacy.Budget.Epsilon)
	assert.Equal(t, 1e-6, cfg.Privacy.Budget.Delta)
	assert.Equal(t, 2.0, cfg.ClipNorm)
	assert.Equal(t, 20, cfg.MaxRounds)
	assert.Equal(t, 4, cfg.MinParticipants)
	assert.Equal(t, 5, cfg.TargetParticipants)
	assert.Equal(t, 10*time.Minute, cfg.RoundTimeout)
	_, err = NewCoordinator(t.Context(), newMemStore(), cfg)
	require.NoError(t, err)

	off, err := SettingsFromEnv(env(map[string]string{"FEDERATED_DP": "off"}))
	require.NoError(t, err)
	assert.True(t, off.Config(DefaultTask()).DisablePrivacy)

	for name, val := range map[string]string{
		"FEDERATED_DP": "maybe", "FEDERATED_EPSILON": "-1", "FEDERATED_DELTA": "1",
		"FEDERATED_CLIP_NORM": "NaN", "FEDERATED_ROUNDS": "0", "FEDERATED_MIN_PARTICIPANTS": "2",
		"FEDERATED_TARGET_PARTICIPANTS": "x", "FEDERATED_ROUND_TIMEOUT": "10",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := SettingsFromEnv(env(map[string]string{name: val}))
			require.ErrorIs(t, err, ErrConfig)
			assert.Contains(t, err.Error(), name+"=")
			assert.NotContains(t, err.Error(), "\n")
		})
	}
	_, err = SettingsFromEnv(env(map[string]string{"FEDERATED_MIN_PARTICIPANTS": "5", "FEDERATED_TARGET_PARTICIPANTS": "4"}))
	assert.ErrorContains(t, err, "FEDERATED_TARGET_PARTICIPANTS")
}

// Two tasks run side by side with their own rounds and budgets.
func TestTasksSideBySide(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ts := NewTasks()
	a := DefaultConfig()
	a.TargetParticipants, a.MaxRounds = 3, 10
	a.Privacy = &PrivacyConfig{Budget: dp.Budget{Epsilon: 3, Delta: 1e-5}}
	b := DefaultConfig()
	b.DisablePrivacy = true
	ca, err := ts.Start(ctx, "task-a", newMemStore(), a)
	require.NoError(t, err)
	cb, err := ts.Start(ctx, "task-b", newMemStore(), b)
	require.NoError(t, err)
	_, err = ts.Start(ctx, "task-a", newMemStore(), a)
	require.ErrorIs(t, err, ErrTaskExists)
	_, err = ts.Get("task-c")
	require.ErrorIs(t, err, ErrUnknownTask)
	assert.Equal(t, []string{"task-a", "task-b"}, ts.IDs())

	before := ca.Privacy()
	assert.Equal(t, PrivacyStatus{Enabled: true, Epsilon: 3, Delta: 1e-5, EpsilonLeft: 3, Noise: "central"}, before)
	ps, _ := cohortParticipants(t, 3, 100, 61)
	runRound(t, ctx, ca, ps)
	after := ca.Privacy()
	assert.Equal(t, 1, after.RoundsReleased)
	assert.Greater(t, after.EpsilonSpent, 0.0)
	assert.InDelta(t, 3-after.EpsilonSpent, after.EpsilonLeft, 1e-12)
	assert.Equal(t, PrivacyStatus{}, cb.Privacy(), "task b has DP off and is untouched")
	sb, err := cb.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, 0, sb.Round)
	got, err := ts.Get("task-a")
	require.NoError(t, err)
	assert.Same(t, ca, got)
}

func TestReadCSV(t *testing.T) {
	t.Parallel()
	tf, err := ParseTaskFileBytes([]byte(strings.Replace(sampleTaskFile, `"held_out": 0.25`, `"held_out": 0.25, "missing": "mean"`, 1)))
	require.NoError(t, err)
	recs, err := tf.ReadCSV(strings.NewReader("patient_id,Glucose,bmi,age,diagnosis\np1,140,31.5,NA,positive\np2,95,,40,negative\n"))
	require.NoError(t, err)
	require.Len(t, recs, 2)
	assert.Equal(t, "p1", recs[0].PatientID)
	assert.Equal(t, map[string]float64{"glucose": 140, "bmi": 31.5}, recs[0].Observations)
	assert.Equal(t, "negative", recs[1].Diagnosis)
	ds, skipped, err := tf.Task().Examples(recs)
	require.NoError(t, err)
	assert.Zero(t, skipped)
	assert.Equal(t, []float64{1, 0}, ds.Y)

	for name, tc := range map[string]struct{ csv, want string }{
		"missing column": {"patient_id,bmi,age,diagnosis\n", `no column "Glucose"`},
		"missing label":  {"Glucose,bmi,age\n", `no label column "diagnosis"`},
		"not a number":   {"Glucose,bmi,age,diagnosis\n12x,1,2,positive\n", `line 2, column "Glucose"`},
		"ragged row":     {"Glucose,bmi,age,diagnosis\n1,2\n", "line 2"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := tf.ReadCSV(strings.NewReader(tc.csv))
			require.ErrorIs(t, err, ErrTask)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "12x", "values are not echoed")
		})
	}
}

func TestParseSoftmaxTaskFile(t *testing.T) {
	t.Parallel()
	src := strings.Replace(strings.Replace(sampleTaskFile, `"logistic_regression"`, `"softmax"`, 1),
		`"label": {"positive": "positive", "negative": "negative"}`, `"label": {"column": "triage", "classes": ["low", "mid", "high"]}`, 1)
	tf, err := ParseTaskFileBytes([]byte(src))
	require.NoError(t, err)
	task := tf.Task()
	m, err := task.NewModel()
	require.NoError(t, err)
	assert.Equal(t, 3*4, m.NumWeights())
	assert.Equal(t, "triage", tf.Label.Column)
	both := strings.Replace(src, `"classes"`, `"positive": "x", "classes"`, 1)
	_, err = ParseTaskFileBytes([]byte(both))
	assert.ErrorContains(t, err, "task file: label ")
}

// TestReadCSVReport: rows whose label the task does not know are counted
// with their values and left out; an empty cell refuses the data under
// "refuse" (the default), naming where, is imputed under "mean" and read as
// 0 under "zero"; more than the allowed share of unusable rows refuses.
func TestReadCSVReport(t *testing.T) {
	t.Parallel()
	const data = "patient_id,Glucose,bmi,age,diagnosis\n" +
		"p1,140,31.5,60,positive\np2,95,,40,negative\np3,100,22,NA,negative\np4,101,23,41,flu\np5,99,24,44,negative\n" +
		"p6,98,25,45,PENDING\np7,97,26,46,flu\n"
	read := func(missing string) ([]*record.Record, CSVReport) {
		t.Helper()
		file := sampleTaskFile
		if missing != "" {
			file = strings.Replace(file, `"held_out": 0.25`, `"held_out": 0.25, "missing": "`+missing+`"`, 1)
		}
		tf, err := ParseTaskFileBytes([]byte(file))
		require.NoError(t, err)
		recs, rep, err := tf.ReadCSVReport(strings.NewReader(data))
		require.NoError(t, err)
		return recs, rep
	}

	recs, rep := read("")
	assert.Equal(t, CSVReport{Read: 7, Used: 2, UnknownLabel: 3, UnknownValues: []string{"PENDING", "flu"}, TaskValues: []string{"positive", "negative"},
		Missing: MissingRefuse, MissingCells: 2, MissingRows: 2, Where: []string{`line 3 column "bmi"`, `line 4 column "age"`}}, rep)
	assert.Len(t, recs, 2)
	err := rep.Check(1)
	require.ErrorIs(t, err, ErrTask)
	assert.Contains(t, err.Error(), `data: 7 rows read, 2 used, 5 skipped (3 with a label value the task does not know ("PENDING", "flu"; the task's: "positive", "negative"); 2 with an empty cell (line 3 column "bmi", line 4 column "age") while the task file says missing: refuse)`)

	recs, rep = read(MissingMean)
	assert.Equal(t, 4, rep.Used)
	assert.Equal(t, `data: 7 rows read, 4 used, 3 skipped (3 with a label value the task does not know ("PENDING", "flu"; the task's: "positive", "negative")); 2 empty cells imputed as the feature's mean (missing: mean)`, rep.String())
	assert.NotContains(t, recs[1].Observations, "bmi", "left missing: the task imputes the mean")
	require.NoError(t, rep.Check(0.5))
	err = rep.Check(0.4)
	require.ErrorIs(t, err, ErrTask)
	assert.Contains(t, err.Error(), "refused: more than 40% of the rows are unusable")
	_, err = ParseTaskFileBytes([]byte(strings.Replace(sampleTaskFile, `"held_out": 0.25`, `"held_out": 0.25, "missing": "median"`, 1)))
	assert.ErrorContains(t, err, `missing must be "refuse", "mean" or "zero", not "median"`)

	recs, rep = read(MissingZero)
	assert.Equal(t, 0.0, recs[1].Observations["bmi"])
	assert.Contains(t, rep.String(), "2 empty cells read as 0 (missing: zero)")

	// The report lists at most ten values, each cut to 32 bytes.
	var b strings.Builder
	b.WriteString("Glucose,bmi,age,diagnosis\n")
	for i := range 30 {
		fmt.Fprintf(&b, "1,2,3,label-%02d-%s\n", i, strings.Repeat("x", 40))
	}
	b.WriteString("1,2,3,positive\n")
	tf, err := ParseTaskFileBytes([]byte(sampleTaskFile))
	require.NoError(t, err)
	_, rep, err = tf.ReadCSVReport(strings.NewReader(b.String()))
	require.NoError(t, err)
	assert.Equal(t, 30, rep.UnknownLabel)
	assert.Len(t, rep.UnknownValues, 10)
	for _, v := range rep.UnknownValues {
		assert.LessOrEqual(t, len(v), 32+len("…"))
	}
}
