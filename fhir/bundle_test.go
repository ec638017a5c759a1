package fhir_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/healthagents/healthagents/fhir"
	"github.com/healthagents/healthagents/fhir/fhirtest"
	"github.com/healthagents/healthagents/record"
)

func TestParsePublishedExamples(t *testing.T) {
	rec, err := fhir.Parse(fhirtest.PatientBundle("2011-03-17", "2012-03-17"), fhir.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rec.PatientID != "example" || rec.BirthDate != "1974-12-25" || rec.Sex != "male" {
		t.Errorf("patient: %q %q %q", rec.PatientID, rec.BirthDate, rec.Sex)
	}
	if rec.Name == nil || *rec.Name != (record.Name{Family: "Chalmers", Given: "Peter"}) {
		t.Errorf("the official name: %+v", rec.Name)
	}
	c := rec.Coverage
	if c == nil {
		t.Fatal("no coverage")
	}
	if c.MemberID != "AB9876" || c.PlanID != "BG4352" || c.PayerID != "Organization/2" || c.Status != record.StatusActive || c.Start != "2011-03-17" || c.End != "2012-03-17" {
		t.Errorf("coverage: %+v", c)
	}
	if c.Copay != 0 {
		t.Errorf("a gpvisit copay is not the plan copay: %v", c.Copay)
	}
	if got := strings.Join(rec.Allergies, ","); got != "food: cashew nuts" { // AllergyIntolerance.category food
		t.Errorf("allergies %q", got)
	}
	// example001's contained Medication is coded by NDC only;
	// medrx0301 is completed and so not a current medication.
	if got := strings.Join(rec.Medications, ","); got != "50580-506-02" {
		t.Errorf("medications %q", got)
	}
	want := map[string]float64{"bmi": 16.2, "glucose": 6.3 * 18.016, "systolic_bp": 107, "diastolic_bp": 60}
	for k, v := range want {
		if math.Abs(rec.Observations[k]-v) > 1e-9 {
			t.Errorf("observation %s = %v, want %v", k, rec.Observations[k], v)
		}
	}
	if rec.Diagnosis != "" {
		t.Errorf("no label asked, got %q", rec.Diagnosis)
	}
}

func TestParseRecordBothFormats(t *testing.T) {
	rec, err := fhir.ParseRecord(fhirtest.PatientBundle("2011-03-17", "2012-03-17"))
	if err != nil || rec.PatientID != "example" {
		t.Fatalf("bundle: %v %v", rec, err)
	}
	rec, err = fhir.ParseRecord([]byte(`{"patient_id":"PT-1","conditions":["E11.9"]}`))
	if err != nil || rec.PatientID != "PT-1" {
		t.Fatalf("record: %v %v", rec, err)
	}
	_, err = fhir.ParseRecord([]byte(`{"patient_id":"PT-1","coverage":{"status":"active"}}`))
	if !errors.Is(err, record.ErrMalformed) {
		t.Fatalf("record error: %v", err)
	}
	_, err = fhir.ParseRecord(fhirtest.Example("patient-example"))
	if err == nil || err.Error() != "resourceType: must be Bundle (a FHIR R4 Bundle of the patient's resources)" {
		t.Fatalf("a bare Patient: %v", err)
	}
	if !fhir.IsBundle(fhirtest.Bundle()) || fhir.IsBundle([]byte(`{"patient_id":"x"}`)) || fhir.IsBundle([]byte(`[`)) {
		t.Fatal("IsBundle")
	}
}

func TestParseErrorsNameResourceAndElement(t *testing.T) {
	patient := fhirtest.Example("patient-example")
	cov := func(edit func(map[string]any)) map[string]any {
		c := fhirtest.Resource("coverage-example-2")
		edit(c)
		return c
	}
	cases := []struct {
		name   string
		bundle []byte
		want   string
	}{
		{"period.start", fhirtest.Bundle(patient, cov(func(c map[string]any) { c["period"] = map[string]any{"end": "2012-03-17"} })),
			"Bundle.entry[1].resource(Coverage).period.start: missing"},
		{"period", fhirtest.Bundle(patient, cov(func(c map[string]any) { delete(c, "period") })),
			"Bundle.entry[1].resource(Coverage).period: missing (the coverage's start and end dates)"},
		{"partial date", fhirtest.Bundle(patient, cov(func(c map[string]any) { c["period"] = map[string]any{"start": "2011", "end": "2012-03-17"} })),
			"Bundle.entry[1].resource(Coverage).period.start: must be a full date YYYY-MM-DD (a year or month alone is not enough)"},
		{"subscriberId", fhirtest.Bundle(patient, cov(func(c map[string]any) { delete(c, "subscriberId"); delete(c, "identifier") })),
			"Bundle.entry[1].resource(Coverage).subscriberId: missing (the member id: Coverage.subscriberId, or else Coverage.identifier[].value)"},
		{"payor", fhirtest.Bundle(patient, cov(func(c map[string]any) { delete(c, "payor") })),
			"Bundle.entry[1].resource(Coverage).payor: missing"},
		{"status code", fhirtest.Bundle(patient, cov(func(c map[string]any) { c["status"] = "SECRET-VALUE" })),
			"Bundle.entry[1].resource(Coverage): holds a code outside its R4 value set (a status, gender or other coded element)"},
		{"status missing", fhirtest.Bundle(patient, cov(func(c map[string]any) { delete(c, "status") })),
			"Bundle.entry[1].resource(Coverage).status: missing"},
		{"wrong type", fhirtest.Bundle(patient, cov(func(c map[string]any) { c["subscriberId"] = 42 })),
			"Bundle.entry[1].resource(Coverage).subscriberId: must be a string"},
		{"no patient", fhirtest.Bundle(fhirtest.Example("observation-example-bmi")),
			"Bundle.entry: no Patient resource (the Bundle must hold exactly one)"},
		{"two patients", fhirtest.Bundle(patient, patient),
			"Bundle.entry[1].resource(Patient): a second Patient (Bundle.entry[0] is the first); the Bundle must hold one patient's resources"},
		{"SNOMED condition", fhirtest.Bundle(patient, fhirtest.Example("condition-example2")),
			"Bundle.entry[1].resource(Condition).code: no ICD-10-CM coding (system http://hl7.org/fhir/sid/icd-10-cm): the contraindication rules are keyed by ICD-10-CM"},
		{"no resourceType", fhirtest.Bundle(patient, map[string]any{"id": "x"}),
			"Bundle.entry[1].resource.resourceType: missing"},
		{"bad unit", fhirtest.Bundle(patient, editObs("observation-example-bmi", "lb/in2")),
			"Bundle.entry[1].resource(Observation).valueQuantity.code: a unit this service does not convert (glucose in mg/dL or mmol/L, BMI in kg/m2, blood pressure in mm[Hg])"},
		{"missing medication", fhirtest.Bundle(patient, map[string]any{"resourceType": "MedicationRequest", "status": "active", "intent": "order", "subject": map[string]any{"reference": "Patient/example"}, "medicationReference": map[string]any{"reference": "Medication/nowhere"}}),
			"Bundle.entry[1].resource(MedicationRequest).medicationReference: refers to a Medication the Bundle does not hold"},
		{"not JSON", []byte(`{"resourceType":"Bundle","entry":[`), "Bundle: is not valid JSON"},
		// Refused, not skipped (issue 25).
		{"unknown resourceType", fhirtest.Bundle(patient, cov(func(c map[string]any) { c["resourceType"] = "Coverages" })),
			"Bundle.entry[1].resource(Coverages): resourceType is not a FHIR R4 resource type (http://hl7.org/fhir/R4/resourcelist.html)"},
		{"abstract resourceType", fhirtest.Bundle(patient, map[string]any{"resourceType": "DomainResource"}),
			"Bundle.entry[1].resource(DomainResource): resourceType is not a FHIR R4 resource type (http://hl7.org/fhir/R4/resourcelist.html)"},
		{"nested Bundle", fhirtest.Bundle(patient, map[string]any{"resourceType": "Bundle", "type": "collection"}),
			"Bundle.entry[1].resource(Bundle): a Bundle inside the Bundle is not read; send one Bundle of the patient's resources"},
		{"control character", fhirtest.Bundle(patient, cov(func(c map[string]any) { c["subscriberId"] = "AB98\u0007SECRET" })),
			"Bundle.entry[1].resource(Coverage): a string holds a control character (FHIR strings allow tab, carriage return and line feed only)"},
		{"escaped control character", bytes.Replace(fhirtest.Bundle(patient), []byte("Chalmers"), []byte(`Chal\u001bSECRET`), 1),
			"Bundle.entry[0].resource(Patient): a string holds a control character (FHIR strings allow tab, carriage return and line feed only)"},
		{"C1 control character", bytes.Replace(fhirtest.Bundle(patient), []byte("Chalmers"), []byte("Chal\u0085SECRET"), 1),
			"Bundle.entry[0].resource(Patient): a string holds a control character (FHIR strings allow tab, carriage return and line feed only)"},
		{"invalid UTF-8", bytes.Replace(fhirtest.Bundle(patient, cov(func(map[string]any) {})), []byte("AB9876"), []byte("AB\xff9876"), 1),
			"Bundle.entry[1].resource(Coverage): a string is not valid UTF-8"},
		{"lone surrogate", bytes.Replace(fhirtest.Bundle(patient), []byte("Chalmers"), []byte(`Chal\ud800SECRET`), 1),
			"Bundle.entry[0].resource(Patient): a string holds an unpaired UTF-16 surrogate escape"},
		{"outside the resources", bytes.Replace(fhirtest.Bundle(patient), []byte(`"type":"collection"`), []byte(`"type":"collection","id":"x\u0000SECRET"`), 1),
			"Bundle: a string holds a control character (FHIR strings allow tab, carriage return and line feed only) (outside the entries' resources)"},
		{"medication of nothing", fhirtest.Bundle(patient, map[string]any{"resourceType": "MedicationStatement", "status": "active", "subject": map[string]any{"reference": "Patient/example"}}),
			"Bundle.entry[1].resource(MedicationStatement).medication[x]: missing: a medicationCodeableConcept with a coding or text, or a medicationReference to a Medication"},
		{"reference without one", fhirtest.Bundle(patient, map[string]any{"resourceType": "MedicationStatement", "status": "active", "subject": map[string]any{"reference": "Patient/example"}, "medicationReference": map[string]any{"display": "Coumadin"}}),
			"Bundle.entry[1].resource(MedicationStatement).medication[x]: missing: a medicationCodeableConcept with a coding or text, or a medicationReference to a Medication"},
		{"reference to no contained Medication", fhirtest.Bundle(patient, map[string]any{"resourceType": "MedicationStatement", "status": "active", "subject": map[string]any{"reference": "Patient/example"}, "medicationReference": map[string]any{"reference": "#med1"}}),
			"Bundle.entry[1].resource(MedicationStatement).medicationReference: refers to a contained Medication the resource does not hold"},
		{"reference to a Patient", fhirtest.Bundle(patient, map[string]any{"resourceType": "MedicationStatement", "status": "active", "subject": map[string]any{"reference": "Patient/example"}, "medicationReference": map[string]any{"reference": "Patient/example"}}),
			"Bundle.entry[1].resource(MedicationStatement).medicationReference: refers to a Medication the Bundle does not hold"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := fhir.Parse(tc.bundle, fhir.Options{})
			var fe *fhir.Error
			if !errors.As(err, &fe) || !errors.Is(err, fhir.ErrInvalid) {
				t.Fatalf("got %v, want a *fhir.Error", err)
			}
			if err.Error() != tc.want {
				t.Fatalf("got  %q\nwant %q", err.Error(), tc.want)
			}
			if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "AB9876") {
				t.Fatal("the error repeats a value from the Bundle")
			}
		})
	}
}

