package server_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/federated/dp"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

// TestDistributedNoiseOverHTTP: with distributed DP the round the SDK
// reads carries noise_share, participants over HTTP add their shares before
// masking, the model released moves by the noise (an un-noised average of
// clipped updates moves by at most the clip norm), and GET task says who
// added the noise.
func TestDistributedNoiseOverHTTP(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		ctx := t.Context()
		cfg := federated.Config{RoundTimeout: time.Hour, MaxRounds: 4,
			Privacy: &federated.PrivacyConfig{Budget: dp.Budget{Epsilon: 0.25, Delta: 1e-5}, Distributed: true}}
		s := newFedServer(t, db, cfg, nil, nil, nil)
		orgs := []string{"hospital-a", "hospital-b", "hospital-c"}
		s.register(t, orgs...)
		v, err := s.client(t, "hospital-a").FederatedRound(ctx)
		require.NoError(t, err)
		require.Positive(t, v.NoiseShare, "the round carries the share")
		before, err := s.client(t, "hospital-a").FederatedModel(ctx)
		require.NoError(t, err)
		w0, err := client.DecodeWeights(before)
		require.NoError(t, err)

		s.runRound(t, "", cohortParticipants(t, orgs, federated.Task{}, 150, 5))
		after, err := s.client(t, "hospital-a").FederatedModel(ctx)
		require.NoError(t, err)
		require.Equal(t, "1.0.1", after.ModelVersion)
		w1, err := client.DecodeWeights(after)
		require.NoError(t, err)
		var moved float64
		for i := range w0 {
			moved += (w1[i] - w0[i]) * (w1[i] - w0[i])
		}
		// Un-noised, the average of clipped updates moves the model by at
		// most the clip norm (1); the shares (z ≈ 30) move it by about 28:
		// below 1.5 is a 10^-6 event.
		assert.Greater(t, math.Sqrt(moved), 1.5, "the participants' noise is in the model")
		task, err := s.client(t, "hospital-a").FederatedTask(ctx)
		require.NoError(t, err)
		assert.Equal(t, "distributed", task.Privacy.Noise)
		assert.Positive(t, task.Privacy.EpsilonSpent)
	})
}
