package store_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/audit"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
	"github.com/healthagents/healthagents/webhook"
)

func auditEntry(i int) audit.Entry {
	return audit.Entry{
		Time: time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC), ActorType: audit.ActorKey, KeyID: "key" + string(rune('a'+i%3)),
		Organization: "org", ClientIP: "127.0.0.1", Action: audit.ActionPatientPut, PatientRef: "ref" + string(rune('a'+i%2)),
		Outcome: audit.OutcomeSuccess, Status: 200, RequestID: "req",
	}
}

func TestAuditAppendListVerify(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		ctx := t.Context()
		st, err := store.NewAuditStore(db)
		require.NoError(t, err)
		log, err := audit.New(st)
		require.NoError(t, err)

		v, err := log.Verify(ctx)
		require.NoError(t, err)
		assert.Equal(t, audit.Verification{Valid: true, HeadHash: audit.GenesisHash}, v, "an empty log is valid")

		var es []audit.Entry
		for i := range 12 {
			es = append(es, auditEntry(i))
		}
		stored, err := st.Append(ctx, es[:5])
		require.NoError(t, err)
		require.Len(t, stored, 5)
		assert.Equal(t, int64(1), stored[0].Seq)
		assert.Equal(t, audit.GenesisHash, stored[0].PrevHash)
		stored2, err := st.Append(ctx, es[5:])
		require.NoError(t, err)
		assert.Equal(t, int64(6), stored2[0].Seq)
		assert.Equal(t, stored[4].Hash, stored2[0].PrevHash)

		v, err = log.Verify(ctx)
		require.NoError(t, err)
		assert.True(t, v.Valid)
		assert.Equal(t, int64(12), v.Entries)
		assert.Equal(t, stored2[len(stored2)-1].Hash, v.HeadHash)

		// Read back exactly as written.
		got, total, err := st.List(ctx, audit.Filter{Limit: 100})
		require.NoError(t, err)
		assert.Equal(t, 12, total)
		assert.Equal(t, append(stored, stored2...), got)

		// Filters and pages.
		got, total, err = st.List(ctx, audit.Filter{PatientRef: "refa", Offset: 2, Limit: 3})
		require.NoError(t, err)
		assert.Equal(t, 6, total)
		require.Len(t, got, 3)
		assert.Equal(t, []int64{5, 7, 9}, []int64{got[0].Seq, got[1].Seq, got[2].Seq})
		_, total, err = st.List(ctx, audit.Filter{KeyID: "keyb"})
		require.NoError(t, err)
		assert.Equal(t, 4, total)
		got, total, err = st.List(ctx, audit.Filter{From: es[3].Time, To: es[6].Time, Limit: 10})
		require.NoError(t, err)
		assert.Equal(t, 3, total)
		assert.Equal(t, int64(4), got[0].Seq)
		_, total, err = st.List(ctx, audit.Filter{Organization: "other"})
		require.NoError(t, err)
		assert.Zero(t, total)
	})
}

