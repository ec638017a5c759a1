package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
	"github.com/healthagents/healthagents/webhook"
)

// outboxRow is one webhook_deliveries row.
type outboxRow struct{ endpoint, event, payload string }

func outboxRows(t *testing.T, db *store.DB) []outboxRow {
	t.Helper()
	rows, err := db.SQL().QueryContext(t.Context(), `SELECT endpoint_id, event, payload FROM webhook_deliveries ORDER BY endpoint_id, event`)
	require.NoError(t, err)
	defer rows.Close()
	var out []outboxRow
	for rows.Next() {
		var r outboxRow
		require.NoError(t, rows.Scan(&r.endpoint, &r.event, &r.payload))
		out = append(out, r)
	}
	require.NoError(t, rows.Err())
	return out
}

// refuseOutbox installs a trigger that makes every insert into the outbox
// fail, inside whatever transaction runs it.
func refuseOutbox(t *testing.T, db *store.DB) {
	t.Helper()
	stmts := []string{`CREATE TRIGGER refuse_outbox BEFORE INSERT ON webhook_deliveries
		BEGIN SELECT RAISE(ABORT, 'outbox refused'); END`}
	if db.Dialect() == store.Postgres {
		stmts = []string{
			`CREATE FUNCTION refuse_outbox() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'outbox refused'; END $$`,
			`CREATE TRIGGER refuse_outbox BEFORE INSERT ON webhook_deliveries FOR EACH ROW EXECUTE FUNCTION refuse_outbox()`,
		}
	}
	for _, s := range stmts {
		_, err := db.SQL().ExecContext(t.Context(), s)
		require.NoError(t, err)
	}
}

