package app

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/audit"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

// TestOpenAuditFindsThePatientOfAPrescription: a read by prescription id is
// logged against the prescription's patient, found in the stored validations.
func TestOpenAuditFindsThePatientOfAPrescription(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		ctx := t.Context()
		rx, err := store.NewPrescriptionStore(db)
		require.NoError(t, err)
		require.NoError(t, rx.SavePrescription(ctx, healthagents.StoredPrescription{
			ID: "rx_audit1", PatientID: "PT-RX-1", Status: "approved", CreatedAt: time.Now(), Result: []byte(`{}`),
		}))
		log, err := openAudit(db)
		require.NoError(t, err)
		require.NoError(t, log.Record(ctx,
			audit.Access{ActorType: audit.ActorKey, KeyID: "k1", Action: audit.ActionPrescriptionRead, PrescriptionID: "rx_audit1", Status: 200},
			audit.Access{ActorType: audit.ActorKey, KeyID: "k1", Action: audit.ActionPrescriptionRead, PrescriptionID: "rx_unknown", Status: 404},
		))
		es, total, err := log.List(ctx, audit.Query{PatientID: "PT-RX-1", Limit: 10})
		require.NoError(t, err)
		require.Equal(t, 1, total)
		assert.Equal(t, int64(1), es[0].Seq)
		es, _, err = log.List(ctx, audit.Query{Limit: 10})
		require.NoError(t, err)
		require.Len(t, es, 2)
		assert.Empty(t, es[1].PatientRef, "an unknown prescription names no patient")
		v, err := log.Verify(ctx)
		require.NoError(t, err)
		assert.True(t, v.Valid)
	})
}
