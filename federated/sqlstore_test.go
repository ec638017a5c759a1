package federated_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/federated/dp"
	"github.com/healthagents/healthagents/federated/synth"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

// The coordinator over the real SQL store (SQLite, and PostgreSQL when
// HEALTHAGENTS_TEST_POSTGRES is set): the process "dies" mid-round, a new
// coordinator opens the same database and the round completes.
func TestCoordinatorResumesOverSQLStore(t *testing.T) {
	t.Parallel()
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
			cfg := federated.DefaultConfig()
			cfg.Privacy = &federated.PrivacyConfig{Budget: dp.Budget{Epsilon: 50, Delta: 1e-5}}
			cfg.MaxRounds = 5
			cfg.Clock = func() time.Time { return now }
			open := func() (*store.DB, *federated.Coordinator) {
				db, err := store.Open(ctx, b.DSN)
				require.NoError(t, err)
				fs, err := store.NewFederatedStore(db)
				require.NoError(t, err)
				c, err := federated.NewCoordinator(ctx, fs, cfg)
				require.NoError(t, err)
				return db, c
			}
			var ps []*federated.Participant
			for i, co := range synth.ThreeCohorts(200, 3) {
				p, err := federated.NewParticipant(federated.ParticipantConfig{Org: fmt.Sprintf("h%d", i)}, synth.Records(co))
				require.NoError(t, err)
				ps = append(ps, p)
			}
			step := func(c *federated.Coordinator, ps ...*federated.Participant) {
				for _, p := range ps {
					_, err := p.Step(ctx, c)
					require.NoError(t, err)
				}
			}

			db, c := open()
			step(c, ps...) // advertise
			step(c, ps...) // share keys
			step(c, ps[0]) // one masked input, then the process dies
			require.NoError(t, db.Close())

			db, c = open()
			st, err := c.Status(ctx)
			require.NoError(t, err)
			assert.Equal(t, federated.PhaseMaskedInput, st.Phase)
			assert.Equal(t, 3, st.Participants)
			step(c, ps[1:]...) // the others mask
			step(c, ps...)     // unmask
			h, err := c.History(ctx)
			require.NoError(t, err)
			require.Len(t, h, 2)
			require.NoError(t, db.Close())

			db, c = open()
			defer db.Close()
			h2, err := c.History(ctx)
			require.NoError(t, err)
			assert.Equal(t, h, h2, "history survives the restart exactly")
			l, err := c.Ledger(ctx)
			require.NoError(t, err)
			require.Len(t, l.Entries, 1)
			st, err = c.Status(ctx)
			require.NoError(t, err)
			assert.Equal(t, 1, st.Round)
			assert.Equal(t, federated.PhaseAdvertiseKeys, st.Phase)
		})
	}
}
