package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/federated/synth"
	"github.com/healthagents/healthagents/fhir"
	"github.com/healthagents/healthagents/record"
)

// cohortBundle is one synthetic patient as a FHIR R4 Bundle: Patient,
// three LOINC Observations and, when positive, a type 2 diabetes Condition.
func cohortBundle(t *testing.T, r *record.Record) []byte {
	t.Helper()
	code := func(system, c string) map[string]any {
		return map[string]any{"coding": []any{map[string]any{"system": system, "code": c}}}
	}
	obs := func(loinc, unit string, v float64) map[string]any {
		return map[string]any{"resource": map[string]any{"resourceType": "Observation", "status": "final", "code": code(fhir.SystemLOINC, loinc),
			"subject": map[string]any{"reference": "Patient/" + r.PatientID}, "valueQuantity": map[string]any{"value": v, "unit": unit, "code": unit, "system": "http://unitsofmeasure.org"}}}
	}
	entries := []any{
		map[string]any{"resource": map[string]any{"resourceType": "Patient", "id": r.PatientID, "birthDate": r.BirthDate}},
		obs("2339-0", "mg/dL", r.Observations["glucose"]), obs("39156-5", "kg/m2", r.Observations["bmi"]), obs("8480-6", "mm[Hg]", r.Observations["systolic_bp"]),
	}
	if r.Diagnosis == "positive" {
		entries = append(entries, map[string]any{"resource": map[string]any{"resourceType": "Condition", "code": code(fhir.SystemICD10CM, "E11.9"),
			"subject": map[string]any{"reference": "Patient/" + r.PatientID}}})
	}
	b, err := json.Marshal(map[string]any{"resourceType": "Bundle", "type": "collection", "entry": entries})
	require.NoError(t, err)
	return b
}

// TestParticipantReadsFHIRNDJSON: a cohort exported as FHIR NDJSON (one
// Bundle per patient) reads as the same records as the cohort itself, and
// a participant trains on them.
func TestParticipantReadsFHIRNDJSON(t *testing.T) {
	t.Parallel()
	want := synth.Records(synth.ThreeCohorts(40, 7)[0])
	var nd bytes.Buffer
	for _, r := range want {
		nd.Write(cohortBundle(t, r))
		nd.WriteByte('\n')
	}
	path := filepath.Join(t.TempDir(), "export.ndjson")
	require.NoError(t, os.WriteFile(path, nd.Bytes(), 0o600))
	tf, err := builtinTaskFile()
	require.NoError(t, err)
	got, err := readParticipantFHIR(tf, path, fhir.SystemICD10CM+"|E11")
	require.NoError(t, err)
	require.Len(t, got, len(want))
	for i, r := range want {
		assert.Equal(t, r.PatientID, got[i].PatientID)
		assert.Equal(t, r.BirthDate, got[i].BirthDate)
		assert.Equal(t, r.Diagnosis, got[i].Diagnosis, r.PatientID)
		for _, k := range []string{"glucose", "bmi", "systolic_bp"} {
			assert.InDelta(t, r.Observations[k], got[i].Observations[k], 1e-9, "%s %s", r.PatientID, k)
		}
	}
	_, err = federated.NewParticipant(federated.ParticipantConfig{Org: "hospital-a", Task: tf.Task(), HeldOut: tf.HeldOut}, got)
	require.NoError(t, err)

	_, err = readParticipantFHIR(tf, path, "E11")
	require.ErrorContains(t, err, "--fhir-label")
	require.NoError(t, os.WriteFile(path, []byte(`{"resourceType":"Bundle","type":"collection","entry":[{"resource":{"resourceType":"Observation","status":"final"}}]}`+"\n"), 0o600))
	_, err = readParticipantFHIR(tf, path, fhir.SystemICD10CM+"|E11")
	require.ErrorContains(t, err, "line 1: Bundle.entry: no Patient resource")
}