func TestAuditRefusesUpdateAndDelete(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		ctx := t.Context()
		st, err := store.NewAuditStore(db)
		require.NoError(t, err)
		_, err = st.Append(ctx, []audit.Entry{auditEntry(0), auditEntry(1)})
		require.NoError(t, err)
		_, err = db.SQL().ExecContext(ctx, `UPDATE audit_log SET action = 'x' WHERE seq = 1`)
		require.ErrorContains(t, err, "append-only")
		_, err = db.SQL().ExecContext(ctx, `DELETE FROM audit_log WHERE seq = 2`)
		require.ErrorContains(t, err, "append-only")
		_, err = db.SQL().ExecContext(ctx, `DELETE FROM audit_log`)
		require.ErrorContains(t, err, "append-only")
		if db.Dialect() == store.Postgres {
			_, err = db.SQL().ExecContext(ctx, `TRUNCATE audit_log`)
			require.ErrorContains(t, err, "append-only")
		}
		var n int
		require.NoError(t, db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM audit_log WHERE action <> 'x'`).Scan(&n))
		assert.Equal(t, 2, n)
	})
}

// TestAuditTamperingIsReported changes stored rows behind the store's back
// (dropping the trigger first, as someone with the database's owner rights
// could) and checks that verification names the first broken entry.
func TestAuditTamperingIsReported(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		ctx := t.Context()
		st, err := store.NewAuditStore(db)
		require.NoError(t, err)
		log, err := audit.New(st)
		require.NoError(t, err)
		var es []audit.Entry
		for i := range 6 {
			es = append(es, auditEntry(i))
		}
		_, err = st.Append(ctx, es)
		require.NoError(t, err)
		dropTriggers := `DROP TRIGGER audit_log_no_update`
		if db.Dialect() == store.Postgres {
			dropTriggers = `DROP TRIGGER audit_log_no_update ON audit_log`
		}
		_, err = db.SQL().ExecContext(ctx, dropTriggers)
		require.NoError(t, err)
		if db.Dialect() == store.SQLite {
			_, err = db.SQL().ExecContext(ctx, `DROP TRIGGER audit_log_no_delete`)
			require.NoError(t, err)
		}

		// Rewriting who accessed entry 4.
		_, err = db.SQL().ExecContext(ctx, `UPDATE audit_log SET key_id = 'someone-else' WHERE seq = 4`)
		require.NoError(t, err)
		v, err := log.Verify(ctx)
		require.NoError(t, err)
		assert.False(t, v.Valid)
		require.NotNil(t, v.FirstBrokenSeq)
		assert.Equal(t, int64(4), *v.FirstBrokenSeq)
		assert.Equal(t, int64(6), v.Entries)

		// Removing entry 2 is found at 2.
		_, err = db.SQL().ExecContext(ctx, `DELETE FROM audit_log WHERE seq = 2`)
		require.NoError(t, err)
		v, err = log.Verify(ctx)
		require.NoError(t, err)
		require.NotNil(t, v.FirstBrokenSeq)
		assert.Equal(t, int64(2), *v.FirstBrokenSeq)
	})
}

// TestAuditConcurrentAppendsChain appends from many goroutines through two
// pools on the same database (two replicas): the chain must come out whole.
func TestAuditConcurrentAppendsChain(t *testing.T) {
	t.Parallel()
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			var stores []*store.AuditStore
			for range 2 {
				st, err := store.NewAuditStore(storetest.Open(t, b))
				require.NoError(t, err)
				stores = append(stores, st)
			}
			const workers, each = 8, 15
			var wg sync.WaitGroup
			errs := make([]error, workers)
			for w := range workers {
				wg.Go(func() {
					for i := range each {
						n := 1 + (i % 2) // single entries and pairs
						es := make([]audit.Entry, n)
						for j := range es {
							es[j] = auditEntry(w*100 + i)
						}
						if _, err := stores[w%2].Append(ctx, es); err != nil {
							errs[w] = err
							return
						}
					}
				})
			}
			wg.Wait()
			for _, err := range errs {
				require.NoError(t, err)
			}
			log, err := audit.New(stores[0])
			require.NoError(t, err)
			v, err := log.Verify(ctx)
			require.NoError(t, err)
			assert.True(t, v.Valid, "first broken: %v", v.FirstBrokenSeq)
			want := 0
			for i := range each {
				want += 1 + (i % 2)
			}
			assert.Equal(t, int64(workers*want), v.Entries)
		})
	}
}

// BenchmarkAuditAppend measures what an audited request waits for: one
// entry chained and committed (the append a single access makes), alone
// and with 8 appenders contending for the head.
func BenchmarkAuditAppend(b *testing.B) {
	for _, be := range storetest.Backends(b) {
		b.Run(be.Name, func(b *testing.B) {
			st, err := store.NewAuditStore(storetest.Open(b, be))
			require.NoError(b, err)
			log, err := audit.New(st)
			require.NoError(b, err)
			a := audit.Access{ActorType: audit.ActorKey, KeyID: "4Gq0bT2xZk", ClientIP: "127.0.0.1",
				Action: audit.ActionEligibilityVerifyV1, PatientID: "PT-000123", Status: 200, RequestID: "r"}
			b.Run("serial", func(b *testing.B) {
				for b.Loop() {
					if err := log.Record(b.Context(), a); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("8 concurrent", func(b *testing.B) {
				b.SetParallelism(8)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := log.Record(context.Background(), a); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		})
	}
}

// TestWebhookPseudonymDerivesFromTheAuditPatientRef: the audit log keeps
// one deployment-wide patient_ref per patient (it is admin-only), while the
// patient_id of a webhook payload is webhook.OwnerPseudonym(patient_ref,
// owner): different for each owner, so two tenants cannot link a patient,
// and still computable by an admin from an audit entry. The key both come
// from is kept sealed, and the audit store opens it with the same sealer.
func TestWebhookPseudonymDerivesFromTheAuditPatientRef(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		ctx := t.Context()
		kr := newKeyring(t)
		ws, err := store.NewWebhookStore(db, store.WithKeySealer(kr))
		require.NoError(t, err)
		reg, err := webhook.NewRegistry(ws, webhook.AllowHTTP(), webhook.AllowLoopback(), webhook.WithTenants())
		require.NoError(t, err)
		for _, o := range []string{"org:a", "org:b"} {
			_, err = reg.Create(ctx, o, webhook.CreateRequest{URL: "http://127.0.0.1:9/" + o, Events: []string{healthagents.EventEligibilityVerified}})
			require.NoError(t, err)
			require.NoError(t, reg.Emit(ctx,
				healthagents.Event{Type: healthagents.EventEligibilityVerified, PatientID: "PT-PSEUDO", Owner: o}))
		}
		rows, err := db.SQL().QueryContext(ctx, `SELECT e.owner, d.payload FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id`)
		require.NoError(t, err)
		got := map[string]string{}
		for rows.Next() {
			var owner, payload string
			require.NoError(t, rows.Scan(&owner, &payload))
			var p struct {
				Data struct {
					PatientID string `json:"patient_id"`
				} `json:"data"`
			}
			require.NoError(t, json.Unmarshal([]byte(payload), &p))
			got[owner] = p.Data.PatientID
		}
		require.NoError(t, rows.Err())
		require.NoError(t, rows.Close())
		require.Len(t, got, 2)
		assert.NotEqual(t, got["org:a"], got["org:b"], "one patient, a different pseudonym per owner")

		st, err := store.NewAuditStore(db, store.WithKeySealer(kr))
		require.NoError(t, err)
		log, err := audit.New(st)
		require.NoError(t, err)
		ref, err := log.PatientRef(ctx, "PT-PSEUDO")
		require.NoError(t, err)
		assert.Len(t, ref, 64)
		for o, pid := range got {
			assert.NotEqual(t, ref, pid, "the audit reference is not what tenants see")
			assert.Equal(t, webhook.OwnerPseudonym(ref, o), pid, "an admin derives %s's pseudonym from the entry", o)
		}
	})
}
