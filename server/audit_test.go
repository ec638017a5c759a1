package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/audit"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/server"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

// auditEnv is the whole audited API over one database: real agents (without
// proofs, which the audit does not depend on), the SQL stores, API keys and
// the federated service.
type auditEnv struct {
	url  string
	db   *store.DB
	kr   *cipher.Keyring
	keys *apikey.Service
	log  *audit.Log
}

func newAuditEnv(t *testing.T, db *store.DB) *auditEnv {
	t.Helper()
	ctx := context.Background()
	k, err := cipher.GenerateKey()
	require.NoError(t, err)
	kr, err := cipher.ParseKeyring(k)
	require.NoError(t, err)
	ks, err := store.NewKeyStore(db)
	require.NoError(t, err)
	keys, err := apikey.New(ks)
	require.NoError(t, err)
	t.Cleanup(func() { keys.Close(context.Background()) })
	svc, err := healthagents.New(kr)
	require.NoError(t, err)
	ps, err := store.NewPatientStore(db)
	require.NoError(t, err)
	rs, err := store.NewPrescriptionStore(db)
	require.NoError(t, err)
	v1, err := healthagents.NewV1(svc, ps, rs)
	require.NoError(t, err)
	as, err := store.NewAuditStore(db)
	require.NoError(t, err)
	log, err := audit.New(as, audit.WithPrescriptionRef(func(ctx context.Context, id string) (string, error) {
		p, err := rs.Prescription(ctx, id)
		return p.PatientID, err
	}))
	require.NoError(t, err)
	fed, err := app.OpenFederated(ctx, db, testFedConfig(), nil)
	require.NoError(t, err)
	t.Cleanup(func() { fed.Close() })
	h, err := server.New(server.Deps{Service: svc, Keys: keys, V1: v1, Audit: log, FederatedAPI: fed.API, Federated: fed.API})
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return &auditEnv{url: ts.URL, db: db, kr: kr, keys: keys, log: log}
}

// client returns a client with a new key; an empty raw key gives a public
// client.
func (e *auditEnv) client(t *testing.T, p *apikey.CreateParams) (c *client.Client, id, raw string) {
	t.Helper()
	opts := []client.Option{client.WithMaxAttempts(1)}
	if p != nil {
		p.Env = apikey.Dev
		var k *apikey.Key
		var err error
		raw, k, err = e.keys.Create(t.Context(), *p)
		require.NoError(t, err)
		opts = append(opts, client.WithAPIKey(raw))
		id = k.ID
	}
	c, err := client.New(e.url, opts...)
	require.NoError(t, err)
	return c, id, raw
}

