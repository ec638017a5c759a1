package server

import (
	"encoding/json"
	"testing"

	"github.com/healthagents/healthagents/fhir/fhirtest"
)

// TestFHIRExamplesValidate: the OpenAPI document's application/fhir+json
// examples are valid FHIR R4.
func TestFHIRExamplesValidate(t *testing.T) {
	var docs [][]byte
	for _, s := range []any{fhirEligibilitySchema.Examples[0], fhirDetectedIssuesSchema.Examples[0]} {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, b)
	}
	if report, ok := fhirtest.Validate(t, docs...); !ok {
		t.Fatalf("an OpenAPI FHIR example is not valid R4:\n%s", report)
	}
}
