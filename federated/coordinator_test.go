package federated

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/federated/dp"
	"github.com/healthagents/healthagents/federated/secagg"
)

// expectedModel recomputes the new weights from the participants' plaintext
// quantized inputs, the way an insecure plain sum would.
func expectedModel(t *testing.T, base []float64, cfg Config, ps []*Participant) ([]float64, Evaluation) {
	t.Helper()
	var plains [][]uint64
	for _, p := range ps {
		plains = append(plains, p.plain)
	}
	sum, err := secagg.Sum(plains...)
	require.NoError(t, err)
	q, err := secagg.NewQuantizer(cfg.ClipNorm, cfg.FracBits, cfg.MaxParticipants)
	require.NoError(t, err)
	nw := len(base)
	upd := q.Dequantize(sum[:nw])
	w := slices.Clone(base)
	for i := range w {
		w[i] += cfg.ServerLearningRate * upd[i] / float64(len(ps))
	}
	return w, Evaluation{Correct: int(sum[nw]), Total: int(sum[nw+1])}
}

// (a) The secure sum equals the plain sum exactly, and nothing the
// coordinator holds or stores is an individual unmasked input.
func TestSecureSumEqualsPlainSum(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clock := newFakeClock()
	store := newMemStore()
	cfg := noDPConfig(clock, 3)
	c, err := NewCoordinator(ctx, store, cfg)
	require.NoError(t, err)
	ps, _ := cohortParticipants(t, 3, 300, 1)
	base, err := c.Model(ctx)
	require.NoError(t, err)

	// Stop before unmasking to look at everything the coordinator holds.
	for range 3 {
		stepAll(t, ctx, c, ps)
	}
	st, err := c.Status(ctx)
	require.NoError(t, err)
	require.Equal(t, PhaseUnmasking, st.Phase)
	for _, p := range ps {
		require.Len(t, p.plain, len(base.Weights)+evalWords)
		for org, in := range c.data.inputs {
			assert.NotEqual(t, p.plain, []uint64(in), "coordinator holds %s's input unmasked", org)
		}
	}
	for _, s := range store.submissions(t) {
		for _, p := range ps {
			assert.NotEqual(t, p.plain, []uint64(s.Masked))
		}
	}

	stepAll(t, ctx, c, ps)
	h, err := c.History(ctx)
	require.NoError(t, err)
	require.Len(t, h, 2)
	want, ev := expectedModel(t, base.Weights, c.cfg, ps)
	got := h[1]
	assert.Equal(t, want, got.Weights, "secure sum differs from plain sum")
	assert.Equal(t, "1.0.1", got.Version)
	assert.Equal(t, 0, got.Round)
	assert.Equal(t, []string{"hospital-00", "hospital-01", "hospital-02"}, got.Contributors)
	assert.Nil(t, got.Metrics, "1.0.1 is measured by the next round")
	evaluated := h[0]
	require.NotNil(t, evaluated.Metrics, "round 0 measured its starting model")
	assert.Equal(t, ev.Total, evaluated.Metrics.EvalSamples)
	assert.InDelta(t, ev.Accuracy(), evaluated.Metrics.Accuracy, 0)
	assert.Equal(t, "1.0.0", evaluated.Metrics.EvaluatedVersion)
	hash, err := ModelHash(got.Weights)
	require.NoError(t, err)
	assert.Equal(t, hash, got.Hash)
	assert.Len(t, got.Hash, 64)

	st, err = c.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Round)
	assert.Equal(t, PhaseAdvertiseKeys, st.Phase)
}

