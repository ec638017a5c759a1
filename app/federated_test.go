package app_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

func TestOpenFederatedResumesFromTheDatabase(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		cfg := federated.Config{DisablePrivacy: true}
		f, err := app.OpenFederated(t.Context(), db, cfg, nil)
		require.NoError(t, err)
		st, _, err := f.API.FederatedStatus(t.Context())
		require.NoError(t, err)
		assert.Equal(t, 0, st.CurrentRound)
		require.NoError(t, f.Close())
		require.NoError(t, f.Close(), "Close is idempotent")
		// Another configuration than the stored run's is refused.
		_, err = app.OpenFederated(t.Context(), db, federated.Config{}, nil)
		require.ErrorIs(t, err, federated.ErrStoreMismatch)
		f, err = app.OpenFederated(t.Context(), db, cfg, nil)
		require.NoError(t, err)
		t.Cleanup(func() { f.Close() })
		_, trained, err := f.API.FederatedStatus(t.Context())
		require.NoError(t, err)
		assert.False(t, trained)
	})
}