// TestPrescriptionOutbox: a validation and the outbox rows of its events
// are committed together or not at all, and the dispatcher is woken only
// after the commit.
func TestPrescriptionOutbox(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		ws, err := store.NewWebhookStore(db)
		require.NoError(t, err)
		var (
			mu   sync.Mutex
			woke []int // outbox rows visible outside the transaction at each wake-up
		)
		hook := func() {
			var n int
			err := db.SQL().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM webhook_deliveries`).Scan(&n)
			assert.NoError(t, err)
			mu.Lock()
			woke = append(woke, n)
			mu.Unlock()
		}
		wakeUps := func() []int {
			mu.Lock()
			defer mu.Unlock()
			return append([]int(nil), woke...)
		}
		reg, err := webhook.NewRegistry(ws, webhook.AllowHTTP(), webhook.AllowLoopback(),
			webhook.WithTenants(), webhook.WithEnqueueHook(hook))
		require.NoError(t, err)
		ctx := t.Context()
		rx := []string{healthagents.EventPrescriptionValidated, healthagents.EventPrescriptionApproved}
		a, err := reg.Create(ctx, "org:a", webhook.CreateRequest{URL: "http://127.0.0.1:9/a", Events: rx})
		require.NoError(t, err)
		_, err = reg.Create(ctx, "org:b", webhook.CreateRequest{URL: "http://127.0.0.1:9/b", Events: rx})
		require.NoError(t, err)
		_, err = reg.Create(ctx, "org:a", webhook.CreateRequest{URL: "http://127.0.0.1:9/c", Events: []string{healthagents.EventEligibilityVerified}})
		require.NoError(t, err)

		s, err := store.NewPrescriptionOutbox(db, reg)
		require.NoError(t, err)
		at := time.Date(2026, 11, 22, 1, 2, 3, 456789000, time.UTC)
		rxp := func(id string) healthagents.StoredPrescription {
			return healthagents.StoredPrescription{ID: id, Owner: "org:a", PatientID: "PT-77", Status: healthagents.StatusApproved,
				CreatedAt: at, Result: []byte(`{"validation_status":"approved"}`)}
		}
		events := func(id, owner string) []healthagents.Event {
			data := map[string]any{"valid": true, "zk_proof_verified": true, "prescription_id": id, "validation_status": "approved"}
			return []healthagents.Event{
				{Type: healthagents.EventPrescriptionValidated, Time: at, PatientID: "PT-77", Owner: owner, Data: data},
				{Type: healthagents.EventPrescriptionApproved, Time: at, PatientID: "PT-77", Owner: owner, Data: data},
			}
		}

		// Both written: the validation, and one row per event for the one
		// endpoint of org:a subscribed to it.
		require.NoError(t, s.SavePrescriptionWithEvents(ctx, rxp("rx_1"), events("rx_1", "org:a")))
		got, err := s.Prescription(ctx, "rx_1")
		require.NoError(t, err)
		assert.NotEqual(t, rxp("rx_1").PatientID, got.PatientID, "stored as its pseudonym")
		got.PatientID = rxp("rx_1").PatientID
		assert.Equal(t, rxp("rx_1"), got)
		rows := outboxRows(t, db)
		require.Len(t, rows, 2)
		for i, ev := range []string{healthagents.EventPrescriptionApproved, healthagents.EventPrescriptionValidated} {
			assert.Equal(t, a.ID, rows[i].endpoint)
			assert.Equal(t, ev, rows[i].event)
			assert.Contains(t, rows[i].payload, `"prescription_id":"rx_1"`)
			assert.NotContains(t, rows[i].payload, "PT-77", "the patient id is delivered as a keyed hash only")
		}
		assert.Equal(t, []int{2}, wakeUps(), "one wake-up, after the commit: the rows were visible to another connection")

		// The validation cannot be written (its id is taken): no outbox row.
		err = s.SavePrescriptionWithEvents(ctx, rxp("rx_1"), events("rx_1", "org:a"))
		require.Error(t, err)
		assert.Len(t, outboxRows(t, db), 2)

		// An anonymous request's events go to no tenant: the validation
		// alone is stored, nobody is woken.
		require.NoError(t, s.SavePrescriptionWithEvents(ctx, rxp("rx_2"), events("rx_2", "")))
		_, err = s.Prescription(ctx, "rx_2")
		require.NoError(t, err)
		assert.Len(t, outboxRows(t, db), 2)

		// The outbox insert fails inside the transaction: the validation
		// written before it in that transaction is gone too.
		refuseOutbox(t, db)
		err = s.SavePrescriptionWithEvents(ctx, rxp("rx_3"), events("rx_3", "org:a"))
		require.Error(t, err)
		assert.True(t, strings.Contains(err.Error(), "outbox refused"), "%v", err)
		_, err = s.Prescription(ctx, "rx_3")
		require.ErrorIs(t, err, healthagents.ErrPrescriptionNotFound, "no validation without its events")
		assert.Len(t, outboxRows(t, db), 2)
		assert.Equal(t, []int{2}, wakeUps(), "no wake-up for a rolled-back transaction")
	})
}

func TestPrescriptionOutboxNeedsPreparer(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)})
	_, err := store.NewPrescriptionOutbox(db, nil)
	require.Error(t, err)
}

// BenchmarkPrescriptionOutbox compares what an approved v1 validation
// waits for: the validation and its two events in one transaction, against
// the validation and two Emit calls as separate writes (the path of stores
// that are not a PrescriptionEventStore). One endpoint is subscribed.
func BenchmarkPrescriptionOutbox(b *testing.B) {
	for _, be := range storetest.Backends(b) {
		b.Run(be.Name, func(b *testing.B) {
			db := storetest.Open(b, be)
			ws, err := store.NewWebhookStore(db)
			require.NoError(b, err)
			reg, err := webhook.NewRegistry(ws, webhook.AllowHTTP(), webhook.AllowLoopback())
			require.NoError(b, err)
			_, err = reg.Create(b.Context(), "org:a", webhook.CreateRequest{URL: "http://127.0.0.1:9/a",
				Events: []string{healthagents.EventPrescriptionValidated, healthagents.EventPrescriptionApproved}})
			require.NoError(b, err)
			s, err := store.NewPrescriptionOutbox(db, reg)
			require.NoError(b, err)
			data := map[string]any{"valid": true, "prescription_id": "rx", "validation_status": "approved"}
			events := []healthagents.Event{
				{Type: healthagents.EventPrescriptionValidated, PatientID: "PT-1", Data: data},
				{Type: healthagents.EventPrescriptionApproved, PatientID: "PT-1", Data: data},
			}
			n := 0
			next := func() healthagents.StoredPrescription {
				n++
				return healthagents.StoredPrescription{ID: fmt.Sprint("rx_", n), PatientID: "PT-1", Status: "approved",
					CreatedAt: time.Now(), Result: []byte(`{}`)}
			}
			b.Run("one transaction", func(b *testing.B) {
				for b.Loop() {
					if err := s.SavePrescriptionWithEvents(b.Context(), next(), events); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("separate writes", func(b *testing.B) {
				for b.Loop() {
					if err := s.SavePrescription(b.Context(), next()); err != nil {
						b.Fatal(err)
					}
					for _, e := range events {
						if err := reg.Emit(b.Context(), e); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		})
	}
}