// (b) One of four participants drops after sending its shares: the round
// still completes at the phase deadline with the exact sum of the other three.
func TestDropoutAfterSharingKeys(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clock := newFakeClock()
	c, err := NewCoordinator(ctx, newMemStore(), noDPConfig(clock, 4))
	require.NoError(t, err)
	ps, _ := cohortParticipants(t, 4, 200, 2)
	base, err := c.Model(ctx)
	require.NoError(t, err)
	stepAll(t, ctx, c, ps) // advertise
	stepAll(t, ctx, c, ps) // share keys
	survivors := ps[:3]
	stepAll(t, ctx, c, survivors) // hospital-03 never sends its masked input
	st, err := c.Status(ctx)
	require.NoError(t, err)
	require.Equal(t, PhaseMaskedInput, st.Phase, "waits for the fourth until the deadline")

	clock.Add(c.cfg.PhaseTimeout)
	stepAll(t, ctx, c, survivors) // unmask, revealing hospital-03's mask key
	h, err := c.History(ctx)
	require.NoError(t, err)
	require.Len(t, h, 2)
	want, _ := expectedModel(t, base.Weights, c.cfg, survivors)
	assert.Equal(t, want, h[1].Weights)
	assert.Equal(t, []string{"hospital-00", "hospital-01", "hospital-02"}, h[1].Contributors)
	for _, p := range survivors {
		assert.True(t, p.Contributed(0), p.Org())
	}
	assert.False(t, ps[3].Contributed(0), "it joined the round but sent no input")
}

// Fewer than three survivors: the round is abandoned and the model unchanged.
func TestTooFewSurvivorsAbandonsRound(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	tests := []struct {
		name  string
		drive func(c *Coordinator, clock *fakeClock, ps []*Participant)
	}{
		{"fail/two advertise", func(c *Coordinator, clock *fakeClock, ps []*Participant) {
			stepAll(t, ctx, c, ps[:2])
			clock.Add(c.cfg.PhaseTimeout)
		}},
		{"fail/one drops before masking", func(c *Coordinator, clock *fakeClock, ps []*Participant) {
			stepAll(t, ctx, c, ps)
			stepAll(t, ctx, c, ps)
			stepAll(t, ctx, c, ps[:2])
			clock.Add(c.cfg.PhaseTimeout)
		}},
		{"fail/one drops before unmasking", func(c *Coordinator, clock *fakeClock, ps []*Participant) {
			for range 3 {
				stepAll(t, ctx, c, ps)
			}
			stepAll(t, ctx, c, ps[:2])
			clock.Add(c.cfg.PhaseTimeout)
		}},
		{"fail/round timeout", func(c *Coordinator, clock *fakeClock, ps []*Participant) {
			stepAll(t, ctx, c, ps[:1])
			clock.Add(c.cfg.RoundTimeout)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clock := newFakeClock()
			store := newMemStore()
			c, err := NewCoordinator(ctx, store, noDPConfig(clock, 3))
			require.NoError(t, err)
			ps, _ := cohortParticipants(t, 3, 100, 3)
			tc.drive(c, clock, ps)
			require.NoError(t, c.Advance(ctx))
			h, err := c.History(ctx)
			require.NoError(t, err)
			assert.Len(t, h, 1, "model unchanged")
			st, err := c.Status(ctx)
			require.NoError(t, err)
			assert.Equal(t, 1, st.Round)
			snap, err := store.LoadFederated(ctx)
			require.NoError(t, err)
			assert.Equal(t, 1, snap.Round.Number)
			var r0 RoundState
			require.NoError(t, jsonUnmarshal(store.rounds[0], &r0))
			assert.Equal(t, PhaseAbandoned, r0.Phase)
			assert.NotEmpty(t, r0.Outcome)
		})
	}
}

