package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/fhir"
	"github.com/healthagents/healthagents/fhir/fhirtest"
)

// fhirMedication is a current MedicationStatement for the example patient.
func fhirMedication(cc map[string]any) map[string]any {
	return map[string]any{"resourceType": "MedicationStatement", "status": "active", "subject": map[string]any{"reference": "Patient/example"}, "medicationCodeableConcept": cc}
}

// examplePatientBundle is the example patient with coverage in force and
// the given resources.
func examplePatientBundle(resources ...any) []byte {
	cov := fhirtest.Resource("coverage-example-2")
	cov["period"] = map[string]any{"start": "2026-01-01", "end": "2099-12-31"}
	return fhirtest.Bundle(append([]any{fhirtest.Example("patient-example"), cov}, resources...)...)
}

// TestFHIRInputRefused is issue 25's "FHIR input that cannot be read is
// refused, not skipped": a Bundle entry whose resourceType R4 does not
// define, a string with a control character or invalid UTF-8, and a
// medicationReference that resolves to nothing are each a 400 — after the
// envelope is opened — whose detail names the entry by index and
// resourceType and nothing of its content; a FHIR client gets it as an
// OperationOutcome, valid R4, whose expression is the entry's FHIRPath.
func TestFHIRInputRefused(t *testing.T) {
	t.Parallel()
	e, key, _ := fhirClinic(t, "clinic-fhir-in")

	warfarin := fhirMedication(map[string]any{"coding": []any{map[string]any{"system": fhir.SystemRxNorm, "code": "855332", "display": "warfarin sodium 5 MG Oral Tablet"}}})
	misspelt := fhirtest.Resource("coverage-example-2")
	misspelt["resourceType"] = "Coverages"
	dangling := map[string]any{"resourceType": "MedicationRequest", "status": "active", "intent": "order", "subject": map[string]any{"reference": "Patient/example"}, "medicationReference": map[string]any{"reference": "Medication/SECRET-med"}}
	control := fhirMedication(map[string]any{"text": "Coumadin\u0007SECRET 5 mg"})
	for _, tc := range []struct {
		name, detail, expression string
		bundle                   []byte
	}{
		{"unknown resourceType", "Bundle.entry[3].resource(Coverages): resourceType is not a FHIR R4 resource type",
			"Bundle.entry[3].resource.ofType(Coverages)", examplePatientBundle(warfarin, misspelt)},
		{"control character", "Bundle.entry[2].resource(MedicationStatement): a string holds a control character",
			"Bundle.entry[2].resource.ofType(MedicationStatement)", examplePatientBundle(control)},
		{"invalid UTF-8", "Bundle.entry[2].resource(MedicationStatement): a string is not valid UTF-8",
			"Bundle.entry[2].resource.ofType(MedicationStatement)",
			bytes.Replace(examplePatientBundle(warfarin), []byte("warfarin sodium"), []byte("warfarin\xffSECRET sodium"), 1)},
		{"medication reference that does not resolve", "Bundle.entry[2].resource(MedicationRequest).medicationReference: refers to a Medication the Bundle does not hold",
			"Bundle.entry[2].resource.ofType(MedicationRequest).medicationReference", examplePatientBundle(dangling)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env, err := cipher.Seal("example", tc.bundle, e.a.Keyring)
			require.NoError(t, err)
			put := func(accept string) (int, string, []byte) {
				return fhirDo(t, "PUT", e.url, "/api/v1/patients/example", key, accept, env)
			}
			status, _, raw := put("")
			require.Equal(t, http.StatusBadRequest, status, string(raw))
			var body struct{ Detail string }
			require.NoError(t, json.Unmarshal(raw, &body))
			assert.Contains(t, body.Detail, "Patient registration failed: Invalid patient record: FHIR R4 Bundle: "+tc.detail)

			status, ctype, oo := put("application/fhir+json")
			require.Equal(t, http.StatusBadRequest, status, string(oo))
			assert.Equal(t, "application/fhir+json; fhirVersion=4.0", ctype)
			var outcome struct {
				ResourceType string `json:"resourceType"`
				Issue        []struct {
					Severity, Code, Diagnostics string
					Expression                  []string
				} `json:"issue"`
			}
			require.NoError(t, json.Unmarshal(oo, &outcome))
			assert.Equal(t, "OperationOutcome", outcome.ResourceType)
			require.Len(t, outcome.Issue, 1)
			assert.Equal(t, "invalid", outcome.Issue[0].Code)
			assert.Equal(t, body.Detail, outcome.Issue[0].Diagnostics)
			assert.Equal(t, []string{tc.expression}, outcome.Issue[0].Expression)
			for _, clinical := range []string{"SECRET", "warfarin", "Coumadin", "AB9876"} {
				assert.NotContains(t, string(oo), clinical, "the outcome names the entry, never its content")
			}
			report, valid := fhirtest.Validate(t, oo)
			assert.True(t, valid, report)
		})
	}

	// The root family opens the envelope in the request: the same 400.
	env, err := cipher.Seal("example", examplePatientBundle(misspelt), e.a.Keyring)
	require.NoError(t, err)
	status, ctype, oo := fhirPost(t, e.url, "/validate-prescription", key, "application/fhir+json", healthagents.PrescriptionRequest{PatientData: &env, DrugCode: "5640"})
	require.Equal(t, http.StatusBadRequest, status, string(oo))
	assert.Equal(t, "application/fhir+json; fhirVersion=4.0", ctype)
	assert.Contains(t, string(oo), "Prescription validation failed: Invalid patient record: FHIR R4 Bundle: Bundle.entry[2].resource(Coverages)")
	report, valid := fhirtest.Validate(t, oo)
	assert.True(t, valid, report)
}

