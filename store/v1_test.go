package store_test

import (
	"os"
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
		const owner = "org:a"
		_, err = ps.Patient(ctx, owner, "PT-1")
		require.ErrorIs(t, err, healthagents.ErrPatientNotFound)
		require.ErrorIs(t, ps.DeletePatient(ctx, owner, "PT-1"), healthagents.ErrPatientNotFound)

		a := healthagents.PatientData{PatientID: "PT-1", EncryptedData: "gAAAA-one", IPFSCID: "bafy-one", DataHash: "aa"}
		require.NoError(t, ps.PutPatient(ctx, owner, a))
		got, err := ps.Patient(ctx, owner, "PT-1")
		require.NoError(t, err)
		assert.Equal(t, a, got)

		b := healthagents.PatientData{PatientID: "PT-1", EncryptedData: "gAAAA-two", IPFSCID: "bafy-two", DataHash: "bb"}
		require.NoError(t, ps.PutPatient(ctx, owner, b), "a second PUT replaces")
		got, err = ps.Patient(ctx, owner, "PT-1")
		require.NoError(t, err)
		assert.Equal(t, b, got)

		require.NoError(t, ps.DeletePatient(ctx, owner, "PT-1"))
		_, err = ps.Patient(ctx, owner, "PT-1")
		require.ErrorIs(t, err, healthagents.ErrPatientNotFound)
	})
}

// TestPatientStoreOwners: a patient id names a record only within its
// owner. Another owner can neither read, replace nor delete it; its PUT of
// the same id makes a record of its own.
func TestPatientStoreOwners(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		ctx := t.Context()
		ps, err := store.NewPatientStore(db)
		require.NoError(t, err)
		a := healthagents.PatientData{PatientID: "PT-1", EncryptedData: "gAAAA-a", IPFSCID: "bafy-a", DataHash: "aa"}
		b := healthagents.PatientData{PatientID: "PT-1", EncryptedData: "gAAAA-b", IPFSCID: "bafy-b", DataHash: "bb"}
		require.NoError(t, ps.PutPatient(ctx, "org:a", a))

		for _, other := range []string{"org:b", "key:k1", ""} {
			_, err = ps.Patient(ctx, other, "PT-1")
			require.ErrorIs(t, err, healthagents.ErrPatientNotFound, "owner %q reads org:a's record", other)
			require.ErrorIs(t, ps.DeletePatient(ctx, other, "PT-1"), healthagents.ErrPatientNotFound, "owner %q deletes it", other)
		}

		require.NoError(t, ps.PutPatient(ctx, "org:b", b), "org:b registers the same id")
		got, err := ps.Patient(ctx, "org:a", "PT-1")
		require.NoError(t, err)
		assert.Equal(t, a, got, "org:b's PUT did not replace org:a's record")
		got, err = ps.Patient(ctx, "org:b", "PT-1")
		require.NoError(t, err)
		assert.Equal(t, b, got)

		require.NoError(t, ps.DeletePatient(ctx, "org:b", "PT-1"))
		got, err = ps.Patient(ctx, "org:a", "PT-1")
		require.NoError(t, err)
		assert.Equal(t, a, got, "org:b's DELETE removed only its own record")
	})
}

// TestPatientCIDInUse: CIDInUse finds an envelope of any owner naming one of
// the CIDs asked for, and none once the last is deleted or replaced.
func TestPatientCIDInUse(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		ctx := t.Context()
		ps, err := store.NewPatientStore(db)
		require.NoError(t, err)
		env := healthagents.PatientData{PatientID: "PT-1", EncryptedData: "gAAAA-a", IPFSCID: "bafy-shared", DataHash: "aa"}
		require.NoError(t, ps.PutPatient(ctx, "org:a", env))
		require.NoError(t, ps.PutPatient(ctx, "org:b", env))

		inUse := func(cids ...string) bool {
			ok, err := ps.CIDInUse(ctx, cids...)
			require.NoError(t, err)
			return ok
		}
		assert.True(t, inUse("bafy-shared"))
		assert.True(t, inUse("Qm-other-spelling", "bafy-shared"), "any of the spellings")
		assert.False(t, inUse("bafy-unknown"))
		assert.False(t, inUse())

		require.NoError(t, ps.DeletePatient(ctx, "org:a", "PT-1"))
		assert.True(t, inUse("bafy-shared"), "org:b still names it")
		env.IPFSCID = "bafy-next"
		require.NoError(t, ps.PutPatient(ctx, "org:b", env))
		assert.False(t, inUse("bafy-shared"), "replaced by org:b's next envelope")
		assert.True(t, inUse("bafy-next"))
	})
}

// TestPatientOwnerMigration: rows stored before migration 0008 (no owner)
// survive it under the empty owner with their data intact; no keyed owner sees
// them, and their owner can register the id afresh.
func TestPatientOwnerMigration(t *testing.T) {
	t.Parallel()
	all, err := store.ParseMigrations(os.DirFS("migrations"))
	require.NoError(t, err)
	var before []store.Migration
	for _, m := range all {
		if m.Version < 8 {
			before = append(before, m)
		}
	}
	require.Less(t, len(before), len(all), "migration 0008 exists")
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			old := storetest.Open(t, b, store.WithMigrations(before))
			_, err := old.SQL().ExecContext(ctx, old.Rebind(`INSERT INTO v1_patients (patient_id, encrypted_data, ipfs_cid, data_hash, updated_at)
				VALUES (?, ?, ?, ?, ?)`), "PT-OLD", "gAAAA-old", "bafy-old", "cc", int64(1700000000000000))
			require.NoError(t, err)
			require.NoError(t, old.Close())

			db := storetest.Open(t, b)
			vs, err := db.AppliedMigrations(ctx)
			require.NoError(t, err)
			assert.Contains(t, vs, 8)
			n, err := store.ProtectAtRest(ctx, db) // as the service does at start (migration 0012)
			require.NoError(t, err)
			assert.Equal(t, 1, n)
			ps, err := store.NewPatientStore(db)
			require.NoError(t, err)
			got, err := ps.Patient(ctx, "", "PT-OLD")
			require.NoError(t, err, "the existing row is kept, under owner ''")
			assert.Equal(t, healthagents.PatientData{PatientID: "PT-OLD", EncryptedData: "gAAAA-old", IPFSCID: "bafy-old", DataHash: "cc"}, got)
			_, err = ps.Patient(ctx, "org:a", "PT-OLD")
			require.ErrorIs(t, err, healthagents.ErrPatientNotFound, "no keyed owner reaches an unattributed row")

			fresh := healthagents.PatientData{PatientID: "PT-OLD", EncryptedData: "gAAAA-new", IPFSCID: "bafy-new", DataHash: "dd"}
			require.NoError(t, ps.PutPatient(ctx, "org:a", fresh))
			got, err = ps.Patient(ctx, "org:a", "PT-OLD")
			require.NoError(t, err)
			assert.Equal(t, fresh, got)
			require.NoError(t, ps.DeletePatient(ctx, "", "PT-OLD"), "the leftover can still be deleted")
		})
	}
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
		assert.Regexp(t, "^[0-9a-f]{64}$", got.PatientID, "the patient's keyed pseudonym, not its id")
		got.PatientID = p.PatientID
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
