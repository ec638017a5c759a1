package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/attest"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/fhir"
	"github.com/healthagents/healthagents/fhir/fhirtest"
	"github.com/healthagents/healthagents/server"
	"github.com/healthagents/healthagents/store/storetest"
)

// fhirClinic is a v1 server on its own database, with a key of
// organization org and an SDK client of the same organization.
func fhirClinic(t *testing.T, org string) (*v1Env, string, *client.Client) {
	t.Helper()
	db := storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)})
	e := newV1Env(t, db)
	key, _, err := e.keys.Create(t.Context(), apikey.CreateParams{Env: apikey.Dev, Organization: org})
	require.NoError(t, err)
	return e, key, e.client(t, apikey.CreateParams{Organization: org})
}

// fhirPost posts body with Accept: accept and returns the status, the
// Content-Type and the body.
func fhirPost(t *testing.T, url, path, key, accept string, body any) (int, string, []byte) {
	t.Helper()
	return fhirDo(t, "POST", url, path, key, accept, body)
}

// fhirDo is fhirPost with another method.
func fhirDo(t *testing.T, method, url, path, key, accept string, body any) (int, string, []byte) {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(t.Context(), method, url+path, bytes.NewReader(b))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header.Get("Content-Type"), raw
}

// TestV1FHIRRoundTrip is issue 20's "done when": a FHIR R4 Bundle built
// from published R4 examples is sealed and registered, a decision is
// asked over HTTP with Accept: application/fhir+json, and the answer is a
// CoverageEligibilityResponse carrying the proof's mined transaction that
// validates against the official R4 definitions; the prescription
// endpoint answers a Bundle of DetectedIssue.
func TestV1FHIRRoundTrip(t *testing.T) {
	t.Parallel()
	e, key, c := fhirClinic(t, "clinic-fhir")
	ctx := t.Context()

	// Published examples, plus one constructed MedicationStatement
	// (warfarin, RxNorm 11289) so the prescription has a finding.
	// medicationstatementexample1 is Tylenol PM (acetaminophen and
	// diphenhydramine).
	cov := fhirtest.Resource("coverage-example-2")
	cov["period"] = map[string]any{"start": "2026-01-01", "end": "2099-12-31"}
	warfarin := map[string]any{"resourceType": "MedicationStatement", "status": "active", "subject": map[string]any{"reference": "Patient/example"},
		"medicationCodeableConcept": map[string]any{"coding": []any{map[string]any{"system": fhir.SystemRxNorm, "code": "11289", "display": "warfarin"}}}}
	bundle := fhirtest.Bundle(fhirtest.Example("patient-example"), cov, fhirtest.Example("observation-example-bmi"),
		fhirtest.Example("allergyintolerance-example"), fhirtest.Example("medicationstatementexample1"), warfarin)
	env, err := cipher.Seal("example", bundle, e.a.Keyring)
	require.NoError(t, err)
	require.NoError(t, c.PutPatient(ctx, &env))

	req := healthagents.V1EligibilityRequest{PatientID: "example", MemberID: "AB9876", ProcedureCode: "PROC001", ProviderNPI: v1Provider}
	status, ctype, raw := fhirPost(t, e.url, "/api/v1/eligibility/verify", key, "application/fhir+json", req)
	require.Equal(t, 200, status, string(raw))
	assert.Equal(t, "application/fhir+json; fhirVersion=4.0", ctype)
	var cer struct {
		ResourceType string `json:"resourceType"`
		Outcome      string `json:"outcome"`
		Disposition  string `json:"disposition"`
		Extension    []struct {
			URL       string `json:"url"`
			Extension []struct {
				URL         string `json:"url"`
				ValueString string `json:"valueString"`
			} `json:"extension"`
		} `json:"extension"`
		Insurance []struct {
			Item []struct {
				AuthorizationRequired *bool `json:"authorizationRequired"`
				Excluded              *bool `json:"excluded"`
				Benefit               []any `json:"benefit"`
			} `json:"item"`
		} `json:"insurance"`
	}
	require.NoError(t, json.Unmarshal(raw, &cer))
	assert.Equal(t, "CoverageEligibilityResponse", cer.ResourceType)
	assert.Equal(t, "complete", cer.Outcome)
	assert.Equal(t, "Eligible: the plan covers 80% of PROC001; prior authorization is required", cer.Disposition)
	require.Len(t, cer.Insurance, 1)
	require.Len(t, cer.Insurance[0].Item, 1)
	item := cer.Insurance[0].Item[0]
	require.NotNil(t, item.AuthorizationRequired)
	assert.True(t, *item.AuthorizationRequired)
	assert.False(t, *item.Excluded)
	assert.Len(t, item.Benefit, 3)
	// The proof: the decision-proof extension exactly when the JSON answer
	// has a verification_proof, with the same transaction, verified on chain.
	var jsonAnswer healthagents.V1EligibilityResult
	status, _, first := fhirPost(t, e.url, "/api/v1/eligibility/verify", key, "", req)
	require.Equal(t, 200, status, string(first))
	require.NoError(t, json.Unmarshal(first, &jsonAnswer))
	if jsonAnswer.VerificationProof == nil {
		assert.Empty(t, cer.Extension, "no proof, no decision-proof extension")
		t.Log("the service answered without a verified proof: the proof extension is not checked")
	} else {
		require.Len(t, cer.Extension, 1, string(raw))
		assert.Equal(t, fhir.ExtDecisionProof, cer.Extension[0].URL)
		tx, statement, issuer := "", "", ""
		for _, x := range cer.Extension[0].Extension {
			switch x.URL {
			case "transaction":
				tx = x.ValueString
			case "statement":
				statement = x.ValueString
			case "issuer":
				issuer = x.ValueString
			}
		}
		require.NotEmpty(t, tx, "the proof's transaction")
		st, err := e.a.Ledger.Statement(ctx, common.HexToHash(tx))
		require.NoError(t, err, "the transaction in the extension verified the proof on chain")
		assert.Equal(t, attest.KindEligibility, st.Kind)
		if jsonAnswer.Statement != nil {
			var s healthagents.Statement
			require.NoError(t, json.Unmarshal([]byte(statement), &s), "the statement extension holds the statement JSON")
			assert.Equal(t, jsonAnswer.Issuer, issuer)
		}
	}

	// The SDK asks for the same.
	viaSDK, err := c.VerifyEligibilityV1FHIR(ctx, req)
	require.NoError(t, err)
	assert.Contains(t, string(viaSDK), `"resourceType":"CoverageEligibilityResponse"`)

	// Without the Accept header: the JSON answer, as before.
	status, ctype, plain := fhirPost(t, e.url, "/api/v1/eligibility/verify", key, "", req)
	require.Equal(t, 200, status, string(plain))
	assert.Equal(t, "application/json", ctype)
	assert.Contains(t, string(plain), `"coverage_percentage":80`)
	// A refused FHIR weight (q=0) is not asked for; an error to a FHIR
	// client is an OperationOutcome (TestFHIRErrorsAreOperationOutcomes).
	_, ctype, _ = fhirPost(t, e.url, "/api/v1/eligibility/verify", key, "application/fhir+json;q=0, application/json", req)
	assert.Equal(t, "application/json", ctype)
	bad := req
	bad.MemberID = "X1"
	status, ctype, oo := fhirPost(t, e.url, "/api/v1/eligibility/verify", key, "application/fhir+json", bad)
	assert.Equal(t, 422, status)
	assert.Equal(t, "application/fhir+json; fhirVersion=4.0", ctype)
	assert.Contains(t, string(oo), `"resourceType":"OperationOutcome"`)
	assert.Contains(t, string(oo), `"code":"processing"`)

	// The prescription: ibuprofen against the Bundle's warfarin.
	rx := healthagents.V1PrescriptionRequest{PatientID: "example", ProviderNPI: v1Provider, Medications: []healthagents.V1Medication{v1Med("12345-6789-0", "ibuprofen")}}
	status, ctype, issues := fhirPost(t, e.url, "/api/v1/prescriptions/validate", key, "application/fhir+json", rx)
	require.Equal(t, 200, status, string(issues))
	assert.Equal(t, "application/fhir+json; fhirVersion=4.0", ctype)
	var b struct {
		ResourceType string                 `json:"resourceType"`
		Identifier   struct{ Value string } `json:"identifier"`
		Entry        []struct {
			Resource struct {
				ResourceType string                     `json:"resourceType"`
				Severity     string                     `json:"severity"`
				Implicated   []struct{ Display string } `json:"implicated"`
			} `json:"resource"`
		} `json:"entry"`
	}
	require.NoError(t, json.Unmarshal(issues, &b))
	assert.Equal(t, "Bundle", b.ResourceType)
	assert.True(t, strings.HasPrefix(b.Identifier.Value, "rx_"), b.Identifier.Value)
	// Two issues: the published Tylenol PM holds diphenhydramine, which
	// the drug catalogue does not list, so it is an unidentified
	// medication (issue 25: never skipped); then the interaction.
	require.Len(t, b.Entry, 2)
	assert.Equal(t, "DetectedIssue", b.Entry[0].Resource.ResourceType)
	assert.Equal(t, "moderate", b.Entry[0].Resource.Severity)
	require.Len(t, b.Entry[0].Resource.Implicated, 1)
	assert.Equal(t, "Tylenol PM", b.Entry[0].Resource.Implicated[0].Display)
	assert.Equal(t, "high", b.Entry[1].Resource.Severity)
	require.Len(t, b.Entry[1].Resource.Implicated, 2)
	assert.Equal(t, "warfarin", b.Entry[1].Resource.Implicated[1].Display)

	viaSDK, err = c.ValidatePrescriptionV1FHIR(ctx, rx)
	require.NoError(t, err)
	assert.Contains(t, string(viaSDK), `"resourceType":"DetectedIssue"`)

	// The stored validation reads back as the same findings.
	getReq, err := http.NewRequestWithContext(ctx, "GET", e.url+"/api/v1/prescriptions/"+b.Identifier.Value, nil)
	require.NoError(t, err)
	getReq.Header.Set("Authorization", "Bearer "+key)
	getReq.Header.Set("Accept", "application/fhir+json")
	resp, err := http.DefaultClient.Do(getReq)
	require.NoError(t, err)
	stored, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode, string(stored))
	assert.Contains(t, string(stored), `"resourceType":"DetectedIssue"`)

	// Last, as it skips without node: both answers against the R4 definitions.
	report, valid := fhirtest.Validate(t, raw, issues, stored)
	require.True(t, valid, report)
}

