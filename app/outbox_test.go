package app_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/record"
)

// TestV1ValidationCommitsWithItsEvents drives the assembled service: a v1
// validation reaches the caller's receiver as prescription.validated and
// prescription.approved; once the outbox refuses writes (a trigger), a
// validation is answered 503 and is not stored either — the app saves it
// and its outbox rows in one transaction.
func TestV1ValidationCommitsWithItsEvents(t *testing.T) {
	a := shared(t)
	ctx := t.Context()
	ts := httptest.NewServer(a.Handler)
	defer ts.Close()
	bodies := make(chan []byte, 8)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- b
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rc.Close()

	key, _, err := a.Keys.Create(ctx, apikey.CreateParams{Env: apikey.Dev, Organization: "outbox-test"})
	require.NoError(t, err)
	c, err := client.New(ts.URL, client.WithAPIKey(key), client.WithMaxAttempts(1))
	require.NoError(t, err)
	_, err = c.CreateWebhook(ctx, rc.URL, []string{healthagents.EventPrescriptionValidated, healthagents.EventPrescriptionApproved})
	require.NoError(t, err)
	env := sealed(t, a, func(r *record.Record) { r.Medications = nil })
	require.NoError(t, c.PutPatient(ctx, env))
	req := healthagents.V1PrescriptionRequest{PatientID: env.PatientID, ProviderNPI: "1234567893",
		Medications: []healthagents.V1Medication{{NDCCode: "00071015523", Name: "atorvastatin", Quantity: 30, DaysSupply: 30}}}

	res, err := c.ValidatePrescriptionV1(ctx, req)
	require.NoError(t, err)
	require.Equal(t, healthagents.StatusApproved, res.ValidationStatus)
	seen := map[string]string{}
	for len(seen) < 2 {
		select {
		case b := <-bodies:
			var p struct {
				Event string `json:"event"`
				Data  struct {
					PrescriptionID string `json:"prescription_id"`
				} `json:"data"`
			}
			require.NoError(t, json.Unmarshal(b, &p))
			seen[p.Event] = p.Data.PrescriptionID
		case <-time.After(30 * time.Second):
			t.Fatalf("events received: %v", seen)
		}
	}
	assert.Equal(t, map[string]string{
		healthagents.EventPrescriptionValidated: res.PrescriptionID,
		healthagents.EventPrescriptionApproved:  res.PrescriptionID,
	}, seen)

	count := func() int {
		var n int
		require.NoError(t, a.DB.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM v1_prescriptions`).Scan(&n))
		return n
	}
	before := count()
	_, err = a.DB.SQL().ExecContext(ctx, `CREATE TRIGGER refuse_outbox BEFORE INSERT ON webhook_deliveries
		BEGIN SELECT RAISE(ABORT, 'outbox refused'); END`)
	require.NoError(t, err)
	defer func() {
		_, err := a.DB.SQL().ExecContext(ctx, `DROP TRIGGER refuse_outbox`)
		assert.NoError(t, err)
	}()
	_, err = c.ValidatePrescriptionV1(ctx, req)
	var ce *client.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, http.StatusServiceUnavailable, ce.StatusCode)
	assert.Equal(t, before, count(), "no validation stored without its events")
}
