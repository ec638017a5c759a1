package federated

import (
	"context"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/federated/dp"
	"github.com/healthagents/healthagents/federated/secagg"
	"github.com/healthagents/healthagents/record"
)

// loadWDBCLearned is WDBC with the task whose 30 features are all learned.
func loadWDBCLearned(t testing.TB) (*TaskFile, []*record.Record) {
	t.Helper()
	f, err := os.Open("../testdata/wdbc/task-learned.json")
	require.NoError(t, err)
	defer f.Close()
	tf, err := ParseTaskFile(f)
	require.NoError(t, err)
	_, recs := loadWDBC(t)
	return tf, recs
}

// pooledScaling is what a statistics round must learn: the mean and
// population standard deviation of each learned feature over every
// participant's training records, clipped to the feature's range.
func pooledScaling(t testing.TB, task Task, heldOut float64, cohorts [][]*record.Record) []LearnedScaling {
	t.Helper()
	var out []LearnedScaling
	for _, i := range task.learned() {
		var n, s1, s2 float64
		for _, c := range cohorts {
			train, _ := SplitHeldOut(c, heldOut)
			raw, _, err := task.rawExamples(train)
			require.NoError(t, err)
			for _, row := range raw.X {
				if v := row[i]; !math.IsNaN(v) {
					n, s1, s2 = n+1, s1+v, s2+v*v
				}
			}
		}
		m := s1 / n
		out = append(out, LearnedScaling{Name: task.Features[i].Name, Mean: m, Scale: math.Sqrt(s2/n - m*m), Count: int64(n)})
	}
	return out
}

// The statistics round learns, by a secure sum, the pooled mean and scale
// of the participants' training values within fixed-point error; every
// later model version carries them, the participants train with them, and
// the model reaches the accuracy of centralized training with the pooled
// statistics.
func TestLearnedScalingEqualsPooledStatistics(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	tf, recs := loadWDBCLearned(t)
	task := tf.Task()
	require.True(t, task.Learns())
	cohorts := splitWDBC(recs, 3, false, 1) // non-IID: very different local statistics
	ps := wdbcParticipants(t, tf, cohorts)
	_, err := ps[0].Evaluate(make([]float64, 31))
	require.ErrorIs(t, err, ErrTask, "no evaluation before the scaling is learned")

	cfg := noDPConfig(newFakeClock(), 3)
	cfg.Task, cfg.MaxRounds = task, 1+wdbcRounds
	c, err := NewCoordinator(ctx, newMemStore(), cfg)
	require.NoError(t, err)
	v, err := c.View(ctx, ps[0].Org())
	require.NoError(t, err)
	assert.Equal(t, RoundStatistics, v.Kind)
	assert.Equal(t, 3*30, v.Dim)
	require.Equal(t, 0, runRound(t, ctx, c, ps))

	want := pooledScaling(t, task, tf.HeldOut, cohorts)
	got := c.Scaling()
	require.Len(t, got, 30)
	for i := range want {
		f := task.Features[task.learned()[i]]
		tol := (f.Max - f.Min) * 1e-8 // 2^-32 per value, far below
		assert.Equal(t, want[i].Name, got[i].Name)
		assert.Equal(t, want[i].Count, got[i].Count, got[i].Name)
		assert.InDelta(t, want[i].Mean, got[i].Mean, tol, got[i].Name)
		assert.InDelta(t, want[i].Scale, got[i].Scale, tol, got[i].Name)
	}
	h, err := c.History(ctx)
	require.NoError(t, err)
	require.Len(t, h, 2)
	assert.Equal(t, h[0].Weights, h[1].Weights, "the statistics round changes no weight")
	assert.Nil(t, h[1].Metrics)

	v, err = c.View(ctx, ps[0].Org())
	require.NoError(t, err)
	assert.Empty(t, v.Kind, "the next round trains")
	assert.Equal(t, got, v.Base.Scaling)
	for range wdbcRounds {
		runRound(t, ctx, c, ps)
	}
	m, err := c.Model(ctx)
	require.NoError(t, err)
	assert.Equal(t, got, m.Scaling, "every later version carries the scaling")
	assert.Equal(t, got, ps[0].Scaling(), "the participant learned the scaling from the round's model")

	// Centralized training with the pooled statistics, on the same records.
	scaled, err := task.WithScaling(want)
	require.NoError(t, err)
	var train, test Dataset
	for _, co := range cohorts {
		tr, te := SplitHeldOut(co, tf.HeldOut)
		a, _, err := scaled.Examples(tr)
		require.NoError(t, err)
		b, _, err := scaled.Examples(te)
		require.NoError(t, err)
		train.X, train.Y = append(train.X, a.X...), append(train.Y, a.Y...)
		test.X, test.Y = append(test.X, b.X...), append(test.Y, b.Y...)
	}
	accC := heldOutAccuracy(t, scaled, centralized(t, ctx, scaled, train, wdbcRounds*tf.LocalEpochs), test)
	accF := heldOutAccuracy(t, scaled, m.Weights, test)
	t.Logf("held-out accuracy: centralized %.4f, federated with learned scaling %.4f (n=%d)", accC, accF, test.Len())
	require.Greater(t, accC, 0.9)
	require.InDelta(t, accC, accF, 0.02)
}