// TestFHIRWarfarinAsEHRsCodeIt is issue 25's "done when": warfarin in a
// FHIR Bundle coded as RxNorm 855332 with its display, and separately as
// the free text "Coumadin 5 mg tablet", gets the warfarin–NSAID finding for
// ibuprofen; a code we do not know with no readable display is an
// unidentified medication: requires_review with its warning (a
// DetectedIssue too), and the proven statement lists it.
func TestFHIRWarfarinAsEHRsCodeIt(t *testing.T) {
	t.Parallel()
	e, key, c := fhirClinic(t, "clinic-ehr")
	ctx := t.Context()
	register := func(meds ...any) {
		t.Helper()
		env, err := cipher.Seal("example", examplePatientBundle(meds...), e.a.Keyring)
		require.NoError(t, err)
		require.NoError(t, c.PutPatient(ctx, &env))
	}
	ibuprofen := healthagents.V1PrescriptionRequest{PatientID: "example", ProviderNPI: v1Provider, Medications: []healthagents.V1Medication{v1Med("12345-6789-0", "ibuprofen")}}

	for name, cc := range map[string]map[string]any{
		"RxNorm 855332 with its display": {"coding": []any{map[string]any{"system": fhir.SystemRxNorm, "code": "855332", "display": "warfarin sodium 5 MG Oral Tablet"}}},
		"free text":                      {"text": "Coumadin 5 mg tablet"},
	} {
		register(fhirMedication(cc))
		res, err := c.ValidatePrescriptionV1(ctx, ibuprofen)
		require.NoError(t, err, name)
		assert.Equal(t, healthagents.StatusRejected, res.ValidationStatus, name)
		assert.Equal(t, []string{healthagents.V1InteractionFound}, res.Codes, name)
		require.Len(t, res.Checks.DrugInteractions.Warnings, 1, name)
		assert.Equal(t, "warfarin", res.Checks.DrugInteractions.Warnings[0].With, name)
	}

	register(fhirMedication(map[string]any{"coding": []any{map[string]any{"system": fhir.SystemRxNorm, "code": "99999999"}}}))
	atorvastatin := healthagents.V1PrescriptionRequest{PatientID: "example", ProviderNPI: v1Provider, Medications: []healthagents.V1Medication{v1Med("0071-0155-23", "atorvastatin")}}
	res, err := c.ValidatePrescriptionV1(ctx, atorvastatin)
	require.NoError(t, err)
	assert.Equal(t, healthagents.StatusRequiresReview, res.ValidationStatus)
	assert.Equal(t, []string{healthagents.V1Unidentified}, res.Codes)
	require.Len(t, res.Checks.DrugInteractions.Warnings, 1)
	w := res.Checks.DrugInteractions.Warnings[0]
	assert.Equal(t, "unidentified", w.Type)
	assert.Equal(t, "99999999", w.Entry)
	require.NotNil(t, res.Statement, "a decision that needs review is proven")
	fields := res.Statement.Opening.Fields
	require.Equal(t, "unidentified", fields[len(fields)-2].Name)
	assert.Equal(t, `["medication: 99999999"]`, fields[len(fields)-2].Text)
	assert.Contains(t, fields[8].Text, "valid=false", "the drug is not valid in the statement")
	e.events.mu.Lock()
	events := slices.Clone(e.events.events)
	e.events.mu.Unlock()
	for _, ev := range events {
		b, err := json.Marshal(ev)
		require.NoError(t, err)
		assert.NotContains(t, string(b), "99999999", "the entry is in no event")
	}

	status, _, issues := fhirPost(t, e.url, "/api/v1/prescriptions/validate", key, "application/fhir+json", atorvastatin)
	require.Equal(t, http.StatusOK, status, string(issues))
	assert.Contains(t, string(issues), `"code":"UNIDENTIFIED"`)
	assert.Contains(t, string(issues), `"display":"99999999"`)
	report, valid := fhirtest.Validate(t, issues)
	assert.True(t, valid, report)
	assert.False(t, strings.Contains(string(issues), `"clear"`))
}
