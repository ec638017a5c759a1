package server_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/server"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

// GET /api/v1/federated/task shows the run and its privacy budget: epsilon
// spent grows with each released round and spent + remaining is the
// budget. The rounds run with the long poll: each look after answering a
// phase waits for the phase to move on.
func TestFederatedTaskShowsEpsilonSpent(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		run := federated.RunSettings{Privacy: true, Epsilon: 8, Delta: 1e-5, ClipNorm: 1, Rounds: 4, MinParticipants: 3, RoundTimeout: time.Hour}
		cfg := run.Config(federated.DefaultTask())
		s := newFedServer(t, db, cfg, nil, nil, func(f *server.FederatedAPI) { f.Run = run })
		orgs := []string{"hospital-a", "hospital-b", "hospital-c"}
		s.register(t, orgs...)
		c := s.client(t, "hospital-a")

		task, err := c.FederatedTask(t.Context())
		require.NoError(t, err)
		assert.Equal(t, "diagnosis/v1", task.ID)
		assert.Equal(t, federated.DefaultTask().Hash(), task.TaskHash)
		assert.Nil(t, task.Definition, "the built-in task has no task file")
		assert.Equal(t, "hospital-a", task.OrganizationID)
		assert.Equal(t, 4, task.MaxRounds)
		assert.False(t, task.Proofs)
		assert.True(t, task.Privacy.Enabled)
		assert.Equal(t, 8.0, task.Privacy.Epsilon)
		assert.Zero(t, task.Privacy.EpsilonSpent)
		assert.Equal(t, 8.0, task.Privacy.EpsilonRemaining)

		for _, q := range []string{"wait=0", "wait=26", "wait=x"} {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, s.url+"/api/v1/federated/rounds/current?"+q, nil)
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+s.keys["hospital-a"])
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode, q)
		}

		ps := hospitals(t, orgs, 200)
		var spent float64
		for round := range 2 {
			var wg sync.WaitGroup
			for _, p := range ps {
				wg.Go(func() {
					api := s.client(t, p.Org()).FederatedRoundAPILongPoll(p.Org(), 5*time.Second)
					_, err := p.RunRound(t.Context(), api, time.Second)
					assert.NoError(t, err)
				})
			}
			wg.Wait()
			task, err = c.FederatedTask(t.Context())
			require.NoError(t, err)
			assert.Equal(t, round+1, task.Privacy.RoundsReleased)
			assert.Greater(t, task.Privacy.EpsilonSpent, spent, "round %d spent budget", round)
			assert.InDelta(t, 8, task.Privacy.EpsilonSpent+task.Privacy.EpsilonRemaining, 1e-9)
			spent = task.Privacy.EpsilonSpent
		}
		m, err := c.FederatedModel(t.Context())
		require.NoError(t, err)
		assert.Equal(t, "1.0.2", m.ModelVersion)
		assert.InDelta(t, spent, m.EpsilonSpent, 1e-9)
		assert.Equal(t, 3, m.EvalParticipants, "every hospital evaluated")
		require.NotNil(t, m.MeanAccuracy)
		require.NotNil(t, m.AccuracyStdDev)
		assert.InDelta(t, *m.Accuracy, *m.MeanAccuracy, 0.2, "pooled and mean accuracy are close")
		assert.GreaterOrEqual(t, *m.AccuracyStdDev, 0.0)
	})
}
