// Package fhirtest holds published FHIR R4 example resources (see
// r4-examples/SOURCE.md) and builds test Bundles from them. It is test
// support: only tests import it.
package fhirtest

import (
	"embed"
	"encoding/json"
	"fmt"
)

//go:embed r4-examples/*.json
var examples embed.FS

// Example returns the published example resource name (e.g.
// "patient-example"), as published.
func Example(name string) []byte {
	b, err := examples.ReadFile("r4-examples/" + name + ".json")
	if err != nil {
		panic(fmt.Sprintf("fhirtest: no example %q", name))
	}
	return b
}

// Resource returns the example name decoded as a JSON object, for a test
// to change before bundling.
func Resource(name string) map[string]any {
	var m map[string]any
	if err := json.Unmarshal(Example(name), &m); err != nil {
		panic(err)
	}
	return m
}

// Bundle wraps resources (JSON objects, or raw JSON) in a collection
// Bundle, each entry with a fullUrl.
func Bundle(resources ...any) []byte {
	entries := make([]map[string]any, 0, len(resources))
	for i, r := range resources {
		var res any = r
		if b, ok := r.([]byte); ok {
			res = json.RawMessage(b)
		}
		entries = append(entries, map[string]any{"fullUrl": fmt.Sprintf("urn:uuid:00000000-0000-4000-8000-%012d", i+1), "resource": res})
	}
	b, err := json.Marshal(map[string]any{"resourceType": "Bundle", "type": "collection", "entry": entries})
	if err != nil {
		panic(err)
	}
	return b
}

// PatientBundle is a Bundle of one patient built from the published R4
// examples: Patient/example, Coverage/7546D (its beneficiary pointed at
// the patient and its period set to start..end), the BMI, glucose and
// blood-pressure Observations, AllergyIntolerance/example and
// MedicationStatement/example001.
func PatientBundle(start, end string) []byte {
	cov := Resource("coverage-example-2")
	cov["beneficiary"] = map[string]any{"reference": "Patient/example"}
	cov["period"] = map[string]any{"start": start, "end": end}
	return Bundle(
		Example("patient-example"),
		cov,
		Example("observation-example-bmi"),
		Example("observation-example-f001-glucose"),
		Example("observation-example-bloodpressure"),
		Example("allergyintolerance-example"),
		Example("medicationstatementexample1"),
		Example("medicationrequest0301"),
	)
}
