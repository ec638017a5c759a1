package client_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/internal/testcache/zkkeys"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/server"
)

// realServer runs the whole service (app.Open) in an httptest server and
// returns an SDK client for it and the Fernet key it opens envelopes with.
func realServer(t *testing.T) (*client.Client, string) {
	t.Helper()
	key, err := cipher.GenerateKey()
	require.NoError(t, err)
	a, err := app.Open(t.Context(), app.Config{DataDir: zkkeys.DataDir(t), FernetKey: key}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(srv.Close)
	return newClient(t, srv.URL), key
}

// patient is a record with active coverage for the whole current year.
func patient() *record.Record {
	year := time.Now().Year()
	return &record.Record{
		Schema:    record.Schema,
		PatientID: "PT-000123",
		BirthDate: "1968-04-02",
		Coverage: &record.Coverage{
			PayerID: "60054", PlanID: "PPO-GOLD", MemberID: "W123456789", Status: "active",
			Start: fmt.Sprintf("%d-01-01", year), End: fmt.Sprintf("%d-12-31", year),
			Deductible: 1500, DeductibleMet: 1500, Copay: 25,
		},
		Conditions: []string{"E11.9"},
	}
}

func TestRoundTripRoot(t *testing.T) {
	t.Parallel()
	c, key := realServer(t)
	ctx := t.Context()
	env, err := client.SealRecord(patient(), key)
	require.NoError(t, err)

	h, err := c.Health(ctx)
	require.NoError(t, err)
	assert.Equal(t, &healthagents.Health{Status: "healthy", Version: healthagents.Version, Message: h.Message, Checked: h.Checked}, h)
	live, err := c.Livez(ctx)
	require.NoError(t, err)
	assert.Equal(t, "alive", live.Status)
	ready, err := c.Readyz(ctx)
	require.NoError(t, err)
	assert.Equal(t, "ready", ready.Status)
	for _, name := range h.Checked {
		assert.Equal(t, "ok", ready.Checks[name], name)
	}

	st, err := c.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, "active", st.Agents.Eligibility)
	assert.Regexp(t, "^0x[0-9a-fA-F]{40}$", st.Blockchain.Registry, "/status names the registry a third party pins")
	assert.NotEmpty(t, st.Blockchain.ChainID)

	doc, err := c.OpenAPI(ctx)
	require.NoError(t, err)
	want, err := server.OpenAPI()
	require.NoError(t, err)
	// The served document names the server as it was reached; the rest is
	// the document server.OpenAPI builds.
	var served, built map[string]any
	require.NoError(t, json.Unmarshal(doc, &served))
	require.NoError(t, json.Unmarshal(want, &built))
	servers, _ := served["servers"].([]any)
	require.Len(t, servers, 1)
	assert.Regexp(t, `^http://127\.0\.0\.1:[0-9]+$`, servers[0].(map[string]any)["url"])
	delete(served, "servers")
	delete(built, "servers")
	assert.Equal(t, built, served)

	res, err := c.VerifyEligibility(ctx, env, "PROC001")
	require.NoError(t, err)
	assert.True(t, res.Eligible)
	assert.InDelta(t, 80, res.CoveragePct, 0)
	assert.True(t, res.RequiresAuthorization)
	assert.True(t, res.PrivacyPreserved)
	assert.Nil(t, res.Reason)

	rx, err := c.ValidatePrescription(ctx, env, "6809")
	require.NoError(t, err)
	assert.True(t, rx.Valid)
	assert.True(t, rx.InteractionsChecked)

	for _, tc := range []struct {
		name   string
		call   func() error
		status int
		detail string
	}{
		{"fail/unknown procedure", func() error { _, err := c.VerifyEligibility(ctx, env, "PROC999"); return err },
			404, "Procedure code PROC999 not found"},
		{"fail/unknown drug", func() error { _, err := c.ValidatePrescription(ctx, env, "NOPE-1"); return err },
			404, "Drug code NOPE-1 not found"},
		{"fail/hash mismatch", func() error {
			bad := *env
			bad.DataHash = strings.Repeat("0", 64)
			_, err := c.VerifyEligibility(ctx, &bad, "PROC001")
			return err
		}, 400, "Eligibility check failed: Data hash mismatch"},
		{"fail/bad CID", func() error {
			bad := *env
			bad.IPFSCID = "not-a-cid"
			_, err := c.VerifyEligibility(ctx, &bad, "PROC001")
			return err
		}, 400, "Invalid the service CID format"},
		{"fail/missing envelope", func() error { _, err := c.VerifyEligibility(ctx, nil, "PROC001"); return err },
			400, "Invalid request format: missing field 'patient_data'"},
		{"fail/interaction", func() error {
			r := patient()
			r.Medications = []string{"5640"} // ibuprofen
			e, err := client.SealRecord(r, key)
			require.NoError(t, err)
			_, err = c.ValidatePrescription(ctx, e, "11289") // warfarin
			return err
		}, 422, "Prescription validation failed: Drug interaction detected with ibuprofen"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.call()
			var ce *client.Error
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.status, ce.StatusCode)
			assert.Equal(t, tc.detail, ce.Detail)
			assert.NotEmpty(t, ce.RequestID)
		})
	}
}

// TestRoundTripSameErrorsInProcess checks that a program gets the same code
// and detail from the in-process service as from the SDK.
func TestRoundTripSameErrorsInProcess(t *testing.T) {
	t.Parallel()
	key, err := cipher.GenerateKey()
	require.NoError(t, err)
	kr, err := cipher.ParseKeyring(key)
	require.NoError(t, err)
	svc, err := healthagents.New(kr)
	require.NoError(t, err)
	h, err := server.New(server.Deps{Service: svc}, server.WithMaxBodyBytes(4<<10))
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	remote := newClient(t, srv.URL)

	env, err := client.SealRecord(patient(), key)
	require.NoError(t, err)
	for _, a := range []client.Agents{svc, remote} {
		_, err := a.VerifyEligibility(t.Context(), env, "PROC999")
		assert.True(t, client.IsNotFound(err))
		assert.Equal(t, healthagents.CodeNotFound, healthagents.ErrorCode(err))
		assert.Equal(t, "Procedure code PROC999 not found", healthagents.ErrorDetail(err))
	}

	// 413 comes only from the HTTP layer.
	big := patient()
	big.Conditions = make([]string, 400)
	for i := range big.Conditions {
		big.Conditions[i] = fmt.Sprintf("Z%02d.%d", i%100, i)
	}
	bigEnv, err := client.SealRecord(big, key)
	require.NoError(t, err)
	_, err = remote.VerifyEligibility(t.Context(), bigEnv, "PROC001")
	assert.True(t, client.IsTooLarge(err), "%v", err)
}
