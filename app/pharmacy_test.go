package app_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/record"
)

// TestPharmacyOracleWired: the service app.Open assembles on the embedded
// chain has a pharmacy oracle. An attestation POSTed over HTTP with a key
// of the prescription scope is mined into the oracle contract, and
// prescription validation then reads it back from the chain.
func TestPharmacyOracleWired(t *testing.T) {
	t.Parallel()
	a := shared(t)
	require.NotNil(t, a.Pharmacy, "the embedded chain deploys an oracle")
	ts := httptest.NewServer(a.Handler)
	defer ts.Close()
	ctx := t.Context()
	rx, _, err := a.Keys.Create(ctx, apikey.CreateParams{Env: apikey.Dev, Scopes: []apikey.Scope{apikey.ScopePrescription, apikey.ScopePatients}})
	require.NoError(t, err)
	pharm, _, err := a.Keys.Create(ctx, apikey.CreateParams{Env: apikey.Dev, Scopes: []apikey.Scope{apikey.ScopePharmacy}})
	require.NoError(t, err)
	elig, _, err := a.Keys.Create(ctx, apikey.CreateParams{Env: apikey.Dev, Scopes: []apikey.Scope{apikey.ScopeEligibility}})
	require.NoError(t, err)

	const pharmacyNPI, patient = "1245319599", "PT-PHARM01"
	env := sealed(t, a, func(r *record.Record) { r.PatientID = patient })
	status, body := call(t, "PUT", ts.URL+"/api/v1/patients/"+patient, rx, env)
	require.Equal(t, http.StatusOK, status, body)

	attestation := map[string]any{"pharmacy_npi": pharmacyNPI, "ndc_code": "0071-0155-23", "estimated_availability": "2026-12-03"}
	status, body = call(t, "POST", ts.URL+"/api/v1/pharmacy/attestations", elig, attestation)
	assert.Equal(t, http.StatusForbidden, status, "an eligibility key cannot write to the chain: %v", body)
	status, body = call(t, "POST", ts.URL+"/api/v1/pharmacy/attestations", rx, attestation)
	assert.Equal(t, http.StatusForbidden, status, "a prescriber's key cannot confirm availability itself: %v", body)
	status, body = call(t, "POST", ts.URL+"/api/v1/pharmacy/attestations", pharm, attestation)
	require.Equal(t, http.StatusCreated, status, body)
	assert.Equal(t, "00071015523", body["ndc_code"])
	assert.Equal(t, "2026-12-03", body["estimated_availability"])
	tx, _ := body["blockchain_tx"].(string)
	r, err := a.Ledger.Client().TransactionReceipt(ctx, common.HexToHash(tx))
	require.NoError(t, err, "the attestation's transaction is on the chain")
	assert.Equal(t, types.ReceiptStatusSuccessful, r.Status)
	require.Len(t, r.Logs, 1)
	assert.Equal(t, a.Pharmacy.Address(), r.Logs[0].Address, "written to the oracle contract")

	med := func(ndc, name string) map[string]any {
		return map[string]any{"ndc_code": ndc, "name": name, "strength": "10 mg", "quantity": 30, "days_supply": 30, "refills": 1}
	}
	validate := func(pharmacy string, meds ...map[string]any) map[string]any {
		t.Helper()
		req := map[string]any{"patient_id": patient, "provider_npi": "1234567893", "indication": "test", "medications": meds}
		if pharmacy != "" {
			req["pharmacy_npi"] = pharmacy
		}
		status, body := call(t, "POST", ts.URL+"/api/v1/prescriptions/validate", rx, req)
		require.Equal(t, http.StatusOK, status, body)
		checks, _ := body["checks"].(map[string]any)
		pc, _ := checks["pharmacy_confirmation"].(map[string]any)
		require.NotNil(t, pc, body)
		return pc
	}
	pc := validate(pharmacyNPI, med("00071-0155-23", "atorvastatin"))
	assert.Equal(t, "confirmed", pc["status"])
	assert.Equal(t, "2026-12-03", pc["estimated_availability"])
	assert.Equal(t, true, pc["cross_chain_verified"])

	pc = validate("1679576722", med("00071-0155-23", "atorvastatin"))
	assert.Equal(t, "unconfirmed", pc["status"], "another pharmacy attested nothing")
	assert.Nil(t, pc["estimated_availability"])
	assert.Equal(t, true, pc["cross_chain_verified"], "the honest answer was read from the chain")

	pc = validate("", med("00071-0155-23", "atorvastatin"))
	assert.Equal(t, "unconfirmed", pc["status"])
	assert.Equal(t, false, pc["cross_chain_verified"], "no pharmacy named: the chain was not asked")
}

// call sends a JSON request with a bearer key and decodes the JSON answer.
func call(t *testing.T, method, url, key string, body any) (int, map[string]any) {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(t.Context(), method, url, bytes.NewReader(b))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(raw, &out), string(raw))
	return resp.StatusCode, out
}