// (c) The coordinator restarts mid-round over the same store and the round
// resumes where it was.
func TestRestartMidRoundResumes(t *testing.T) {
	t.Parallel()
	for _, stopAfter := range []int{0, 1, 2, 3} {
		t.Run(string(rune('0'+stopAfter))+" phases done", func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			clock := newFakeClock()
			store := newMemStore()
			cfg := noDPConfig(clock, 3)
			c1, err := NewCoordinator(ctx, store, cfg)
			require.NoError(t, err)
			ps, _ := cohortParticipants(t, 3, 150, 4)
			base, err := c1.Model(ctx)
			require.NoError(t, err)
			for range stopAfter {
				stepAll(t, ctx, c1, ps)
			}
			// Half a phase: the first participant acts, then the process dies.
			_, err = ps[0].Step(ctx, c1)
			require.NoError(t, err)
			before, err := c1.Status(ctx)
			require.NoError(t, err)

			c2, err := NewCoordinator(ctx, store, cfg)
			require.NoError(t, err)
			after, err := c2.Status(ctx)
			require.NoError(t, err)
			assert.Equal(t, before, after)
			runRound(t, ctx, c2, ps)
			h, err := c2.History(ctx)
			require.NoError(t, err)
			require.Len(t, h, 2)
			want, _ := expectedModel(t, base.Weights, c2.cfg, ps)
			assert.Equal(t, want, h[1].Weights)
		})
	}
}

// (d) The accountant refuses a round whose release would exceed the budget,
// and keeps refusing after a restart.
func TestPrivacyCheckRefusesRoundOverBudget(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clock := newFakeClock()
	store := newMemStore()
	budget := dp.Budget{Epsilon: 1, Delta: 1e-5}
	z, err := dp.CalibrateNoise(budget, 2, dp.DefaultOrders())
	require.NoError(t, err)
	cfg := noDPConfig(clock, 3)
	cfg.DisablePrivacy = false
	cfg.Privacy = &PrivacyConfig{Budget: budget, NoiseMultiplier: z}
	c, err := NewCoordinator(ctx, store, cfg)
	require.NoError(t, err)
	ps, _ := cohortParticipants(t, 3, 100, 5)
	runRound(t, ctx, c, ps)
	runRound(t, ctx, c, ps)
	// The budget is spent: one more round evaluates the final model and
	// spends nothing.
	v, err := c.View(ctx, "hospital-00")
	require.NoError(t, err)
	assert.Equal(t, RoundEvaluation, v.Kind)
	assert.Equal(t, "1.0.2", v.Base.Version)
	runRound(t, ctx, c, ps)

	_, err = c.View(ctx, "hospital-00")
	require.ErrorIs(t, err, ErrNoOpenRound)
	require.ErrorIs(t, err, ErrBudgetExhausted)
	require.ErrorIs(t, err, dp.ErrBudgetExceeded)
	err = c.Submit(ctx, "hospital-00", Submission{Round: 3, Keys: &secagg.PublicKeys{}})
	require.ErrorIs(t, err, ErrBudgetExhausted)

	l, err := c.Ledger(ctx)
	require.NoError(t, err)
	require.Len(t, l.Entries, 2)
	assert.LessOrEqual(t, l.Spent(), budget.Epsilon)
	h, err := c.History(ctx)
	require.NoError(t, err)
	require.Len(t, h, 3)
	assert.InDelta(t, l.Spent(), h[2].EpsilonSpent, 1e-12)
	assert.Equal(t, z, h[2].NoiseMultiplier)

	c2, err := NewCoordinator(ctx, store, cfg)
	require.NoError(t, err)
	_, err = c2.View(ctx, "hospital-00")
	require.ErrorIs(t, err, ErrBudgetExhausted)
	st, err := c2.Status(ctx)
	require.NoError(t, err)
	assert.Contains(t, st.Stopped, "budget")
}

