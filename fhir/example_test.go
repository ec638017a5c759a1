package fhir_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/healthagents/healthagents/fhir"
	"github.com/healthagents/healthagents/fhir/fhirtest"
)

// A Bundle of published R4 examples maps onto our record.
func ExampleParse() {
	rec, err := fhir.Parse(fhirtest.PatientBundle("2026-01-01", "2026-12-31"), fhir.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rec.PatientID, rec.Sex, rec.Coverage.MemberID, rec.Coverage.PlanID, rec.Allergies, rec.Medications)
	// Output: example male AB9876 BG4352 [food: cashew nuts] [50580-506-02]
}

// A missing element is named by its FHIR path.
func ExampleParse_error() {
	cov := fhirtest.Resource("coverage-example-2")
	delete(cov, "subscriberId")
	delete(cov, "identifier")
	_, err := fhir.Parse(fhirtest.Bundle(fhirtest.Example("patient-example"), cov), fhir.Options{})
	fmt.Println(err)
	// Output: Bundle.entry[1].resource(Coverage).subscriberId: missing (the member id: Coverage.subscriberId, or else Coverage.identifier[].value)
}

// An eligibility answer as a CoverageEligibilityResponse.
func ExampleCoverageEligibilityResponse() {
	r := fhir.CoverageEligibilityResponse(fhir.Eligibility{
		PatientID: "PT-000123", MemberID: "W123456789", ProcedureCode: "70551", ProviderNPI: "1234567893",
		Created: time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC), Eligible: true, CoveragePercentage: 80,
		RequiresAuthorization: true, CopayAmount: 25,
	})
	b, _ := json.Marshal(r.Insurance[0].Item[0].ProductOrService)
	fmt.Println(r.Outcome.Code(), *r.Disposition)
	fmt.Println(string(b))
	// Output:
	// complete Eligible: the plan covers 80% of 70551; prior authorization is required
	// {"coding":[{"system":"http://www.ama-assn.org/go/cpt","code":"70551"}]}
}