// A coordinator restarted in any phase of the statistics round resumes it
// and learns the same scaling; restarted after it, it keeps the scaling and
// trains; a participant restarted mid-round (a new process, its round
// secrets lost) drops out of that round and takes part in the next one.
func TestStatisticsRoundRestart(t *testing.T) {
	t.Parallel()
	tf, recs := loadWDBCLearned(t)
	cohorts := splitWDBC(recs, 3, true, 2)
	want := pooledScaling(t, tf.Task(), tf.HeldOut, cohorts)
	for _, stopAfter := range []int{0, 1, 2, 3} {
		t.Run(string(rune('0'+stopAfter))+" phases done", func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			store := newMemStore()
			cfg := noDPConfig(newFakeClock(), 3)
			cfg.Task, cfg.MaxRounds = tf.Task(), 4
			c1, err := NewCoordinator(ctx, store, cfg)
			require.NoError(t, err)
			ps := wdbcParticipants(t, tf, cohorts)
			for range stopAfter {
				stepAll(t, ctx, c1, ps)
			}
			_, err = ps[0].Step(ctx, c1)
			require.NoError(t, err)

			c2, err := NewCoordinator(ctx, store, cfg)
			require.NoError(t, err)
			assert.Nil(t, c2.Scaling())
			require.Equal(t, 0, runRound(t, ctx, c2, ps))
			got := c2.Scaling()
			require.Len(t, got, len(want))
			for i := range want {
				assert.InDelta(t, want[i].Mean, got[i].Mean, 1e-6*(1+math.Abs(want[i].Mean)), want[i].Name)
			}

			c3, err := NewCoordinator(ctx, store, cfg)
			require.NoError(t, err)
			assert.Equal(t, got, c3.Scaling(), "persisted")
			v, err := c3.View(ctx, ps[0].Org())
			require.NoError(t, err)
			assert.Equal(t, 1, v.Round)
			assert.Empty(t, v.Kind, "not learned again")
			require.Equal(t, 1, runRound(t, ctx, c3, ps))
			h, err := c3.History(ctx)
			require.NoError(t, err)
			require.Len(t, h, 3)
			assert.NotEqual(t, h[1].Weights, h[2].Weights, "round 1 trained")
		})
	}

	t.Run("participant restarted", func(t *testing.T) {
		t.Parallel()
		ctx := t.Context()
		clock := newFakeClock()
		cfg := noDPConfig(clock, 3)
		cfg.Task, cfg.MaxRounds = tf.Task(), 4
		c, err := NewCoordinator(ctx, newMemStore(), cfg)
		require.NoError(t, err)
		ps := wdbcParticipants(t, tf, cohorts)
		stepAll(t, ctx, c, ps) // keys advertised
		// ps[0]'s process dies; its successor has none of its secrets.
		ps[0] = wdbcParticipants(t, tf, cohorts[:1])[0]
		stepAll(t, ctx, c, ps)
		clock.Add(cfg.RoundTimeout) // the round cannot finish without ps[0]
		require.NoError(t, c.Advance(ctx))
		v, err := c.View(ctx, ps[0].Org())
		require.NoError(t, err)
		require.Equal(t, 1, v.Round)
		assert.Equal(t, RoundStatistics, v.Kind, "the statistics round is run again")
		require.Equal(t, 1, runRound(t, ctx, c, ps))
		assert.Len(t, c.Scaling(), 30)
	})
}

