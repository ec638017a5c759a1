package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

func TestOrganizationStore(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		s, err := store.NewOrganizationStore(db)
		require.NoError(t, err)
		_, err = s.Organization(t.Context(), "hospital-a")
		require.ErrorIs(t, err, federated.ErrOrganizationNotFound)
		t0 := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
		o := federated.Organization{OrganizationID: "hospital-a", OrganizationName: "A", Endpoint: "https://a.example.org", EncryptionKey: "ab", CreatedAt: t0, UpdatedAt: t0}
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
		again, err := store.NewOrganizationStore(db)
		require.NoError(t, err)
		_, err = again.Organization(t.Context(), "hospital-a")
		require.NoError(t, err)
	})
}
