package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

func TestPatientStore(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		ctx := t.Context()
		ps, err := store.NewPatientStore(db)
		require.NoError(t, err)
		_, err = ps.Patient(ctx, "PT-1")
		require.ErrorIs(t, err, healthagents.ErrPatientNotFound)
		require.ErrorIs(t, ps.DeletePatient(ctx, "PT-1"), healthagents.ErrPatientNotFound)

		a := healthagents.PatientData{PatientID: "PT-1", EncryptedData: "gAAAA-one", IPFSCID: "bafy-one", DataHash: "aa"}
		require.NoError(t, ps.PutPatient(ctx, a))
		got, err := ps.Patient(ctx, "PT-1")
		require.NoError(t, err)
		assert.Equal(t, a, got)

		b := healthagents.PatientData{PatientID: "PT-1", EncryptedData: "gAAAA-two", IPFSCID: "bafy-two", DataHash: "bb"}
		require.NoError(t, ps.PutPatient(ctx, b), "a second PUT replaces")
		got, err = ps.Patient(ctx, "PT-1")
		require.NoError(t, err)
		assert.Equal(t, b, got)

		require.NoError(t, ps.DeletePatient(ctx, "PT-1"))
		_, err = ps.Patient(ctx, "PT-1")
		require.ErrorIs(t, err, healthagents.ErrPatientNotFound)
	})
}

func TestPrescriptionStore(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		ctx := t.Context()
		s, err := store.NewPrescriptionStore(db)
		require.NoError(t, err)
		_, err = s.Prescription(ctx, "rx_1")
		require.ErrorIs(t, err, healthagents.ErrPrescriptionNotFound)
		p := healthagents.StoredPrescription{ID: "rx_1", Owner: "org:a", PatientID: "PT-1", Status: "approved",
			CreatedAt: time.Date(2026, 11, 21, 1, 2, 3, 456789000, time.UTC), Result: []byte(`{"validation_status":"approved"}`)}
		require.NoError(t, s.SavePrescription(ctx, p))
		got, err := s.Prescription(ctx, "rx_1")
		require.NoError(t, err)
		assert.Equal(t, p, got)
		require.Error(t, s.SavePrescription(ctx, p), "ids are unique")
	})
}

func TestNilDB(t *testing.T) {
	t.Parallel()
	_, err := store.NewPatientStore(nil)
	require.Error(t, err)
	_, err = store.NewPrescriptionStore(nil)
	require.Error(t, err)
}