// Sums that participants with values in range cannot produce are refused.
func TestScalingOfRefusesImpossibleSums(t *testing.T) {
	t.Parallel()
	task := Task{Features: []Feature{{Name: "x", Learned: true, Min: 0, Max: 10}}}
	const f = 20
	one := uint64(1) << f
	for name, tc := range map[string]struct {
		sum   []uint64
		bound int64
		ok    bool
	}{
		"ok":                {[]uint64{4, 2 * one, one}, 10, true},
		"fail/no values":    {[]uint64{0, 0, 0}, 10, false},
		"fail/over bound":   {[]uint64{11, one, one}, 10, false},
		"fail/sum too big":  {[]uint64{2, 3 * one, one}, 10, false},
		"fail/squares big":  {[]uint64{2, one, one + 1}, 10, false},
		"fail/variance < 0": {[]uint64{4, 2 * one, one / 2}, 10, false},
		"fail/wrapped":      {[]uint64{2, math.MaxUint64, 0}, 10, false},
		"fail/words":        {[]uint64{2, one}, 10, false},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sc, err := scalingOf(task, tc.sum, f, tc.bound)
			if !tc.ok {
				require.ErrorIs(t, err, ErrBounds)
				return
			}
			require.NoError(t, err)
			// u: mean 0.5, E[u²] 0.25: constant 5 → scale falls back to the range.
			assert.InDelta(t, 5, sc[0].Mean, 1e-9)
			assert.Equal(t, 10.0, sc[0].Scale)
		})
	}
}

// poisoner adds a large value to one word of org's masked input: the masks
// cancel, so the sum carries it.
type poisoner struct {
	*Coordinator
	org string
}

func (p poisoner) Submit(ctx context.Context, org string, s Submission) error {
	if org == p.org && s.Masked != nil {
		s.Masked = slices.Clone(s.Masked)
		s.Masked[statSum] += 1 << 60
	}
	return p.Coordinator.Submit(ctx, org, s)
}

// A statistics round whose sum is impossible (one participant masked
// values outside its range) is abandoned, and the next one is again a
// statistics round.
func TestPoisonedStatisticsRoundIsAbandoned(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	tf, recs := loadWDBCLearned(t)
	ps := wdbcParticipants(t, tf, splitWDBC(recs, 3, true, 3))
	cfg := noDPConfig(newFakeClock(), 3)
	cfg.Task, cfg.MaxRounds = tf.Task(), 4
	c, err := NewCoordinator(ctx, newMemStore(), cfg)
	require.NoError(t, err)
	api := poisoner{Coordinator: c, org: ps[2].Org()}
	for range 4 {
		for _, p := range ps {
			_, err := p.Step(ctx, api)
			require.NoError(t, err)
		}
	}
	assert.Nil(t, c.Scaling())
	v, err := c.View(ctx, ps[0].Org())
	require.NoError(t, err)
	assert.Equal(t, 1, v.Round)
	assert.Equal(t, RoundStatistics, v.Kind)
}