// rawStatus sends a request with an optional key and returns the status.
func rawStatus(t *testing.T, method, url, key, body string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

func (e *auditEnv) seal(t *testing.T, r *record.Record) *healthagents.PatientData {
	t.Helper()
	b, err := r.Marshal()
	require.NoError(t, err)
	env, err := cipher.Seal(r.PatientID, b, e.kr)
	require.NoError(t, err)
	return &env
}

func auditRecord(id string) *record.Record {
	return &record.Record{
		Schema: record.Schema, PatientID: id, BirthDate: "1968-04-02",
		Coverage: &record.Coverage{
			PayerID: "60054", PlanID: "PPO-GOLD", MemberID: "W123456789", Status: "active",
			Start: "2026-01-01", End: "2099-12-31", Deductible: 1500, DeductibleMet: 200, Copay: 25,
		},
		Conditions: []string{"E11.9"}, Medications: []string{"6809"}, Allergies: []string{"sulfa"},
		Observations: map[string]float64{"glucose": 148, "bmi": 33.6}, Diagnosis: "positive",
	}
}

type wantEntry struct {
	actor, keyID, action, patient, outcome string
	status, records                        int
}

func TestAuditRecordsEveryPatientAccess(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		e := newAuditEnv(t, db)
		ctx := t.Context()
		user, userID, _ := e.client(t, &apikey.CreateParams{Organization: "hosp-a"})
		anon, _, _ := e.client(t, nil)
		admin, _, adminKey := e.client(t, &apikey.CreateParams{Scopes: []apikey.Scope{apikey.ScopeKeysAdmin}})
		orgAdmin, _, _ := e.client(t, &apikey.CreateParams{Scopes: []apikey.Scope{apikey.ScopeKeysAdmin}, Organization: "hosp-b"})

		const p1, p2 = "PT-AUDIT-1", "PT-AUDIT-2"
		med := healthagents.V1Medication{NDCCode: "0071-0155-23", Name: "atorvastatin", Strength: "10 mg", Quantity: 30, DaysSupply: 30, Refills: 1}
		rx := func(pid string) healthagents.V1PrescriptionRequest {
			return healthagents.V1PrescriptionRequest{PatientID: pid, ProviderNPI: v1Provider, Medications: []healthagents.V1Medication{med}}
		}

		require.NoError(t, user.PutPatient(ctx, e.seal(t, auditRecord(p1))))
		_, err := user.VerifyEligibilityV1(ctx, healthagents.V1EligibilityRequest{PatientID: p1, MemberID: "W123456789", ProcedureCode: "PROC001", ProviderNPI: v1Provider})
		require.NoError(t, err)
		res, err := user.ValidatePrescriptionV1(ctx, rx(p1))
		require.NoError(t, err)
		_, err = user.Prescription(ctx, res.PrescriptionID)
		require.NoError(t, err)
		items, err := user.BatchValidatePrescriptions(ctx, []healthagents.V1PrescriptionRequest{rx(p1), rx("PT-NONE")})
		require.NoError(t, err)
		require.NoError(t, items[0].Err)
		require.Error(t, items[1].Err)
		require.NoError(t, user.DeletePatient(ctx, p1))
		require.Error(t, user.DeletePatient(ctx, p1), "a second delete is a 404")
		_, err = anon.VerifyEligibility(ctx, e.seal(t, auditRecord(p2)), "PROC001")
		require.NoError(t, err)
		_, err = anon.ValidatePrescription(ctx, e.seal(t, auditRecord(p2)), "11289")
		require.NoError(t, err)
		fedRecs := []*healthagents.PatientData{e.seal(t, auditRecord("PT-F1")), e.seal(t, auditRecord("PT-F2")), e.seal(t, auditRecord("PT-F3"))}
		_, err = anon.SubmitFederatedUpdate(ctx, fedRecs, 0)
		require.NoError(t, err)
		// Refused before naming a patient: no access, no entry.
		assert.Equal(t, 400, rawStatus(t, "POST", e.url+"/verify-eligibility", "", `{"patient_data": 1}`))
		_, err = user.VerifyEligibilityV1(ctx, healthagents.V1EligibilityRequest{})
		require.Error(t, err)

		want := []wantEntry{
			{audit.ActorKey, userID, audit.ActionPatientPut, p1, audit.OutcomeSuccess, 200, 0},
			{audit.ActorKey, userID, audit.ActionEligibilityVerifyV1, p1, audit.OutcomeSuccess, 200, 0},
			{audit.ActorKey, userID, audit.ActionPrescriptionV1, p1, audit.OutcomeSuccess, 200, 0},
			{audit.ActorKey, userID, audit.ActionPrescriptionRead, p1, audit.OutcomeSuccess, 200, 0},
			{audit.ActorKey, userID, audit.ActionPrescriptionV1, p1, audit.OutcomeSuccess, 200, 0},
			{audit.ActorKey, userID, audit.ActionPrescriptionV1, "PT-NONE", audit.OutcomeError, 404, 0},
			{audit.ActorKey, userID, audit.ActionPatientDelete, p1, audit.OutcomeSuccess, 200, 0},
			{audit.ActorKey, userID, audit.ActionPatientDelete, p1, audit.OutcomeError, 404, 0},
			{audit.ActorPublic, "", audit.ActionEligibilityVerify, p2, audit.OutcomeSuccess, 200, 0},
			{audit.ActorPublic, "", audit.ActionPrescriptionValidate, p2, audit.OutcomeSuccess, 200, 0},
			{audit.ActorPublic, "", audit.ActionFederatedSubmitUpdate, "", audit.OutcomeSuccess, 200, 3},
		}
		page, err := admin.ListAuditEntriesPage(ctx, client.AuditQuery{}, 0, 100)
		require.NoError(t, err)
		require.Equal(t, len(want), page.Total)
		require.Len(t, page.Items, len(want))
		for i, w := range want {
			got := page.Items[i]
			assert.Equal(t, int64(i+1), got.Seq)
			assert.Equal(t, w.actor, got.Actor, "entry %d", i+1)
			assert.Equal(t, w.keyID, got.KeyID, "entry %d", i+1)
			assert.Equal(t, w.action, got.Action, "entry %d", i+1)
			assert.Equal(t, w.outcome, got.Outcome, "entry %d", i+1)
			assert.Equal(t, w.status, got.Status, "entry %d", i+1)
			assert.Equal(t, w.records, got.Records, "entry %d", i+1)
			assert.Equal(t, "127.0.0.1", got.ClientIP, "entry %d", i+1)
			assert.NotEmpty(t, got.RequestID, "entry %d", i+1)
			assert.WithinDuration(t, time.Now(), got.Time, time.Hour)
			wantRef := ""
			if w.patient != "" {
				wantRef, err = e.log.PatientRef(ctx, w.patient)
				require.NoError(t, err)
			}
			assert.Equal(t, wantRef, got.PatientRef, "entry %d", i+1)
			if w.actor == audit.ActorKey {
				assert.Equal(t, "hosp-a", got.Organization)
			}
		}
		assert.Equal(t, "prescription:"+res.PrescriptionID, page.Items[3].Resource)

		// Nothing the callers sent in clear is stored: no patient id, no
		// codes, no record content.
		rows, err := db.SQL().QueryContext(ctx, `SELECT * FROM audit_log`)
		require.NoError(t, err)
		cols, err := rows.Columns()
		require.NoError(t, err)
		var dump strings.Builder
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			require.NoError(t, rows.Scan(ptrs...))
			fmt.Fprintln(&dump, vals...)
		}
		require.NoError(t, rows.Err())
		require.NoError(t, rows.Close())
		require.Contains(t, dump.String(), audit.ActionPatientPut, "the dump holds the rows")
		for _, plain := range []string{"PT-AUDIT", "PT-NONE", "PT-F", "W123456789", "PROC001", "atorvastatin", "E11.9", "sulfa", "1968-04-02", "PPO-GOLD", "glucose", "positive"} {
			assert.NotContains(t, dump.String(), plain)
		}
		// Numeric codes could occur inside a hash or a time by chance: no
		// stored value may be one.
		for _, tok := range strings.Fields(dump.String()) {
			assert.NotContains(t, []string{"11289", "6809", "00071015523", "0071-0155-23", "60054", "148", "33.6", v1Provider}, tok)
		}

		// Filters: a patient (hashed by the server), a key, a time range.
		page, err = admin.ListAuditEntriesPage(ctx, client.AuditQuery{PatientID: p1}, 0, 100)
		require.NoError(t, err)
		assert.Equal(t, 7, page.Total)
		page, err = admin.ListAuditEntriesPage(ctx, client.AuditQuery{KeyID: userID}, 0, 100)
		require.NoError(t, err)
		assert.Equal(t, 8, page.Total)
		page, err = admin.ListAuditEntriesPage(ctx, client.AuditQuery{To: time.Now().Add(-time.Hour)}, 0, 100)
		require.NoError(t, err)
		assert.Zero(t, page.Total)
		// Pages: default 10, then the rest.
		page, err = admin.ListAuditEntriesPage(ctx, client.AuditQuery{}, 10, 5)
		require.NoError(t, err)
		require.Len(t, page.Items, 1)
		assert.Equal(t, int64(11), page.Items[0].Seq)
		n := 0
		for _, err := range admin.ListAuditEntries(ctx, client.AuditQuery{}) {
			require.NoError(t, err)
			n++
		}
		assert.Equal(t, len(want), n)
		for q, status := range map[string]int{"": 200, "?limit=101": 400, "?limit=0": 400, "?offset=-1": 400, "?from=yesterday": 400, "?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z": 400, "?patient_id=" + strings.Repeat("x", 257): 400} {
			assert.Equal(t, status, rawStatus(t, "GET", e.url+"/api/v1/audit"+q, adminKey, ""), q)
		}
		page, err = admin.ListAuditEntriesPage(ctx, client.AuditQuery{}, 0, 10)
		require.NoError(t, err)
		assert.Len(t, page.Items, 10)

		// Who may read it.
		_, err = user.ListAuditEntriesPage(ctx, client.AuditQuery{}, 0, 10)
		requireStatus(t, err, 403)
		_, err = user.VerifyAuditLog(ctx)
		requireStatus(t, err, 403)
		_, err = anon.VerifyAuditLog(ctx)
		requireStatus(t, err, 401)
		page, err = orgAdmin.ListAuditEntriesPage(ctx, client.AuditQuery{}, 0, 100)
		require.NoError(t, err)
		assert.Zero(t, page.Total, "an organization's admin sees its organization's entries only")
		_, err = orgAdmin.VerifyAuditLog(ctx)
		requireStatus(t, err, 403)

		v, err := admin.VerifyAuditLog(ctx)
		require.NoError(t, err)
		assert.True(t, v.Valid)
		assert.Equal(t, int64(len(want)), v.Entries)
		assert.Nil(t, v.FirstBrokenSeq)
		last, err := admin.ListAuditEntriesPage(ctx, client.AuditQuery{}, len(want)-1, 1)
		require.NoError(t, err)
		assert.Equal(t, last.Items[0].Hash, v.HeadHash)

		// Tampering behind the service's back is found.
		drop := `DROP TRIGGER audit_log_no_update`
		if b.Name == "postgres" {
			drop += ` ON audit_log`
		}
		_, err = db.SQL().ExecContext(ctx, drop)
		require.NoError(t, err)
		_, err = db.SQL().ExecContext(ctx, `UPDATE audit_log SET outcome = 'success', status = 200 WHERE seq = 8`)
		require.NoError(t, err)
		v, err = admin.VerifyAuditLog(ctx)
		require.NoError(t, err)
		assert.False(t, v.Valid)
		require.NotNil(t, v.FirstBrokenSeq)
		assert.Equal(t, int64(8), *v.FirstBrokenSeq)
	})
}

// TestAuditFailsClosed: when the entry cannot be written the caller gets 503
// and not the result; requests that name no patient are unaffected.
func TestAuditFailsClosed(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		e := newAuditEnv(t, db)
		ctx := t.Context()
		user, _, _ := e.client(t, &apikey.CreateParams{})
		anon, _, _ := e.client(t, nil)
		require.NoError(t, user.PutPatient(ctx, e.seal(t, auditRecord("PT-FC-1"))))
		_, err := db.SQL().ExecContext(ctx, `DROP TABLE audit_log`)
		require.NoError(t, err)

		ce := requireStatus(t, user.PutPatient(ctx, e.seal(t, auditRecord("PT-FC-2"))), 503)
		assert.Equal(t, "Service temporarily unavailable", ce.Detail)
		_, err = anon.VerifyEligibility(ctx, e.seal(t, auditRecord("PT-FC-1")), "PROC001")
		ce = requireStatus(t, err, 503)
		assert.Equal(t, "Service temporarily unavailable", ce.Detail)
		assert.Equal(t, 400, rawStatus(t, "POST", e.url+"/verify-eligibility", "", `{"patient_data": 1}`))
	})
}
