package fhir_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/healthagents/healthagents/fhir"
	"github.com/healthagents/healthagents/fhir/fhirtest"
)

func sampleEligibility(eligible bool) fhir.Eligibility {
	e := fhir.Eligibility{
		PatientID: "PT-000123", MemberID: "W123456789", ProcedureCode: "PROC001", ProviderNPI: "1234567893",
		Created: time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC), Eligible: eligible, CoveragePercentage: 80,
		RequiresAuthorization: true, DeductibleMet: true, CopayAmount: 25.5,
		Proof: &fhir.Proof{ProofData: "0a0b", PublicInputs: []string{"0x01", "0x02"}, BlockchainTx: "0x" + strings.Repeat("ab", 32)},
	}
	if !eligible {
		r := "procedure excluded by the plan"
		e.Reason = &r
	}
	return e
}

func TestCoverageEligibilityResponseShape(t *testing.T) {
	b, err := json.Marshal(fhir.CoverageEligibilityResponse(sampleEligibility(true)))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["resourceType"] != "CoverageEligibilityResponse" || m["outcome"] != "complete" || m["status"] != "active" {
		t.Fatalf("%s", b)
	}
	item := m["insurance"].([]any)[0].(map[string]any)["item"].([]any)[0].(map[string]any)
	if item["authorizationRequired"] != true || item["excluded"] != false || len(item["benefit"].([]any)) != 3 {
		t.Fatalf("item %v", item)
	}
	if !strings.Contains(string(b), fhir.ExtDecisionProof) || !strings.Contains(string(b), `"valueString":"0x`+strings.Repeat("ab", 32)) {
		t.Fatalf("no proof extension: %s", b)
	}
	if d := m["disposition"].(string); d != "Eligible: the plan covers 80% of PROC001; prior authorization is required" {
		t.Fatalf("disposition %q", d)
	}
	no, _ := json.Marshal(fhir.CoverageEligibilityResponse(sampleEligibility(false)))
	if !strings.Contains(string(no), `"disposition":"Not eligible for PROC001: procedure excluded by the plan"`) || !strings.Contains(string(no), `"excluded":true`) {
		t.Fatalf("ineligible: %s", no)
	}
}

func samplePrescription() fhir.Prescription {
	return fhir.Prescription{
		PrescriptionID: "rx_k3j5m7n9p1q3r5s7t9v1w3x5", PatientID: "PT-000123", ValidationStatus: "rejected",
		Created: time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC),
		Findings: []fhir.Finding{
			{Code: "INTERACTION_FOUND", Severity: "major", NDC: "00071015523", Drug: "atorvastatin", With: "clarithromycin", Mechanism: "CYP3A4 inhibition", Management: "avoid the combination"},
			{Code: "CONTRAINDICATED", Severity: "contraindicated", NDC: "00093310905", Drug: "amoxicillin", Mechanism: "a recorded allergy argues against this drug", Management: "choose another class"},
			{Code: "INELIGIBLE", Severity: "moderate", Mechanism: "not on the plan's formulary"},
		},
	}
}

// TestAnswersValidateAgainstR4 validates our answers, and R4's own
// examples, against the official R4 JSON schema; an answer broken on
// purpose must fail, so the validator is known to look.
func TestAnswersValidateAgainstR4(t *testing.T) {
	var docs [][]byte
	for _, v := range []any{
		fhir.CoverageEligibilityResponse(sampleEligibility(true)),
		fhir.CoverageEligibilityResponse(sampleEligibility(false)),
		fhir.DetectedIssues(samplePrescription()),
		fhir.DetectedIssues(fhir.Prescription{PrescriptionID: "rx_clear", PatientID: "PT-1", Created: time.Now()}),
	} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, b)
	}
	docs = append(docs, fhirtest.Example("coverageeligibilityresponse-example"), fhirtest.Example("detectedissue-example"),
		fhirtest.PatientBundle("2026-01-01", "2026-12-31"))
	if report, ok := fhirtest.Validate(t, docs...); !ok {
		t.Fatalf("not valid FHIR R4:\n%s", report)
	}
	broken := strings.Replace(string(docs[0]), `"outcome":"complete"`, `"outcome":"approved"`, 1)
	if _, ok := fhirtest.Validate(t, []byte(broken)); ok {
		t.Fatal("the validator accepted an outcome outside R4's value set")
	}
	extra := strings.Replace(string(docs[0]), `"outcome":"complete"`, `"outcome":"complete","eligible":true`, 1)
	if _, ok := fhirtest.Validate(t, []byte(extra)); ok {
		t.Fatal("the validator accepted an element R4 does not define")
	}
}