func TestMaxRounds(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clock := newFakeClock()
	cfg := noDPConfig(clock, 3)
	cfg.MaxRounds = 1
	c, err := NewCoordinator(ctx, newMemStore(), cfg)
	require.NoError(t, err)
	ps, _ := cohortParticipants(t, 3, 100, 6)
	runRound(t, ctx, c, ps)

	// The round limit is reached: the evaluation round measures the final
	// model, trains nothing and makes no version.
	v, err := c.View(ctx, "hospital-00")
	require.NoError(t, err)
	assert.Equal(t, RoundEvaluation, v.Kind)
	assert.Equal(t, 1, v.Round)
	assert.Equal(t, "1.0.1", v.Base.Version)
	runRound(t, ctx, c, ps)
	_, err = c.View(ctx, "hospital-00")
	require.ErrorIs(t, err, ErrMaxRounds)
	h, err := c.History(ctx)
	require.NoError(t, err)
	require.Len(t, h, 2, "no version from the evaluation round")
	final := h[1]
	require.NotNil(t, final.Metrics, "the final model's accuracy is measured")
	assert.Equal(t, "1.0.1", final.Metrics.EvaluatedVersion)
	var ev Evaluation
	for _, p := range ps {
		e, err := p.Evaluate(final.Weights)
		require.NoError(t, err)
		ev.Correct, ev.Total = ev.Correct+e.Correct, ev.Total+e.Total
	}
	assert.Equal(t, ev.Total, final.Metrics.EvalSamples)
	assert.InDelta(t, ev.Accuracy(), final.Metrics.Accuracy, 0, "the pooled accuracy of the final weights")
	assert.Equal(t, final.Metrics, LatestMetrics(h), "the latest figure belongs to the final version")
}

// A history stored before figures went with the version they measure (on
// the version made by the measuring round) is read the new way.
func TestMetricsMoveToTheVersionTheyMeasure(t *testing.T) {
	t.Parallel()
	h := []ModelVersion{{Version: "1.0.0"}, {Version: "1.0.1", Metrics: &Metrics{Accuracy: 0.5, EvaluatedVersion: "1.0.0"}},
		{Version: "1.0.2", Metrics: &Metrics{Accuracy: 0.7, EvaluatedVersion: "1.0.1"}}, {Version: "1.0.3"}}
	moveMetrics(h)
	assert.InDelta(t, 0.5, h[0].Metrics.Accuracy, 0)
	assert.InDelta(t, 0.7, h[1].Metrics.Accuracy, 0)
	assert.Nil(t, h[2].Metrics)
	assert.Nil(t, h[3].Metrics)
	moveMetrics(h)
	assert.InDelta(t, 0.7, h[1].Metrics.Accuracy, 0, "moving twice changes nothing")
}

func TestSubmitRejects(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clock := newFakeClock()
	c, err := NewCoordinator(ctx, newMemStore(), noDPConfig(clock, 3))
	require.NoError(t, err)
	ps, _ := cohortParticipants(t, 3, 100, 7)
	stepAll(t, ctx, c, ps)
	stepAll(t, ctx, c, ps)
	tests := []struct {
		name string
		org  string
		sub  Submission
		want error
	}{
		{"fail/wrong round", "hospital-00", Submission{Round: 5, Masked: make(secagg.MaskedInput, 7)}, ErrWrongRound},
		{"fail/wrong phase", "hospital-00", Submission{Round: 0, Keys: &secagg.PublicKeys{ID: "hospital-00"}}, ErrWrongPhase},
		{"fail/two messages", "hospital-00", Submission{Round: 0, Masked: make(secagg.MaskedInput, 7), Reveals: []secagg.RevealedShare{}}, ErrInvalidSubmission},
		{"fail/wrong length", "hospital-00", Submission{Round: 0, Masked: make(secagg.MaskedInput, 6)}, ErrInvalidSubmission},
		{"fail/outsider", "intruder", Submission{Round: 0, Masked: make(secagg.MaskedInput, 7)}, ErrNotParticipant},
		{"fail/stale model", "hospital-00", Submission{Round: 0, ModelVersion: "1.0.7", Masked: make(secagg.MaskedInput, 7)}, ErrStaleModel},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Submit(ctx, tc.org, tc.sub)
			require.ErrorIs(t, err, tc.want)
		})
	}
	var re *RoundError
	require.True(t, errors.As(c.Submit(ctx, "hospital-00", Submission{Round: 9, Masked: secagg.MaskedInput{}}), &re))
	assert.Equal(t, 0, re.Current)
	// Nothing above changed the round: it still completes.
	runRound(t, ctx, c, ps)
}

