package server

// FHIR R4 answers of the v1 eligibility and prescription endpoints, chosen
// by `Accept: application/fhir+json` (docs/decisions/fhir.md, "Answers
// out"). Errors go out as an OperationOutcome to such a client
// (fhir_errors.go).

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/fhir"
	"github.com/healthagents/healthagents/internal/openapi"
)

// wantsFHIR reports whether the request's Accept header names
// application/fhir+json (with any parameters, e.g. fhirVersion=4.0) with a
// non-zero quality.
func wantsFHIR(r *http.Request) bool {
	for _, h := range r.Header.Values("Accept") {
		for _, part := range strings.Split(h, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil || mt != fhir.MediaType {
				continue
			}
			if q, ok := params["q"]; ok {
				if v, err := strconv.ParseFloat(q, 64); err != nil || v <= 0 {
					continue
				}
			}
			return true
		}
	}
	return false
}

// writeFHIR encodes a FHIR resource as application/fhir+json.
func writeFHIR(w http.ResponseWriter, status int, v any) {
	buf, err := json.Marshal(v)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"detail": "Internal server error"})
		return
	}
	h := w.Header()
	h.Set("Content-Type", fhir.MediaType+"; fhirVersion=4.0")
	h.Set("Content-Length", fmt.Sprint(len(buf)+1))
	w.WriteHeader(status)
	buf = append(buf, '\n')
	_, _ = w.Write(buf)
}

// fhirEligibility is the input of the CoverageEligibilityResponse and of
// the X12 271 for a v1 eligibility answer.
func fhirEligibility(req healthagents.V1EligibilityRequest, res *healthagents.V1EligibilityResult, now time.Time) fhir.Eligibility {
	e := fhir.Eligibility{
		PatientID: req.PatientID, MemberID: req.MemberID, ProcedureCode: req.ProcedureCode, ProviderNPI: req.ProviderNPI,
		Created: now, Eligible: res.Eligible, CoveragePercentage: res.CoveragePercentage,
		RequiresAuthorization: res.RequiresAuthorization, DeductibleMet: res.DeductibleMet,
		CopayAmount: res.CopayAmount, Reason: res.Reason,
	}
	if p := res.VerificationProof; p != nil {
		e.Proof = &fhir.Proof{ProofData: p.ProofData, PublicInputs: p.PublicInputs, BlockchainTx: p.BlockchainTx, Issuer: res.Issuer}
		if res.Statement != nil {
			if b, err := json.Marshal(res.Statement); err == nil {
				e.Proof.Statement = b
			}
		}
	}
	return e
}

// fhirPrescription lists a v1 prescription result's findings.
func fhirPrescription(patientID string, res *healthagents.V1PrescriptionResult) fhir.Prescription {
	p := fhir.Prescription{PrescriptionID: res.PrescriptionID, PatientID: patientID, ValidationStatus: res.ValidationStatus, Created: res.CreatedAt}
	for _, w := range res.Checks.DrugInteractions.Warnings {
		f := fhir.Finding{Code: healthagents.V1InteractionFound, Severity: w.Severity, NDC: w.NDCCode, Drug: w.Drug, With: w.With, Mechanism: w.Mechanism, Management: w.Management}
		switch w.Type {
		case "contraindication":
			f.Code = healthagents.V1Contraindicated
		case "unidentified":
			// The record's entry is what is implicated: the caller's own
			// words, as the JSON answer has them.
			f.Code, f.Drug = healthagents.V1Unidentified, w.Entry
		}
		p.Findings = append(p.Findings, f)
	}
	for _, c := range res.Codes {
		if c == "INELIGIBLE" {
			p.Findings = append(p.Findings, fhir.Finding{Code: c, Severity: "moderate", Mechanism: "the patient's plan does not cover the prescription on the service date (no active coverage, or a medication off the formulary)"})
		}
	}
	return p
}

// OpenAPI: the FHIR alternates of the v1 answers.
var (
	fhirEligibilitySchema = &openapi.Schema{
		Type:        openapi.Types{"object"},
		Description: "With `Accept: application/fhir+json`: the decision as a FHIR R4 CoverageEligibilityResponse (http://hl7.org/fhir/R4/coverageeligibilityresponse.html): outcome `complete`, insurance[0].item[0] with the procedure, benefits (copay-percent: the patient's share, copay, deductible met), authorizationRequired and excluded, the disposition in words, and the proof, public inputs and transaction in the extension " + fhir.ExtDecisionProof + " (docs/decisions/fhir.md). Errors, to a client that asks for FHIR, are an OperationOutcome whose diagnostics is the JSON answer's detail.",
		Properties:  map[string]*openapi.Schema{"resourceType": {Enum: []any{"CoverageEligibilityResponse"}}},
		Required:    []string{"resourceType"},
		Examples:    []any{fhirExample(fhir.CoverageEligibilityResponse(fhirEligibility(exampleEligibilityRequest, &exampleEligibilityResult, exampleTime)))},
	}
	fhirDetectedIssuesSchema = &openapi.Schema{
		Type:        openapi.Types{"object"},
		Description: "With `Accept: application/fhir+json`: the findings as a FHIR R4 Bundle (type collection, identifier: the prescription_id) of DetectedIssue resources (http://hl7.org/fhir/R4/detectedissue.html), one per interaction, contraindication or ineligibility, none when clear (docs/decisions/fhir.md). Errors, to a client that asks for FHIR, are an OperationOutcome whose diagnostics is the JSON answer's detail.",
		Properties:  map[string]*openapi.Schema{"resourceType": {Enum: []any{"Bundle"}}},
		Required:    []string{"resourceType"},
		Examples: []any{fhirExample(fhir.DetectedIssues(fhir.Prescription{
			PrescriptionID: "rx_qjav3v5zjnjngrqxsqek4tgo", PatientID: "PT-000123", ValidationStatus: "rejected", Created: exampleTime,
			Findings: []fhir.Finding{{
				Code: "INTERACTION_FOUND", Severity: "major", NDC: "00904585361", Drug: "ibuprofen", With: "warfarin",
				Mechanism:  "NSAIDs impair platelet function and injure the gastric mucosa, and some displace warfarin from albumin; together with anticoagulation the risk of serious gastrointestinal and other bleeding rises several-fold.",
				Management: "Avoid; prefer acetaminophen for pain. If an NSAID is essential, use the lowest dose for the shortest time, add gastroprotection and check INR and signs of bleeding.",
			}},
		}))},
	}
)

// The eligibility example: the v1 example request and its answer.
var (
	exampleEligibilityRequest = healthagents.V1EligibilityRequest{PatientID: "PT-000123", MemberID: "W123456789", ProcedureCode: "PROC001", ProviderNPI: "1234567893"}
	exampleEligibilityResult  = healthagents.V1EligibilityResult{Eligible: true, CoveragePercentage: 80, RequiresAuthorization: true, DeductibleMet: true, CopayAmount: 25, VerificationProof: &exampleProof}
)

// fhirExample is a FHIR resource as the generic JSON value an OpenAPI
// example holds.
func fhirExample(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // our own types always marshal
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

// withFHIR adds the FHIR alternate to an operation's 200 response.
func withFHIR(responses map[int]openapi.Response, s *openapi.Schema) map[int]openapi.Response {
	r := responses[http.StatusOK]
	r.Alternates = map[string]*openapi.Schema{fhir.MediaType: s}
	responses[http.StatusOK] = r
	return responses
}
