package app_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/server"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

func TestOrganizationStore(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		s, err := app.NewOrganizationStore(t.Context(), db)
		require.NoError(t, err)
		_, err = s.Organization(t.Context(), "hospital-a")
		require.ErrorIs(t, err, server.ErrOrganizationNotFound)
		t0 := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
		o := server.Organization{OrganizationID: "hospital-a", OrganizationName: "A", Endpoint: "https://a.example.org", EncryptionKey: "ab", CreatedAt: t0, UpdatedAt: t0}
		created, err := s.RegisterOrganization(t.Context(), o)
		require.NoError(t, err)
		assert.True(t, created)
		o.OrganizationName, o.CreatedAt, o.UpdatedAt = "A2", t0.Add(time.Hour), t0.Add(time.Hour)
		created, err = s.RegisterOrganization(t.Context(), o)
		require.NoError(t, err)
		assert.False(t, created)
		got, err := s.Organization(t.Context(), "hospital-a")
		require.NoError(t, err)
		assert.Equal(t, "A2", got.OrganizationName)
		assert.Equal(t, t0, got.CreatedAt, "re-registration keeps the first registration time")
		assert.Equal(t, t0.Add(time.Hour), got.UpdatedAt)
		// A second registry over the same database (a restart) sees it.
		again, err := app.NewOrganizationStore(t.Context(), db)
		require.NoError(t, err)
		_, err = again.Organization(t.Context(), "hospital-a")
		require.NoError(t, err)
	})
}

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
