package federated

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tamperAPI lets one organization change its masked vector on the way out.
// Masking is additive, so adding d to a masked word adds d to the
// participant's hidden word: this is what a lying participant can do.
type tamperAPI struct {
	RoundAPI
	org    string
	tamper func(masked []uint64)
}

func (a tamperAPI) Submit(ctx context.Context, org string, s Submission) error {
	if org == a.org && s.Masked != nil {
		s.Masked = slices.Clone(s.Masked)
		a.tamper(s.Masked)
	}
	return a.RoundAPI.Submit(ctx, org, s)
}

type cohortMap map[string]int

func (m cohortMap) CohortSize(_ context.Context, org string) (int, error) { return m[org], nil }

// The pooled accuracy comes with the participants' mean and spread, each
// participant's held-out count is cut to its registered cohort, and the
// figures match what each participant measures on its own.
func TestEvaluationSpreadAndCohortBound(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	cfg := noDPConfig(newFakeClock(), 3)
	cfg.Cohorts = cohortMap{"hospital-00": 1000, "hospital-01": 1000, "hospital-02": 7}
	c, err := NewCoordinator(ctx, newMemStore(), cfg)
	require.NoError(t, err)
	ps, _ := cohortParticipants(t, 3, 200, 41)
	v, err := c.View(ctx, "hospital-02")
	require.NoError(t, err)
	assert.Equal(t, 7, v.EvalBound)

	var accs []float64
	var correct, total int
	for i, p := range ps {
		test := p.test
		if i == 2 {
			test = Dataset{X: test.X[:7], Y: test.Y[:7]}
		}
		ev := Evaluate(p.model, v.Base.Weights, test)
		accs = append(accs, ev.Accuracy())
		correct += ev.Correct
		total += ev.Total
	}
	runRound(t, ctx, c, ps)
	h, err := c.History(ctx)
	require.NoError(t, err)
	m := h[0].Metrics
	require.NotNil(t, m, "round 0 measured its starting model 1.0.0")
	mean := (accs[0] + accs[1] + accs[2]) / 3
	var variance float64
	for _, a := range accs {
		variance += (a - mean) * (a - mean) / 3
	}
	assert.Equal(t, total, m.EvalSamples)
	assert.InDelta(t, float64(correct)/float64(total), m.Accuracy, 1e-12)
	assert.Equal(t, 3, m.Participants)
	assert.InDelta(t, mean, m.MeanAccuracy, 1e-5)
	assert.InDelta(t, math.Sqrt(variance), m.AccuracyStdDev, 1e-2)
}

// A participant claiming 2^20 correct of 2^20 held-out records cannot make
// the model look accurate: its cohort allows far fewer. The round still
// closes with the update; only the figures are refused.
func TestInflatedEvaluationIsRefused(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	cfg := noDPConfig(newFakeClock(), 3)
	cfg.Cohorts = cohortMap{"hospital-00": 100, "hospital-01": 100, "hospital-02": 100}
	store := newMemStore()
	c, err := NewCoordinator(ctx, store, cfg)
	require.NoError(t, err)
	ps, _ := cohortParticipants(t, 3, 200, 42)
	nw := ps[0].model.NumWeights()
	liar := tamperAPI{RoundAPI: c, org: "hospital-01", tamper: func(m []uint64) {
		m[nw+evalCorrect] += 1 << 20
		m[nw+evalTotal] += 1 << 20
	}}
	for range 4 {
		for _, p := range ps {
			var api RoundAPI = c
			if p.Org() == liar.org {
				api = liar
			}
			_, err := p.Step(ctx, api)
			require.NoError(t, err)
		}
	}
	h, err := c.History(ctx)
	require.NoError(t, err)
	require.Len(t, h, 2, "the round closed with the update")
	assert.Nil(t, h[0].Metrics, "inflated counts are not published")
	assert.Nil(t, h[1].Metrics)
	var r0 RoundState
	require.NoError(t, jsonUnmarshal(store.rounds[0], &r0))
	assert.Contains(t, r0.Outcome, "evaluation refused")
}

func TestEvalMetricsRejectsImpossibleWords(t *testing.T) {
	t.Parallel()
	honest := func() []uint64 {
		var sum [evalWords]uint64
		for _, e := range []Evaluation{{8, 10}, {5, 10}} {
			w := evalCounters(e)
			for i := range sum {
				sum[i] += w[i]
			}
		}
		return sum[:]
	}
	m, err := evalMetrics(honest(), 2, 20)
	require.NoError(t, err)
	assert.InDelta(t, 0.65, m.Accuracy, 1e-12)
	assert.InDelta(t, 0.65, m.MeanAccuracy, 1e-6)
	assert.InDelta(t, 0.15, m.AccuracyStdDev, 1e-5)
	for name, tc := range map[string]struct {
		word  int
		delta uint64
		bound int64
	}{
		"over cohort":         {evalTotal, 1, 20},
		"correct over total":  {evalCorrect, 8, 100},
		"negative":            {evalCorrect, 1 << 63, 100},
		"count over n":        {evalCount, 1, 100},
		"accuracy over one":   {evalAcc, 2 * accScale, 100},
		"square over acc":     {evalAcc2, accScale, 100},
		"variance below zero": {evalAcc2, ^uint64(accScale/4 - 1), 100},
	} {
		t.Run(name, func(t *testing.T) {
			w := honest()
			w[tc.word] += tc.delta
			_, err := evalMetrics(w, 2, tc.bound)
			assert.ErrorIs(t, err, ErrBounds)
		})
	}
}