func TestStoreFailureChangesNothing(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clock := newFakeClock()
	store := newMemStore()
	c, err := NewCoordinator(ctx, store, noDPConfig(clock, 3))
	require.NoError(t, err)
	ps, _ := cohortParticipants(t, 3, 100, 8)
	store.fail = errors.New("disk full")
	_, err = ps[0].Step(ctx, c)
	require.Error(t, err)
	st, err := c.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, 0, st.Participants)
	store.mu.Lock()
	store.fail = nil
	store.mu.Unlock()
	runRound(t, ctx, c, ps) // ps[0] resends its keys
}

func TestConfigValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(*Config)
	}{
		{"fail/two participants", func(c *Config) { c.MinParticipants = 2 }},
		{"fail/target above max", func(c *Config) { c.TargetParticipants = 200 }},
		{"fail/overflowing quantizer", func(c *Config) { c.FracBits = 52; c.MaxParticipants = 1 << 12 }},
		{"fail/bad budget", func(c *Config) { c.Privacy = &PrivacyConfig{Budget: dp.Budget{Epsilon: -1, Delta: 1e-5}} }},
		{"fail/bad task", func(c *Config) { c.Task.Features = nil; c.Task.Name = "x" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := DefaultConfig()
			tc.mutate(&cfg)
			_, err := NewCoordinator(t.Context(), newMemStore(), cfg)
			require.Error(t, err)
		})
	}
	clock := newFakeClock()
	store := newMemStore()
	_, err := NewCoordinator(t.Context(), store, noDPConfig(clock, 3))
	require.NoError(t, err)
	withDP := DefaultConfig()
	_, err = NewCoordinator(t.Context(), store, withDP)
	require.ErrorIs(t, err, ErrStoreMismatch)
}

func TestDefaultConfigCalibratesSpecBudget(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	c, err := NewCoordinator(t.Context(), newMemStore(), cfg)
	require.NoError(t, err)
	assert.Zero(t, cfg.Privacy.NoiseMultiplier, "the caller's config is not written to")
	z := c.cfg.Privacy.NoiseMultiplier
	assert.LessOrEqual(t, dp.EpsilonAfter(z, 100, 1e-5, dp.DefaultOrders()), 0.1)
	assert.Equal(t, 30*time.Minute, c.cfg.RoundTimeout)
	assert.Equal(t, 3, c.cfg.MinParticipants)

	zero, err := NewCoordinator(t.Context(), newMemStore(), Config{})
	require.NoError(t, err)
	require.NotNil(t, zero.cfg.Privacy, "the zero Config keeps DP on")
	assert.Equal(t, dp.DefaultBudget(), zero.cfg.Privacy.Budget)
	assert.Equal(t, 100, zero.cfg.MaxRounds)
}

// Hospitals running their own loops concurrently against one coordinator.
func TestConcurrentParticipants(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	cfg := DefaultConfig()
	cfg.DisablePrivacy = true
	cfg.TargetParticipants = 4
	c, err := NewCoordinator(ctx, newMemStore(), cfg)
	require.NoError(t, err)
	ps, _ := cohortParticipants(t, 4, 100, 12)
	errs := make(chan error, len(ps))
	for _, p := range ps {
		go func() {
			// A long poll: progress comes from the coordinator's Changed signal.
			v, err := p.RunRound(ctx, c, time.Hour)
			if err == nil && v.Round != 1 {
				err = errors.New("did not reach round 1")
			}
			errs <- err
		}()
	}
	for range ps {
		require.NoError(t, <-errs)
	}
	h, err := c.History(ctx)
	require.NoError(t, err)
	require.Len(t, h, 2)
	assert.Len(t, h[1].Contributors, 4)
}

