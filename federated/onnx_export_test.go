package federated

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/federated/onnx/onnxtest"
	"github.com/healthagents/healthagents/record"
)

// classProbabilities is what the service predicts for a standardized row,
// in the order of Task.ONNXClasses.
func classProbabilities(m Model, w, x []float64) []float64 {
	if s, ok := m.(*Softmax); ok {
		p := make([]float64, s.classes)
		s.probs(w, x, p)
		return p
	}
	p := m.Predict(w, x)
	return []float64{1 - p, p}
}

// onnxRows are the held-out records' raw feature values, and rows a
// hospital's file may hold too: values missing, far outside every range,
// and a mix.
func onnxRows(t *testing.T, task Task, heldOut float64, cohorts [][]*record.Record) [][]float64 {
	t.Helper()
	var rows [][]float64
	for _, c := range cohorts {
		_, test := SplitHeldOut(c, heldOut)
		raw, _, err := task.rawExamples(test)
		require.NoError(t, err)
		rows = append(rows, raw.X...)
	}
	require.NotEmpty(t, rows)
	n := len(task.Features)
	missing, huge, tiny, mixed := make([]float64, n), make([]float64, n), make([]float64, n), slices.Clone(rows[0])
	for i := range n {
		missing[i], huge[i], tiny[i] = math.NaN(), 1e9, -1e9
		if i%2 == 0 {
			mixed[i] = math.NaN()
		}
	}
	return append(rows, missing, huge, tiny, mixed)
}

// The ONNX export, run by onnxruntime, gives the service's class
// probabilities and predicted class on every held-out row of the hospitals
// (and on rows with missing and out-of-range values): for a model trained
// by three WDBC hospitals through the secure sum, for a task whose scaling
// the statistics round learned (clipping to the feature ranges in the
// graph), and for a softmax model.
func TestONNXExportMatchesService(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	type tc struct {
		task    Task
		columns []string
		version ModelVersion
		rows    [][]float64
	}
	cases := map[string]func(t *testing.T) tc{
		"wdbc, three hospitals": func(t *testing.T) tc {
			tf, recs := loadWDBC(t)
			cohorts := splitWDBC(recs, 3, false, 1)
			ps := wdbcParticipants(t, tf, cohorts)
			cfg := noDPConfig(newFakeClock(), len(ps))
			cfg.Task, cfg.MaxRounds = tf.Task(), 5
			c, err := NewCoordinator(ctx, newMemStore(), cfg)
			require.NoError(t, err)
			for range 5 {
				runRound(t, ctx, c, ps)
			}
			m, err := c.Model(ctx)
			require.NoError(t, err)
			require.Equal(t, "1.0.5", m.Version)
			return tc{tf.Task(), tf.Columns(), m, onnxRows(t, tf.Task(), tf.HeldOut, cohorts)}
		},
		"wdbc, learned scaling": func(t *testing.T) tc {
			tf, recs := loadWDBCLearned(t)
			cohorts := splitWDBC(recs, 3, true, 2)
			task := tf.Task()
			sc := pooledScaling(t, task, tf.HeldOut, cohorts)
			scaled, err := task.WithScaling(sc)
			require.NoError(t, err)
			var train Dataset
			for _, co := range cohorts {
				tr, _ := SplitHeldOut(co, tf.HeldOut)
				d, _, err := scaled.Examples(tr)
				require.NoError(t, err)
				train.X, train.Y = append(train.X, d.X...), append(train.Y, d.Y...)
			}
			w := centralized(t, ctx, scaled, train, 50)
			h, err := ModelHash(w)
			require.NoError(t, err)
			return tc{task, nil, ModelVersion{Version: "1.0.3", Hash: h, Weights: w, Scaling: sc}, onnxRows(t, task, tf.HeldOut, cohorts)}
		},
		"softmax": func(t *testing.T) tc {
			task := triageTask()
			recs := classRecords(300, 9, "s")
			d, _, err := task.Examples(recs)
			require.NoError(t, err)
			w := centralized(t, ctx, task, d, 100)
			h, err := ModelHash(w)
			require.NoError(t, err)
			return tc{task, nil, ModelVersion{Version: "1.0.7", Hash: h, Weights: w}, onnxRows(t, task, 0.2, [][]*record.Record{recs})}
		},
	}
	for name, build := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := build(t)
			model, err := ExportONNX(c.task, c.columns, c.version)
			require.NoError(t, err)
			got := onnxtest.Run(t, model, c.rows)
			assert.Equal(t, []string{ONNXInput}, got.Inputs)
			assert.Equal(t, []string{ONNXProbabilities, ONNXClass}, got.Outputs)

			task := c.task
			if task.Learns() {
				task, err = task.WithScaling(c.version.Scaling)
				require.NoError(t, err)
			}
			mdl, err := task.NewModel()
			require.NoError(t, err)
			z, err := task.standardize(Dataset{X: clipLearned(task, c.rows), Y: make([]float64, len(c.rows))})
			require.NoError(t, err)
			for i, x := range z.X {
				want := classProbabilities(mdl, c.version.Weights, x)
				require.InDeltaSlice(t, want, got.Probabilities[i], 1e-12, "row %d", i)
				assert.EqualValues(t, argmax(want), got.Class[i], "row %d", i)
			}
			t.Logf("%d rows, onnxruntime agrees with the service on every one", len(c.rows))
		})
	}
}

// clipLearned clips the learned features' raw values to their ranges, as
// rawExamples does when it reads a record.
func clipLearned(task Task, rows [][]float64) [][]float64 {
	out := make([][]float64, len(rows))
	for k, r := range rows {
		out[k] = slices.Clone(r)
		for i, f := range task.Features {
			if f.Learned && !math.IsNaN(r[i]) {
				out[k][i] = math.Max(f.Min, math.Min(f.Max, r[i]))
			}
		}
	}
	return out
}

func argmax(p []float64) int {
	best := 0
	for i := range p {
		if p[i] > p[best] {
			best = i
		}
	}
	return best
}

// A model the task cannot hold is not exported: weights of another length,
// a learned task's version from before its statistics round, columns that
// do not match the features.
func TestONNXExportRefuses(t *testing.T) {
	t.Parallel()
	task := DefaultTask()
	_, err := ExportONNX(task, nil, ModelVersion{Version: "1.0.1", Weights: make([]float64, 3)})
	assert.ErrorIs(t, err, ErrMalformedWeights)
	_, err = ExportONNX(task, []string{"a"}, ModelVersion{Version: "1.0.1", Weights: make([]float64, 5)})
	assert.ErrorIs(t, err, ErrTask)
	tf, _ := loadWDBCLearned(t)
	_, err = ExportONNX(tf.Task(), nil, ModelVersion{Version: "1.0.0", Weights: make([]float64, 31)})
	assert.ErrorIs(t, err, ErrTask)
	w := make([]float64, 5)
	w[2] = math.Inf(1)
	_, err = ExportONNX(task, nil, ModelVersion{Version: "1.0.1", Weights: w})
	assert.ErrorIs(t, err, ErrNaN)
	b, err := ExportONNX(task, nil, ModelVersion{Version: "1.0.1", Weights: make([]float64, 5)})
	require.NoError(t, err)
	assert.NotEmpty(t, b)
}
