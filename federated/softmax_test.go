package federated

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/record"
)

// The analytic gradient matches central differences.
func TestSoftmaxGradient(t *testing.T) {
	t.Parallel()
	m, err := NewSoftmax(3, 4, 0.01)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(1, 2))
	w := make([]float64, m.NumWeights())
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	xs := [][]float64{{0.5, -1, 2}, {1, 0, -0.3}, {-2, 1, 0.1}}
	ys := []float64{0, 3, 2}
	grad := make([]float64, len(w))
	m.LossGrad(w, xs, ys, grad)
	scratch := make([]float64, len(w))
	for i := range w {
		h := 1e-6
		w[i] += h
		up := m.LossGrad(w, xs, ys, scratch)
		w[i] -= 2 * h
		down := m.LossGrad(w, xs, ys, scratch)
		w[i] += h
		assert.InDelta(t, (up-down)/(2*h), grad[i], 1e-6, "weight %d", i)
	}
	_, err = NewSoftmax(3, 1, 0)
	assert.ErrorIs(t, err, ErrTask)
}

// classRecords draws records of three classes separated along glucose and
// bmi.
func classRecords(n int, seed uint64, prefix string) []*record.Record {
	rng := rand.New(rand.NewPCG(seed, 7))
	classes := []string{"low", "mid", "high"}
	var out []*record.Record
	for i := range n {
		c := i % 3
		g := 90 + 40*float64(c) + 8*rng.NormFloat64()
		b := 24 + 4*float64(c) + 2*rng.NormFloat64()
		out = append(out, &record.Record{
			PatientID: fmt.Sprintf("%s-%d", prefix, i), Diagnosis: classes[c],
			Observations: map[string]float64{"glucose": g, "bmi": b},
		})
	}
	return out
}

// triageTask is a three-class softmax task over classRecords.
func triageTask() Task {
	return Task{
		Name:          "triage/v1",
		Features:      []Feature{{Name: "glucose", Mean: 130, Scale: 40}, {Name: "bmi", Mean: 28, Scale: 5}},
		Labels:        Labels{Classes: []string{"low", "mid", "high"}},
		Model:         ModelSpec{Type: "softmax", L2: 1e-3},
		Training:      TrainingSpec{Epochs: 20, LearningRate: 0.5},
		ReferenceDate: "2026-01-01", ClampZ: 5,
	}
}

// Three hospitals train a three-class softmax model through the secure sum.
func TestFederatedSoftmax(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	task := triageTask()
	require.NoError(t, task.Validate())
	cfg := noDPConfig(newFakeClock(), 3)
	cfg.Task = task
	c, err := NewCoordinator(ctx, newMemStore(), cfg)
	require.NoError(t, err)
	var ps []*Participant
	for i := range 3 {
		p, err := NewParticipant(ParticipantConfig{Org: fmt.Sprintf("hospital-%d", i), Task: task}, classRecords(300, uint64(i), fmt.Sprint(i)))
		require.NoError(t, err)
		ps = append(ps, p)
	}
	for range 10 {
		runRound(t, ctx, c, ps)
	}
	m, err := c.Model(ctx)
	require.NoError(t, err)
	require.Len(t, m.Weights, 9)
	var ev Evaluation
	for _, p := range ps {
		e, err := p.Evaluate(m.Weights)
		require.NoError(t, err)
		ev.Correct += e.Correct
		ev.Total += e.Total
	}
	assert.Greater(t, ev.Accuracy(), 0.85, "three separated classes are learned")
	assert.False(t, math.IsNaN(m.Weights[0]))
	h, err := c.History(ctx)
	require.NoError(t, err)
	met := LatestMetrics(h)
	require.NotNil(t, met)
	assert.Equal(t, h[len(h)-2].Version, met.EvaluatedVersion)
	assert.Greater(t, met.Accuracy, 0.5, "the pooled accuracy of round 9's base model")
}
