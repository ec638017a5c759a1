package fhir_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/healthagents/healthagents/fhir"
	"github.com/healthagents/healthagents/fhir/fhirtest"
)

var updateSample = flag.Bool("update", false, "rewrite testdata/fhir-bundle.json")

// TestSampleBundle: testdata/fhir-bundle.json, the Bundle the docs seal
// (`healthagents seal --fhir testdata/fhir-bundle.json`), is the Bundle of
// published R4 examples fhirtest builds, with coverage through 2099, and
// maps onto a record.
func TestSampleBundle(t *testing.T) {
	var buf bytes.Buffer
	if err := json.Indent(&buf, fhirtest.PatientBundle("2026-01-01", "2099-12-31"), "", "  "); err != nil {
		t.Fatal(err)
	}
	buf.WriteByte('\n')
	const path = "../testdata/fhir-bundle.json"
	if *updateSample {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, buf.Bytes()) {
		t.Fatalf("%s is stale: go test ./fhir -run TestSampleBundle -update", path)
	}
	rec, err := fhir.Parse(got, fhir.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rec.PatientID != "example" || rec.Coverage.MemberID != "AB9876" || rec.Coverage.End != "2099-12-31" {
		t.Fatalf("%+v", rec)
	}
}