// TestFHIRErrorsAreOperationOutcomes: a client that asks for FHIR gets its
// errors as an R4 OperationOutcome with the status, the issue code FHIR's
// HTTP table gives it and the JSON answer's detail as diagnostics — from a
// handler (400), the auth guard (401) and the router (404, 405) alike;
// without the Accept header the JSON error body is unchanged.
func TestFHIRErrorsAreOperationOutcomes(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)})
	e := newV1Env(t, db)
	key, _, err := e.keys.Create(t.Context(), apikey.CreateParams{Env: apikey.Dev, Organization: "clinic-oo"})
	require.NoError(t, err)

	do := func(method, path, auth, accept, body string) (int, http.Header, []byte) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, e.url+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, resp.Header, raw
	}
	type outcome struct {
		ResourceType string `json:"resourceType"`
		Issue        []struct {
			Severity    string `json:"severity"`
			Code        string `json:"code"`
			Diagnostics string `json:"diagnostics"`
		} `json:"issue"`
	}
	var seen [][]byte
	for _, tc := range []struct {
		name, method, path, auth, body string
		status                         int
		code                           string
	}{
		{"wrong type", "POST", "/api/v1/eligibility/verify", key, `{"patient_id": 5}`, 400, "invalid"},
		{"malformed JSON", "POST", "/api/v1/prescriptions/validate", key, `{`, 400, "invalid"},
		{"no key", "POST", "/api/v1/eligibility/verify", "", `{}`, 401, "login"},
		{"unknown prescription", "GET", "/api/v1/prescriptions/RX-nothing-here", key, ``, 404, "not-found"},
		{"no such route", "GET", "/api/v1/nothing", key, ``, 404, "not-found"},
		{"wrong method", "DELETE", "/api/v1/eligibility/verify", key, ``, 405, "not-supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jsonStatus, jsonHeader, jsonRaw := do(tc.method, tc.path, tc.auth, "", tc.body)
			require.Equal(t, tc.status, jsonStatus, string(jsonRaw))
			var plain server.ErrorBody
			require.NoError(t, json.Unmarshal(jsonRaw, &plain), string(jsonRaw))
			require.NotEmpty(t, plain.Detail)

			status, header, raw := do(tc.method, tc.path, tc.auth, "application/fhir+json", tc.body)
			assert.Equal(t, tc.status, status)
			assert.Equal(t, "application/fhir+json; fhirVersion=4.0", header.Get("Content-Type"))
			for _, h := range []string{"Allow", "WWW-Authenticate", "Retry-After"} {
				assert.Equal(t, jsonHeader.Get(h), header.Get(h), h)
			}
			var oo outcome
			require.NoError(t, json.Unmarshal(raw, &oo), string(raw))
			assert.Equal(t, "OperationOutcome", oo.ResourceType)
			require.Len(t, oo.Issue, 1)
			assert.Equal(t, "error", oo.Issue[0].Severity)
			assert.Equal(t, tc.code, oo.Issue[0].Code)
			assert.Equal(t, plain.Detail, oo.Issue[0].Diagnostics)
			seen = append(seen, raw)
		})
	}
	t.Run("valid R4", func(t *testing.T) {
		report, valid := fhirtest.Validate(t, seen...)
		assert.True(t, valid, report)
	})
}
