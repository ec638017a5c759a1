package fhir_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/healthagents/healthagents/fhir"
	"github.com/healthagents/healthagents/fhir/fhirtest"
)

func patientBundle(id, birth string, glucose, bmi float64, diabetic bool) []byte {
	p := fhirtest.Resource("patient-example")
	p["id"], p["birthDate"] = id, birth
	obs := func(loinc string, v float64, unit string) map[string]any {
		return map[string]any{"resourceType": "Observation", "status": "final", "code": coding(fhir.SystemLOINC, loinc),
			"valueQuantity": map[string]any{"value": v, "unit": unit, "system": "http://unitsofmeasure.org", "code": unit}}
	}
	res := []any{p, obs("2339-0", glucose, "mg/dL"), obs("39156-5", bmi, "kg/m2")}
	if diabetic {
		res = append(res, map[string]any{"resourceType": "Condition", "subject": map[string]any{"reference": "Patient/" + id},
			"code": coding(fhir.SystemICD10CM, "E11.9")})
	}
	return fhirtest.Bundle(res...)
}

func TestReadNDJSON(t *testing.T) {
	var in bytes.Buffer
	in.Write(patientBundle("p1", "1970-01-01", 160, 33, true))
	in.WriteString("\n\n")
	in.Write(patientBundle("p2", "1990-06-30", 95, 22, false))
	in.WriteString("\r\n")
	in.Write(fhirtest.PatientBundle("2026-01-01", "2026-12-31")) // no trailing newline
	label, err := fhir.ParseLabel(fhir.SystemICD10CM+"|E11", "positive", "negative")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := fhir.ReadNDJSON(&in, fhir.Options{Label: label})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 {
		t.Fatalf("%d records", len(recs))
	}
	if recs[0].PatientID != "p1" || recs[0].Diagnosis != "positive" || recs[0].Observations["glucose"] != 160 || recs[0].Observations["bmi"] != 33 {
		t.Errorf("p1 %+v", recs[0])
	}
	if recs[1].PatientID != "p2" || recs[1].Diagnosis != "negative" || recs[1].BirthDate != "1990-06-30" {
		t.Errorf("p2 %+v", recs[1])
	}
	if recs[2].PatientID != "example" || recs[2].Diagnosis != "negative" {
		t.Errorf("example %+v", recs[2])
	}

	bad := string(patientBundle("p1", "1970-01-01", 160, 33, true)) + "\n" + string(patientBundle("p2", "1990", 95, 22, false)) + "\n"
	_, err = fhir.ReadNDJSON(strings.NewReader(bad), fhir.Options{Label: label})
	if !errors.Is(err, fhir.ErrInvalid) || err.Error() != "line 2: Bundle.entry[0].resource(Patient).birthDate: must be a full date YYYY-MM-DD" {
		t.Fatalf("bad line: %v", err)
	}
	_, err = fhir.ReadNDJSON(strings.NewReader("{\n"), fhir.Options{})
	if err == nil || err.Error() != "line 1: Bundle: is not valid JSON" {
		t.Fatalf("broken line: %v", err)
	}
	long := strings.Repeat(" ", fhir.MaxSize+10) + "\n"
	if _, err := fhir.ReadNDJSON(strings.NewReader(long), fhir.Options{}); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("long line: %v", err)
	}
	if _, err := fhir.ParseLabel("E11", "p", "n"); !errors.Is(err, fhir.ErrInvalid) {
		t.Fatal("a label without system")
	}
}
