package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/fhir"
	"github.com/healthagents/healthagents/fhir/fhirtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSealFHIR seals a FHIR R4 Bundle built from published R4 examples;
// the envelope opens to the Bundle's bytes and names its Patient.
func TestSealFHIR(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	settings := env(map[string]string{"DATA_DIR": dir})
	bundle := fhirtest.PatientBundle("2026-01-01", "2026-12-31")
	path := filepath.Join(dir, "bundle.json")
	require.NoError(t, os.WriteFile(path, bundle, 0o600))

	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"seal", "--fhir", path}, settings, nil, &out, io.Discard))
	var e cipher.Envelope
	require.NoError(t, json.Unmarshal(out.Bytes(), &e))
	assert.Equal(t, "example", e.PatientID)
	assert.NotContains(t, out.String(), "AB9876")

	// Without --fhir the Bundle is recognised by its resourceType, from stdin too.
	out.Reset()
	require.NoError(t, run(t.Context(), []string{"seal", "-"}, settings, bytes.NewReader(bundle), &out, io.Discard))
	require.NoError(t, json.Unmarshal(out.Bytes(), &e))
	assert.Equal(t, "example", e.PatientID)

	// --fhir refuses our record JSON, and a Bundle missing what the record needs.
	err := run(t.Context(), []string{"seal", "--fhir", "../../testdata/record.json"}, settings, nil, io.Discard, io.Discard)
	require.ErrorIs(t, err, fhir.ErrInvalid)
	cov := fhirtest.Resource("coverage-example-2")
	delete(cov, "period")
	require.NoError(t, os.WriteFile(path, fhirtest.Bundle(fhirtest.Example("patient-example"), cov), 0o600))
	err = run(t.Context(), []string{"seal", "--fhir", path}, settings, nil, io.Discard, io.Discard)
	require.EqualError(t, err, "Bundle.entry[1].resource(Coverage).period: missing (the coverage's start and end dates)")
}

// TestSealFHIRNotes: `seal --fhir` prints the notes `seal` prints for our
// record format — no coverage, medications and allergies the drug
// catalogue cannot identify — naming the Bundle entry, never its content;
// warfarin coded as EHRs code it is identified and gets no note.
func TestSealFHIRNotes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	settings := env(map[string]string{"DATA_DIR": dir})
	med := func(cc map[string]any) map[string]any {
		return map[string]any{"resourceType": "MedicationStatement", "status": "active", "subject": map[string]any{"reference": "Patient/example"}, "medicationCodeableConcept": cc}
	}
	warfarin := med(map[string]any{"coding": []any{map[string]any{"system": fhir.SystemRxNorm, "code": "855332", "display": "warfarin sodium 5 MG Oral Tablet"}}})
	unknown := med(map[string]any{"coding": []any{map[string]any{"system": fhir.SystemRxNorm, "code": "99999999"}}})
	allergy := map[string]any{"resourceType": "AllergyIntolerance", "patient": map[string]any{"reference": "Patient/example"}, "code": map[string]any{"text": "Zzyzx-SECRET"}}
	path := filepath.Join(dir, "bundle.json")
	require.NoError(t, os.WriteFile(path, fhirtest.Bundle(fhirtest.Example("patient-example"), warfarin, unknown, allergy), 0o600))

	var out, notes bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"seal", "--fhir", path}, settings, nil, &out, &notes))
	got := notes.String()
	assert.Contains(t, got, "note: no Coverage resource")
	assert.Contains(t, got, "note: Bundle.entry[2].resource(MedicationStatement) is not in the drug catalogue")
	assert.Contains(t, got, "note: Bundle.entry[3].resource(AllergyIntolerance) names no allergen the rules know")
	assert.NotContains(t, got, "Bundle.entry[1]", "warfarin coded as RxNorm 855332 is identified")
	assert.Equal(t, 3, strings.Count(got, "note: "), got)
	for _, value := range []string{"99999999", "zzyzx", "SECRET", "warfarin"} {
		assert.NotContains(t, strings.ToLower(got), strings.ToLower(value), "notes never repeat a value")
	}
	var e cipher.Envelope
	require.NoError(t, json.Unmarshal(out.Bytes(), &e), "sealed all the same")

	// The same notes for our record format.
	rec := filepath.Join(dir, "record.json")
	require.NoError(t, os.WriteFile(rec, []byte(`{"patient_id":"PT-1","medications":["855332","99999999"],"allergies":["zzyzx"]}`), 0o600))
	notes.Reset()
	require.NoError(t, run(t.Context(), []string{"seal", rec}, settings, nil, io.Discard, &notes))
	got = notes.String()
	assert.Contains(t, got, "note: no 'coverage'")
	assert.Contains(t, got, "note: medications[1] is not in the drug catalogue")
	assert.Contains(t, got, "note: allergies[0] names no allergen the rules know")
	assert.Equal(t, 3, strings.Count(got, "note: "), got)
}