func TestRevealedSharesAreChecked(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c, err := NewCoordinator(ctx, newMemStore(), noDPConfig(newFakeClock(), 3))
	require.NoError(t, err)
	ps, _ := cohortParticipants(t, 3, 100, 13)
	for range 3 {
		stepAll(t, ctx, c, ps)
	}
	// hospital-00 asks its client for its reveals, then tampers with them.
	v, err := c.View(ctx, "hospital-00")
	require.NoError(t, err)
	require.Equal(t, PhaseUnmasking, v.Phase)
	rs, err := ps[0].client.Unmask(v.U3)
	require.NoError(t, err)
	tests := []struct {
		name   string
		mutate func([]secagg.RevealedShare)
	}{
		{"fail/someone else's x", func(r []secagg.RevealedShare) { r[0].Share.X = 2 }},
		{"fail/y not a field element", func(r []secagg.RevealedShare) {
			r[1].Share.Y = make([]byte, len(r[1].Share.Y))
			for i := range r[1].Share.Y {
				r[1].Share.Y[i] = 0xff
			}
		}},
		{"fail/mask key of a survivor", func(r []secagg.RevealedShare) { r[2].Kind = secagg.MaskKey }},
		{"fail/short y", func(r []secagg.RevealedShare) { r[0].Share.Y = r[0].Share.Y[:10] }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bad := slices.Clone(rs)
			for i := range bad {
				bad[i].Share.Y = slices.Clone(bad[i].Share.Y)
			}
			tc.mutate(bad)
			require.ErrorIs(t, c.Submit(ctx, "hospital-00", Submission{Round: 0, Reveals: bad}), ErrInvalidSubmission)
		})
	}
	require.NoError(t, c.Submit(ctx, "hospital-00", Submission{Round: 0, Reveals: rs}))
	// Mutating what was submitted does not reach the coordinator.
	rs[0].Share.Y[0] ^= 0xff
	stepAll(t, ctx, c, ps[1:])
	h, err := c.History(ctx)
	require.NoError(t, err)
	require.Len(t, h, 2, "the round closed with the shares as submitted")
}

// A store failure while opening the next round is retried by the next call.
func TestOpeningNextRoundIsRetried(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	store := newMemStore()
	c, err := NewCoordinator(ctx, store, noDPConfig(newFakeClock(), 3))
	require.NoError(t, err)
	ps, _ := cohortParticipants(t, 3, 100, 14)
	for range 3 {
		stepAll(t, ctx, c, ps)
	}
	// Writes: three reveals, then the closed round with its model; the fifth
	// (opening round 1) fails once.
	store.failAfter(4, errors.New("disk full"))
	for _, p := range ps[:2] {
		_, err := p.Step(ctx, c)
		require.NoError(t, err)
	}
	_, err = ps[2].Step(ctx, c)
	require.Error(t, err)
	h, err := c.History(ctx)
	require.NoError(t, err)
	require.Len(t, h, 2, "round 0 closed and was stored")
	st, err := c.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Round)
	assert.Equal(t, PhaseAdvertiseKeys, st.Phase)
}

// Run applies phase deadlines with nobody calling in.
func TestRunAppliesDeadlines(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	c, err := NewCoordinator(t.Context(), newMemStore(), noDPConfig(clock, 3))
	require.NoError(t, err)
	changed := c.Changed()
	ctx, cancel := contextWithCancel(t)
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, time.Millisecond) }()
	clock.Add(c.cfg.PhaseTimeout) // nobody advertised: round 0 is abandoned
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not apply the deadline")
	}
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	st, err := c.Status(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 1, st.Round)
}

