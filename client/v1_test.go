package client_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/client"
)

// These tests pin the client's side of the v1 wire format against a stub;
// the round trips against the real server are server/v1_test.go.

func TestRegisterPrescriptionWebhook(t *testing.T) {
	t.Parallel()
	var got struct {
		URL    string   `json:"url"`
		Events []string `json:"events"`
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "POST", r.Method)
		assert.Equal(t, "/webhooks", r.URL.Path)
		assert.Equal(t, "Bearer sk_dev_x", r.Header.Get("Authorization"))
		b, _ := io.ReadAll(r.Body)
		assert.NoError(t, json.Unmarshal(b, &got))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id":"ep_1","url":"https://h.example/x","events":["prescription.approved"],"secret":"whsec_abc","created_at":"2026-11-21T00:00:00Z"}`))
	}))
	t.Cleanup(ts.Close)
	c, err := client.New(ts.URL, client.WithAPIKey("sk_dev_x"))
	require.NoError(t, err)
	hook, err := c.RegisterPrescriptionWebhook(t.Context(), "https://h.example/x")
	require.NoError(t, err)
	assert.Equal(t, "https://h.example/x", got.URL)
	assert.Equal(t, []string{"prescription.approved"}, got.Events)
	assert.Equal(t, "ep_1", hook.ID)
	assert.Equal(t, "whsec_abc", hook.Secret)
}

func TestBatchItemsCarryErrors(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "/api/v1/prescriptions/batch-validate", r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"results":[
			{"index":0,"status":200,"result":{"validation_status":"approved","prescription_id":"rx_1","codes":[]}},
			{"index":1,"status":404,"detail":"PATIENT_NOT_FOUND: no patient record is registered under this patient_id"},
			{"index":2,"status":503,"detail":"PHARMACY_ERROR: the pharmacy oracle could not be read"}],"succeeded":1,"failed":2}`))
	}))
	t.Cleanup(ts.Close)
	c, err := client.New(ts.URL)
	require.NoError(t, err)
	items, err := c.BatchValidatePrescriptions(t.Context(), make([]healthagents.V1PrescriptionRequest, 3))
	require.NoError(t, err)
	require.Len(t, items, 3)
	assert.Equal(t, "rx_1", items[0].Result.PrescriptionID)
	assert.True(t, client.IsNotFound(items[1].Err))
	assert.Equal(t, client.V1PatientNotFound, client.V1CodeOf(items[1].Err))
	assert.True(t, client.IsUnavailable(items[2].Err))
	assert.Equal(t, client.V1PharmacyError, client.V1CodeOf(items[2].Err))
	var he *healthagents.Error
	require.ErrorAs(t, items[2].Err, &he)
	assert.Equal(t, healthagents.CodeUnavailable, he.Code)
}

func TestPutPatientNilEnvelope(t *testing.T) {
	t.Parallel()
	c, err := client.New("http://127.0.0.1:1")
	require.NoError(t, err)
	err = c.PutPatient(t.Context(), nil)
	var he *healthagents.Error
	require.ErrorAs(t, err, &he)
	assert.Equal(t, healthagents.CodeInvalid, he.Code)
}
