package federated

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/healthagents/healthagents/federated/dp"

	"github.com/stretchr/testify/require"
)

// pooled returns the union of the participants' training and held-out sets.
func pooled(ps []*Participant) (train, test Dataset) {
	for _, p := range ps {
		train.X, train.Y = append(train.X, p.train.X...), append(train.Y, p.train.Y...)
		test.X, test.Y = append(test.X, p.test.X...), append(test.Y, p.test.Y...)
	}
	return train, test
}

// centralized trains on the pooled training data with the same optimiser for
// rounds*epochs full-batch steps: the baseline that pools raw records.
func centralized(t testing.TB, ctx context.Context, task Task, train Dataset, steps int) []float64 {
	t.Helper()
	m, err := task.NewModel()
	require.NoError(t, err)
	spec := task.Training
	spec.Epochs = steps
	upd, err := Train(ctx, m, make([]float64, m.NumWeights()), train, spec, rand.New(rand.NewPCG(1, 1)))
	require.NoError(t, err)
	return upd.Delta
}

// federatedRun runs rounds of the full protocol and returns the final model.
func federatedRun(t testing.TB, ctx context.Context, cfg Config, ps []*Participant, rounds int) []float64 {
	t.Helper()
	c, err := NewCoordinator(ctx, newMemStore(), cfg)
	require.NoError(t, err)
	for range rounds {
		runRound(t, ctx, c, ps)
	}
	m, err := c.Model(ctx)
	require.NoError(t, err)
	return m.Weights
}

func heldOutAccuracy(t testing.TB, task Task, w []float64, test Dataset) float64 {
	m, err := task.NewModel()
	require.NoError(t, err)
	return Evaluate(m, w, test).Accuracy()
}

// (e) Without DP, federated training over three different cohorts comes
// within 2 accuracy points of centralized training on the same records,
// both measured on the same held-out records.
func TestFederatedMatchesCentralized(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ps, _ := cohortParticipants(t, 3, 800, 11)
	train, test := pooled(ps)
	task := DefaultTask()
	const rounds = 30
	wc := centralized(t, ctx, task, train, rounds*task.Training.Epochs)
	cfg := noDPConfig(newFakeClock(), 3)
	wf := federatedRun(t, ctx, cfg, ps, rounds)
	accC := heldOutAccuracy(t, task, wc, test)
	accF := heldOutAccuracy(t, task, wf, test)
	t.Logf("held-out accuracy: centralized %.4f, federated %.4f (n=%d)", accC, accF, test.Len())
	require.Greater(t, accC, 0.7, "the task is learnable")
	require.InDelta(t, accC, accF, 0.02)
}

var privacyTable = flag.Bool("privacy-table", false, "print the accuracy-vs-epsilon table of docs/federated-privacy.md")

// TestPrivacyTable measures held-out accuracy against the privacy budget.
// Run: go test ./federated -run TestPrivacyTable -privacy-table -v
func TestPrivacyTable(t *testing.T) {
	if !*privacyTable {
		t.Skip("pass -privacy-table to measure (several minutes)")
	}
	ctx := t.Context()
	const rounds, repeats, size = 20, 5, 800
	epsilons := []float64{0.1, 1, 5, 10, 25, 50, 100, 1000, math.Inf(1)}
	var out strings.Builder
	fmt.Fprintf(&out, "| epsilon (whole run, delta 1e-5) | noise multiplier z | accuracy, 3 hospitals | accuracy, 30 hospitals |\n|---|---|---|---|\n")
	for _, eps := range epsilons {
		var z float64
		if !math.IsInf(eps, 1) {
			var err error
			z, err = dp.CalibrateNoise(dp.Budget{Epsilon: eps, Delta: 1e-5}, rounds, dp.DefaultOrders())
			require.NoError(t, err)
		}
		cells := []string{}
		for _, n := range []int{3, 30} {
			var accs []float64
			ps, _ := cohortParticipants(t, n, size*3/n, 21)
			_, test := pooled(ps)
			for range repeats {
				cfg := noDPConfig(newFakeClock(), n)
				cfg.MaxRounds = rounds
				if z > 0 {
					cfg.DisablePrivacy = false
					cfg.Privacy = &PrivacyConfig{Budget: dp.Budget{Epsilon: eps, Delta: 1e-5}, NoiseMultiplier: z}
				}
				w := federatedRun(t, ctx, cfg, ps, rounds)
				accs = append(accs, heldOutAccuracy(t, DefaultTask(), w, test))
			}
			mean, sd := meanSD(accs)
			cells = append(cells, fmt.Sprintf("%.3f ± %.3f", mean, sd))
		}
		zs := "none"
		if z > 0 {
			zs = fmt.Sprintf("%.2f", z)
		}
		fmt.Fprintf(&out, "| %g | %s | %s | %s |\n", eps, zs, cells[0], cells[1])
	}
	t.Logf("%d rounds, %d runs each, %d synthetic records in total, clip norm 1:\n%s", rounds, repeats, size*3, out.String())
}

func meanSD(v []float64) (float64, float64) {
	m := 0.0
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	s := 0.0
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return m, math.Sqrt(s / float64(len(v)))
}
