package federated_test

import (
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/federated/dp"
	"github.com/healthagents/healthagents/federated/secagg"
	"github.com/healthagents/healthagents/internal/testcache/normkeys"
)

// TestDistributedNoiseRound: with distributed DP the round tells each
// participant its noise share; each adds it before masking, and the
// coordinator adds nothing: the new model is the base plus exactly the
// average of what the participants masked, whose weights carry noise far
// beyond the clip bound (an un-noised sum of three clipped updates has
// norm at most 3). The round spends the budget as a central round with
// the same multiplier would.
func TestDistributedNoiseRound(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	cfg := federated.DefaultConfig()
	cfg.MaxRounds = 4
	cfg.Privacy = &federated.PrivacyConfig{Budget: dp.Budget{Epsilon: 0.25, Delta: 1e-5}, Distributed: true}
	c, err := federated.NewCoordinator(ctx, federated.NewTestStore(), cfg)
	require.NoError(t, err)
	base, err := c.Model(ctx)
	require.NoError(t, err)
	ps := federated.NewTestParticipants(t, 3, 150, 41, nil)

	v, err := c.View(ctx, ps[0].Org())
	require.NoError(t, err)
	z, err := dp.CalibrateNoise(cfg.Privacy.Budget, cfg.MaxRounds, dp.DefaultOrders())
	require.NoError(t, err)
	nw := len(base.Weights)
	delta := cfg.ClipNorm*math.Ldexp(1, int(cfg.FracBits)) + math.Sqrt(float64(nw))
	assert.InDelta(t, z*delta/math.Sqrt(2), v.NoiseShare, 1e-6*v.NoiseShare, "s = zΔ/√(MinParticipants−1)")
	assert.Equal(t, "distributed", c.Privacy().Noise)

	var wg sync.WaitGroup
	for _, p := range ps {
		wg.Go(func() {
			_, err := p.RunRound(ctx, c, time.Hour)
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	h, err := c.History(ctx)
	require.NoError(t, err)
	require.Len(t, h, 2, "the round closed")

	q, err := secagg.NewQuantizer(cfg.ClipNorm, cfg.FracBits, cfg.MaxParticipants)
	require.NoError(t, err)
	sum, err := secagg.Sum(ps[0].Plain(), ps[1].Plain(), ps[2].Plain())
	require.NoError(t, err)
	upd := q.Dequantize(sum[:nw])
	var norm float64
	for i, w := range base.Weights {
		assert.InDelta(t, w+upd[i]/3, h[1].Weights[i], 1e-12, "no noise but the participants' shares")
		norm += upd[i] * upd[i]
	}
	// Un-noised, three clipped updates sum to norm at most 3; with the
	// shares (z ≈ 30: about 37 per weight) below 4 is a 10^-6 event.
	assert.Greater(t, math.Sqrt(norm), 4.0, "the shares are in the sum (z = %.1f)", z)

	p := c.Privacy()
	assert.Equal(t, 1, p.RoundsReleased)
	assert.InDelta(t, dp.EpsilonAfter(z, 1, cfg.Privacy.Budget.Delta, dp.DefaultOrders()), p.EpsilonSpent, 1e-9, "charged as a central round of multiplier z")
}

// TestDistributedNoiseRefusesProofs: the update-bound proof covers the
// update without its noise, so the two cannot be combined.
func TestDistributedNoiseRefusesProofs(t *testing.T) {
	t.Parallel()
	pc, _ := normkeys.Service().ProofGroup()
	cfg := federated.DefaultConfig()
	cfg.Proofs = &pc
	cfg.Privacy = &federated.PrivacyConfig{Budget: dp.DefaultBudget(), Distributed: true}
	_, err := federated.NewCoordinator(t.Context(), federated.NewTestStore(), cfg)
	require.ErrorIs(t, err, federated.ErrConfig)
	assert.Contains(t, err.Error(), "distributed noise cannot be combined with proved rounds")

	_, err = federated.SettingsFromEnv(func(k string) string {
		return map[string]string{"FEDERATED_DP": "distributed", "FEDERATED_PROOFS": "on"}[k]
	})
	var se *federated.SettingError
	require.True(t, errors.As(err, &se), "%v", err)
	assert.Equal(t, "FEDERATED_DP", se.Setting)
	s, err := federated.SettingsFromEnv(func(k string) string { return map[string]string{"FEDERATED_DP": "Distributed"}[k] })
	require.NoError(t, err)
	assert.True(t, s.Privacy)
	assert.True(t, s.Distributed)
	assert.True(t, s.Config(federated.DefaultTask()).Privacy.Distributed)
	_, err = federated.SettingsFromEnv(func(k string) string { return map[string]string{"FEDERATED_DP": "local"}[k] })
	require.True(t, errors.As(err, &se))
	assert.Contains(t, err.Error(), "must be on, off or distributed")
}

// TestDistributedNoiseRefusesOverflowingShares: a budget and clip norm
// whose shares could overflow the ring are refused at start.
func TestDistributedNoiseRefusesOverflowingShares(t *testing.T) {
	t.Parallel()
	cfg := federated.DefaultConfig()
	cfg.ClipNorm = 1e6
	cfg.Privacy = &federated.PrivacyConfig{Budget: dp.Budget{Epsilon: 0.01, Delta: 1e-5}, Distributed: true}
	_, err := federated.NewCoordinator(t.Context(), federated.NewTestStore(), cfg)
	require.ErrorIs(t, err, federated.ErrConfig)
	assert.Contains(t, err.Error(), "would overflow")
	cfg.Privacy.Distributed = false
	_, err = federated.NewCoordinator(t.Context(), federated.NewTestStore(), cfg)
	require.NoError(t, err, "central noise has no such bound")
}