func editObs(name, unit string) map[string]any {
	o := fhirtest.Resource(name)
	q := o["valueQuantity"].(map[string]any)
	q["code"], q["unit"] = unit, unit
	return o
}

func TestCoverageTermsAndExtensions(t *testing.T) {
	cov := fhirtest.Resource("coverage-example")
	cov["period"] = map[string]any{"start": "2026-01-01T00:00:00Z", "end": "2026-12-31"}
	cov["costToBeneficiary"] = []any{
		map[string]any{"type": coding(fhir.SystemCopayType, "copay"), "valueMoney": map[string]any{"value": 25, "currency": "USD"}},
		map[string]any{"type": coding(fhir.SystemCopayType, "deductible"), "valueMoney": map[string]any{"value": 1500}},
	}
	cov["extension"] = []any{
		map[string]any{"url": fhir.ExtExcludedProcedure, "valueString": "PROC004"},
		map[string]any{"url": fhir.ExtExcludedProcedure, "valueCode": "70553"},
		map[string]any{"url": fhir.ExtCoverageOverride, "extension": []any{
			map[string]any{"url": "procedure", "valueString": "PROC002"},
			map[string]any{"url": "percent", "valueUnsignedInt": 50},
		}},
		map[string]any{"url": fhir.ExtDeductibleMet, "valueMoney": map[string]any{"value": 300.5, "currency": "USD"}},
	}
	// A cancelled older coverage beside the active one is ignored.
	old := fhirtest.Resource("coverage-example-2")
	old["status"] = "cancelled"
	rec, err := fhir.Parse(fhirtest.Bundle(fhirtest.Example("patient-example"), old, cov), fhir.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := rec.Coverage
	if c.MemberID != "12345" || c.PlanID != "B37FC" || c.Start != "2026-01-01" || c.End != "2026-12-31" {
		t.Errorf("coverage %+v", c)
	}
	if c.Copay != 25 || c.Deductible != 1500 || c.DeductibleMet != 300.5 {
		t.Errorf("amounts %v %v %v", c.Copay, c.Deductible, c.DeductibleMet)
	}
	if strings.Join(c.ExcludedProcedures, ",") != "PROC004,70553" || c.CoverageOverrides["PROC002"] != 50 {
		t.Errorf("exclusions %v overrides %v", c.ExcludedProcedures, c.CoverageOverrides)
	}

	// Two active coverages: which applies would be a guess.
	_, err = fhir.Parse(fhirtest.Bundle(fhirtest.Example("patient-example"), fhirtest.Example("coverage-example-2"), cov), fhir.Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "Bundle.entry[2].resource(Coverage).status: a second active Coverage") {
		t.Fatalf("two active: %v", err)
	}
	bad := fhirtest.Resource("coverage-example")
	bad["extension"] = []any{map[string]any{"url": fhir.ExtCoverageOverride, "extension": []any{
		map[string]any{"url": "procedure", "valueString": "PROC002"},
		map[string]any{"url": "percent", "valueInteger": 150},
	}}}
	_, err = fhir.Parse(fhirtest.Bundle(fhirtest.Example("patient-example"), bad), fhir.Options{})
	if err == nil || err.Error() != "Bundle.entry[1].resource(Coverage).extension[0].extension(percent): must be a percentage 0-100" {
		t.Fatalf("override: %v", err)
	}
}

func coding(system, code string) map[string]any {
	return map[string]any{"coding": []any{map[string]any{"system": system, "code": code}}}
}

func TestConditionsAndLabel(t *testing.T) {
	cond := func(code, clinical, verification string) map[string]any {
		c := map[string]any{"resourceType": "Condition", "subject": map[string]any{"reference": "Patient/example"}, "code": coding(fhir.SystemICD10CM, code)}
		if clinical != "" {
			c["clinicalStatus"] = coding("http://terminology.hl7.org/CodeSystem/condition-clinical", clinical)
		}
		if verification != "" {
			c["verificationStatus"] = coding("http://terminology.hl7.org/CodeSystem/condition-ver-status", verification)
		}
		return c
	}
	label := fhir.DefaultLabel("positive", "negative")
	p := fhirtest.Example("patient-example")
	rec, err := fhir.Parse(fhirtest.Bundle(p, cond("E11.9", "active", "confirmed"), cond("I10", "resolved", ""), cond("N18.4", "", "")), fhir.Options{Label: label})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rec.Conditions, ",") != "E11.9,N18.4" || rec.Diagnosis != "positive" {
		t.Fatalf("conditions %v diagnosis %q", rec.Conditions, rec.Diagnosis)
	}
	rec, err = fhir.Parse(fhirtest.Bundle(p, cond("E11.9", "", "refuted")), fhir.Options{Label: label})
	if err != nil || rec.Diagnosis != "negative" || len(rec.Conditions) != 0 {
		t.Fatalf("refuted: %v %v", rec, err)
	}
	rec, err = fhir.Parse(fhirtest.Bundle(p), fhir.Options{Label: label})
	if err != nil || rec.Diagnosis != "negative" {
		t.Fatalf("absent: %v %v", rec, err)
	}
	// The label as an Observation.
	obsLabel := &fhir.Label{System: fhir.SystemLOINC, Code: "LP-DIAG", Positive: "positive", Negative: "negative"}
	obs := map[string]any{"resourceType": "Observation", "status": "final", "code": coding(fhir.SystemLOINC, "LP-DIAG"), "valueBoolean": true}
	rec, err = fhir.Parse(fhirtest.Bundle(p, obs), fhir.Options{Label: obsLabel})
	if err != nil || rec.Diagnosis != "positive" {
		t.Fatalf("observation label: %v %v", rec, err)
	}
	obs["valueCodeableConcept"] = coding("http://snomed.info/sct", "260385009")
	delete(obs, "valueBoolean")
	rec, err = fhir.Parse(fhirtest.Bundle(p, obs), fhir.Options{Label: obsLabel})
	if err != nil || rec.Diagnosis != "negative" {
		t.Fatalf("observation label (SNOMED negative): %v %v", rec, err)
	}
	obs["valueCodeableConcept"] = map[string]any{"text": "maybe"}
	_, err = fhir.Parse(fhirtest.Bundle(p, obs), fhir.Options{Label: obsLabel})
	if err == nil || !strings.HasPrefix(err.Error(), "Bundle.entry[1].resource(Observation).value[x]: ") {
		t.Fatalf("unclear label: %v", err)
	}
}

func TestParseRejectsOversize(t *testing.T) {
	big := map[string]any{"resourceType": "Patient", "id": "p", "text": map[string]any{"status": "generated", "div": strings.Repeat("x", fhir.MaxSize)}}
	b, _ := json.Marshal(map[string]any{"resourceType": "Bundle", "type": "collection", "entry": []any{map[string]any{"resource": big}}})
	if _, err := fhir.Parse(b, fhir.Options{}); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("oversize: %v", err)
	}
}