// A coordinator down for longer than a phase loses no round: on restart the
// open round's deadlines move on by the time it was down (since its last
// heartbeat), so the participant that had not answered yet still can, and
// the round closes with all three. The heartbeat keeps Alive fresh while
// the coordinator runs idle.
func TestRestartExtendsDeadlinesByTheDowntime(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clock := newFakeClock()
	store := newMemStore()
	cfg := noDPConfig(clock, 3)
	c, err := NewCoordinator(ctx, store, cfg)
	require.NoError(t, err)
	ps, _ := cohortParticipants(t, 3, 100, 21)
	for _, p := range ps[:2] {
		_, err := p.Step(ctx, c)
		require.NoError(t, err)
	}
	// Idle but running: the timer's Advance heartbeats, no phase change;
	// a read alone does not write.
	clock.Add(c.cfg.PhaseTimeout / 2)
	_, err = c.View(ctx, "hospital-00")
	require.NoError(t, err)
	var before RoundState
	require.NoError(t, jsonUnmarshal(store.rounds[0], &before))
	require.NotEqual(t, clock.Now().UTC(), before.Alive, "a read stored a heartbeat")
	require.NoError(t, c.Advance(ctx))
	v, err := c.View(ctx, "hospital-00")
	require.NoError(t, err)
	require.Equal(t, PhaseAdvertiseKeys, v.Phase)
	var r0 RoundState
	require.NoError(t, jsonUnmarshal(store.rounds[0], &r0))
	assert.Equal(t, clock.Now().UTC(), r0.Alive, "the heartbeat stored the round")
	deadline := v.PhaseDeadline

	// Down for two phases, then back.
	down := 2 * c.cfg.PhaseTimeout
	clock.Add(down)
	c, err = NewCoordinator(ctx, store, cfg)
	require.NoError(t, err)
	v, err = c.View(ctx, "hospital-02")
	require.NoError(t, err)
	assert.Equal(t, 0, v.Round, "the round survived")
	assert.Equal(t, PhaseAdvertiseKeys, v.Phase)
	assert.Equal(t, deadline.Add(down), v.PhaseDeadline, "moved on by the downtime")
	for range 4 {
		stepAll(t, ctx, c, ps)
	}
	h, err := c.History(ctx)
	require.NoError(t, err)
	require.Len(t, h, 2)
	assert.Len(t, h[1].Contributors, 3, "the round closed with every participant")
}

// The round view says how the round before it ended: abandoned and why,
// or closed with the version it made; participants report it.
func TestViewSaysHowThePreviousRoundEnded(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clock := newFakeClock()
	store := newMemStore()
	cfg := noDPConfig(clock, 3)
	c, err := NewCoordinator(ctx, store, cfg)
	require.NoError(t, err)
	ps, _ := cohortParticipants(t, 3, 100, 23)
	v, err := c.View(ctx, "hospital-00")
	require.NoError(t, err)
	assert.Nil(t, v.Previous, "round 0 has none")
	for _, p := range ps[:2] {
		_, err := p.Step(ctx, c)
		require.NoError(t, err)
	}
	clock.Add(c.cfg.PhaseTimeout)
	v, err = c.View(ctx, "hospital-00")
	require.NoError(t, err)
	require.Equal(t, 1, v.Round)
	assert.Equal(t, &RoundEnd{Round: 0, Outcome: "abandoned", Reason: "2 organizations advertised keys, 3 needed"}, v.Previous)

	runRound(t, ctx, c, ps)
	v, err = c.View(ctx, "hospital-00")
	require.NoError(t, err)
	require.NotNil(t, v.Previous)
	assert.Equal(t, 1, v.Previous.Round)
	assert.Equal(t, "closed", v.Previous.Outcome)
	assert.Equal(t, "1.0.1", v.Previous.ModelVersion)

	// A coordinator that starts on the round after knows nothing of it;
	// one that starts on the ended round does.
	c, err = NewCoordinator(ctx, store, cfg)
	require.NoError(t, err)
	v, err = c.View(ctx, "hospital-00")
	require.NoError(t, err)
	assert.Nil(t, v.Previous)
}
