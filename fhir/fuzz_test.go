package fhir_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/healthagents/healthagents/fhir"
	"github.com/healthagents/healthagents/fhir/fhirtest"
	"github.com/healthagents/healthagents/prescription"
	"github.com/healthagents/healthagents/record"
)

// FuzzParseRecord: any plaintext maps to a valid record or to an error of
// one of the two formats, and never panics.
func FuzzParseRecord(f *testing.F) {
	f.Add(fhirtest.PatientBundle("2026-01-01", "2026-12-31"))
	f.Add(fhirtest.Bundle(fhirtest.Example("patient-example"), fhirtest.Example("coverage-example"), fhirtest.Example("medicationrequest0301")))
	f.Add([]byte(`{"patient_id":"PT-1"}`))
	f.Add([]byte(`{"resourceType":"Bundle","entry":[{"resource":{"resourceType":"Coverage","status":7}}]}`))
	f.Add([]byte(`{"resourceType":"Bundle","entry":[{"resource":{"resourceType":"MedicationStatement","status":"active","medicationReference":{"reference":"#x"}}}]}`))
	f.Add([]byte(`{"resourceType":"Bundle","entry":[{"resource":{"resourceType":"Coverages"}}]}`))
	f.Add([]byte("{\"resourceType\":\"Bundle\",\"id\":\"a\\ud800\\u0007\xff\"}"))
	f.Add([]byte(`{"resourceType":"Bundle","entry":[{"resource":{"resourceType":"Patient","id":"p"}},{"resource":{"resourceType":"MedicationStatement","status":"active","medicationCodeableConcept":{"text":"{2 (a 1 MG / b [c]) } Pack [d]"}}}]}`))
	drugs, err := prescription.New()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// With the drug catalogue, as the service maps, and without.
		if rec, err := fhir.ParseRecordWith(b, fhir.Options{Drugs: drugs}); err == nil {
			if err := rec.Validate(); err != nil {
				t.Fatalf("a mapped record that does not validate: %v", err)
			}
		}
		rec, err := fhir.ParseRecord(b)
		if err != nil {
			if !errors.Is(err, fhir.ErrInvalid) && !errors.Is(err, record.ErrMalformed) {
				t.Fatalf("an error of neither format: %v", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error: %q", err)
			}
			return
		}
		if err := rec.Validate(); err != nil {
			t.Fatalf("a mapped record that does not validate: %v", err)
		}
	})
}

func BenchmarkParseBundle(b *testing.B) {
	bundle := fhirtest.PatientBundle("2026-01-01", "2026-12-31")
	b.SetBytes(int64(len(bundle)))
	for b.Loop() {
		if _, err := fhir.Parse(bundle, fhir.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
