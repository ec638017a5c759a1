package store_test

import (
	"os"
	"strings"
	"testing"

	"github.com/fernet/fernet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

func testKeyring(t testing.TB) *cipher.Keyring {
	t.Helper()
	var k fernet.Key
	require.NoError(t, k.Generate())
	kr, err := cipher.NewKeyring(&k)
	require.NoError(t, err)
	return kr
}

// TestAtRestRows: with the service's sealer, a stored patient and a stored
// validation name neither the patient id nor anything of the result in any
// column; both read back whole through the stores, and not through a store
// of another keyring.
func TestAtRestRows(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		ctx := t.Context()
		kr := testKeyring(t)
		ps, err := store.NewPatientStore(db, store.WithKeySealer(kr))
		require.NoError(t, err)
		rs, err := store.NewPrescriptionStore(db, store.WithKeySealer(kr))
		require.NoError(t, err)
		env := healthagents.PatientData{PatientID: "PT-ATREST-77", EncryptedData: "gAAAA-x", IPFSCID: "bafy-x", DataHash: "aa"}
		require.NoError(t, ps.PutPatient(ctx, "org:a", env))
		p := healthagents.StoredPrescription{ID: "rx_atrest", Owner: "org:a", PatientID: env.PatientID, Status: "approved",
			Result: []byte(`{"drug":"RXCUI-ATREST-8","service_date":"2031-02-03"}`)}
		require.NoError(t, rs.SavePrescription(ctx, p))

		for _, q := range []string{`SELECT owner, patient_id, encrypted_data FROM v1_patients`, `SELECT owner, patient_id, result FROM v1_prescriptions`} {
			var owner, pid, rest string
			require.NoError(t, db.SQL().QueryRowContext(ctx, q).Scan(&owner, &pid, &rest))
			assert.Regexp(t, "^[0-9a-f]{64}$", pid, q)
			for _, needle := range []string{"PT-ATREST-77", "RXCUI-ATREST-8", "2031-02-03"} {
				assert.NotContains(t, pid+rest, needle, q)
			}
		}
		got, err := ps.Patient(ctx, "org:a", env.PatientID)
		require.NoError(t, err)
		assert.Equal(t, env, got)
		rx, err := rs.Prescription(ctx, p.ID)
		require.NoError(t, err)
		assert.JSONEq(t, string(p.Result), string(rx.Result))

		other, err := store.NewPrescriptionStore(db, store.WithKeySealer(testKeyring(t)))
		require.NoError(t, err)
		_, err = other.Prescription(ctx, p.ID)
		require.Error(t, err, "another keyring opens neither the pseudonym key nor the result")
	})
}

// TestProtectAtRest: rows written before migration 0012 (patient ids and
// results in clear) are rewritten by ProtectAtRest — pseudonym, sealed
// result — and read back through the stores as before; a second run finds
// nothing to do; a row the new code wrote meanwhile under the same patient
// wins over the old one.
func TestProtectAtRest(t *testing.T) {
	t.Parallel()
	all, err := store.ParseMigrations(os.DirFS("migrations"))
	require.NoError(t, err)
	var before []store.Migration
	for _, m := range all {
		if m.Version < 12 {
			before = append(before, m)
		}
	}
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			old := storetest.Open(t, b, store.WithMigrations(before))
			for _, pid := range []string{"PT-OLD-1", "PT-OLD-2"} {
				_, err := old.SQL().ExecContext(ctx, old.Rebind(`INSERT INTO v1_patients (owner, patient_id, encrypted_data, ipfs_cid, data_hash, updated_at)
					VALUES (?, ?, ?, ?, ?, ?)`), "org:a", pid, "gAAAA-old-"+pid[len(pid)-1:], "bafy-old", "cc", int64(1700000000000000))
				require.NoError(t, err)
			}
			_, err := old.SQL().ExecContext(ctx, old.Rebind(`INSERT INTO v1_prescriptions (id, owner, patient_id, status, created_at, result)
				VALUES (?, ?, ?, ?, ?, ?)`), "rx_old", "org:a", "PT-OLD-1", "approved", int64(1700000000000000), `{"drug":"RXCUI-OLD-9"}`)
			require.NoError(t, err)
			require.NoError(t, old.Close())

			db := storetest.Open(t, b)
			kr := testKeyring(t)
			ps, err := store.NewPatientStore(db, store.WithKeySealer(kr))
			require.NoError(t, err)
			_, err = ps.Patient(ctx, "org:a", "PT-OLD-1")
			require.ErrorIs(t, err, healthagents.ErrPatientNotFound, "an unprotected row is not served")
			newer := healthagents.PatientData{PatientID: "PT-OLD-2", EncryptedData: "gAAAA-newer", IPFSCID: "bafy-n", DataHash: "dd"}
			require.NoError(t, ps.PutPatient(ctx, "org:a", newer))

			n, err := store.ProtectAtRest(ctx, db, store.WithKeySealer(kr))
			require.NoError(t, err)
			assert.Equal(t, 3, n)
			n, err = store.ProtectAtRest(ctx, db, store.WithKeySealer(kr))
			require.NoError(t, err)
			assert.Zero(t, n, "nothing left to rewrite")

			var dump strings.Builder
			for _, q := range []string{`SELECT patient_id || encrypted_data FROM v1_patients`, `SELECT patient_id || result FROM v1_prescriptions`} {
				rows, err := db.SQL().QueryContext(ctx, q)
				require.NoError(t, err)
				for rows.Next() {
					var s string
					require.NoError(t, rows.Scan(&s))
					dump.WriteString(s + "\n")
				}
				require.NoError(t, rows.Err())
				rows.Close()
			}
			assert.NotContains(t, dump.String(), "PT-OLD")
			assert.NotContains(t, dump.String(), "RXCUI-OLD-9")

			got, err := ps.Patient(ctx, "org:a", "PT-OLD-1")
			require.NoError(t, err)
			assert.Equal(t, "gAAAA-old-1", got.EncryptedData)
			got, err = ps.Patient(ctx, "org:a", "PT-OLD-2")
			require.NoError(t, err)
			assert.Equal(t, newer, got, "the row written since wins")
			rs, err := store.NewPrescriptionStore(db, store.WithKeySealer(kr))
			require.NoError(t, err)
			rx, err := rs.Prescription(ctx, "rx_old")
			require.NoError(t, err)
			assert.JSONEq(t, `{"drug":"RXCUI-OLD-9"}`, string(rx.Result))
		})
	}
}