func TestStatsFracBits(t *testing.T) {
	t.Parallel()
	f, err := statsFracBits(100, 1<<20)
	require.NoError(t, err)
	assert.Equal(t, uint(32), f)
	f, err = statsFracBits(100, 1<<30)
	require.NoError(t, err)
	assert.Equal(t, uint(25), f)
	_, err = statsFracBits(1<<20, 1<<30)
	require.ErrorIs(t, err, ErrConfig)
}

// In a proved run the statistics round is masked in the 64-bit ring and
// takes no proof; the training rounds after it are proved.
func TestStatisticsRoundInProvedRun(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	tf, recs := loadWDBCLearned(t)
	ps := wdbcParticipants(t, tf, splitWDBC(recs, 3, true, 4))
	prover := &flakyProver{calls: 1}
	for _, p := range ps {
		p.cfg.Proofs = &ParticipantProofs{Group: secagg.Ring64{}, Prover: prover}
	}
	cfg := noDPConfig(newFakeClock(), 3)
	cfg.Task, cfg.MaxRounds = tf.Task(), 3
	cfg.Proofs = &ProofConfig{Group: secagg.Ring64{}, Verifier: acceptAll{}}
	c, err := NewCoordinator(ctx, newMemStore(), cfg)
	require.NoError(t, err)
	v, err := c.View(ctx, ps[0].Org())
	require.NoError(t, err)
	assert.Equal(t, RoundStatistics, v.Kind)
	assert.False(t, v.Proved)
	require.Equal(t, 0, runRound(t, ctx, c, ps))
	assert.Equal(t, 1, prover.calls, "no proof in the statistics round")
	require.Len(t, c.Scaling(), 30)
	v, err = c.View(ctx, ps[0].Org())
	require.NoError(t, err)
	assert.True(t, v.Proved)
	require.Equal(t, 1, runRound(t, ctx, c, ps))
	assert.Equal(t, 4, prover.calls, "each training update proved")
}

// With DP on, the statistics round adds no noise and spends nothing: the
// ledger is charged by the training rounds only (the release is outside
// the guarantee, docs/federated-privacy.md).
func TestStatisticsRoundSpendsNoBudget(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	tf, recs := loadWDBCLearned(t)
	cohorts := splitWDBC(recs, 3, true, 5)
	ps := wdbcParticipants(t, tf, cohorts)
	cfg := noDPConfig(newFakeClock(), 3)
	cfg.Task, cfg.MaxRounds = tf.Task(), 3
	cfg.DisablePrivacy, cfg.Privacy = false, &PrivacyConfig{Budget: dp.Budget{Epsilon: 8, Delta: 1e-5}}
	c, err := NewCoordinator(ctx, newMemStore(), cfg)
	require.NoError(t, err)
	v, err := c.View(ctx, ps[0].Org())
	require.NoError(t, err)
	require.Equal(t, RoundStatistics, v.Kind)
	require.Equal(t, 0, runRound(t, ctx, c, ps))
	assert.Equal(t, 0, c.Privacy().RoundsReleased)
	assert.Zero(t, c.Privacy().EpsilonSpent)
	want := pooledScaling(t, tf.Task(), tf.HeldOut, cohorts)
	for i, got := range c.Scaling() {
		assert.InDelta(t, want[i].Mean, got.Mean, 1e-6*(1+math.Abs(want[i].Mean)), got.Name, "not noised")
	}
	require.Equal(t, 1, runRound(t, ctx, c, ps))
	assert.Equal(t, 1, c.Privacy().RoundsReleased)
	assert.Positive(t, c.Privacy().EpsilonSpent)
}

func TestLearnedTaskNeedsTwoRounds(t *testing.T) {
	t.Parallel()
	tf, _ := loadWDBCLearned(t)
	cfg := noDPConfig(newFakeClock(), 3)
	cfg.Task, cfg.MaxRounds = tf.Task(), 1
	_, err := NewCoordinator(t.Context(), newMemStore(), cfg)
	require.ErrorIs(t, err, ErrConfig)
	assert.Contains(t, err.Error(), "FEDERATED_ROUNDS")
}
