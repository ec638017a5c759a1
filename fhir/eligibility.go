package fhir

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"time"

	r4 "github.com/samply/golang-fhir-models/fhir-models/fhir"
)

// MediaType is the FHIR JSON media type: an Accept header naming it gets a
// FHIR R4 answer.
const MediaType = "application/fhir+json"

// Extensions of the answers (docs/decisions/fhir.md, "Answers out").
const (
	// ExtDecisionProof (on CoverageEligibilityResponse, complex): the proof of the decision and its chain
	// record. Sub-extensions: "proof" (valueString: the Groth16 proof,
	// hex), "public-input" (valueString, repeating: the public inputs, hex
	// field elements, in order), "transaction" (valueString: the hash of the
	// mined transaction that verified it), "statement" (valueString: the
	// decision's statement JSON, docs/statement.md), "issuer" (valueString:
	// who vouches for the coverage, "self" or the registered payer).
	ExtDecisionProof = ExtensionBase + "decision-proof"
	// ExtCoveragePercentage (on CoverageEligibilityResponse.insurance.item,
	// valueUnsignedInt): the percentage of the cost the plan covers.
	ExtCoveragePercentage = ExtensionBase + "coverage-percentage"
)

// Systems of the identifiers and codes the answers carry.
const (
	// SystemPatientID names the caller's de-identified patient code.
	SystemPatientID = "https://healthagents.dev/fhir/NamingSystem/patient-id"
	// SystemPrescriptionID names a stored prescription validation.
	SystemPrescriptionID = "https://healthagents.dev/fhir/NamingSystem/prescription-id"
	// SystemProcedure is the service's procedure catalogue (PROC001...).
	SystemProcedure = "https://healthagents.dev/fhir/CodeSystem/procedure"
	// SystemFinding holds the v1 finding codes (INTERACTION_FOUND,
	// CONTRAINDICATED, INELIGIBLE).
	SystemFinding = "https://healthagents.dev/fhir/CodeSystem/finding"
	// SystemCPT is the AMA's CPT code system.
	SystemCPT = "http://www.ama-assn.org/go/cpt"
	// SystemIdentifierType is HL7 v2 table 0203 (identifier types; MB: member number).
	SystemIdentifierType = "http://terminology.hl7.org/CodeSystem/v2-0203"
	// SystemBenefitType is R4's benefit-type code system.
	SystemBenefitType = "http://terminology.hl7.org/CodeSystem/benefit-type"
)

// Proof is a decision's proof and chain record.
type Proof struct {
	ProofData    string
	PublicInputs []string
	BlockchainTx string
	// Statement is the decision's statement JSON, when there is one.
	Statement json.RawMessage
	// Issuer is who vouches for the coverage the proof was made from:
	// "self" or the registered payer's name.
	Issuer string
}

// Eligibility is an eligibility answer and the request it answers; the
// input of [CoverageEligibilityResponse] and of the X12 271.
type Eligibility struct {
	PatientID, MemberID, ProcedureCode, ProviderNPI string
	Created                                         time.Time
	Eligible                                        bool
	CoveragePercentage                              int
	RequiresAuthorization                           bool
	DeductibleMet                                   bool
	CopayAmount                                     float64
	Reason                                          *string
	Proof                                           *Proof
}

var cptLike = regexp.MustCompile(`^[0-9]{4}[0-9A-Z]$`)

// ProcedureCoding codes a procedure: CPT for a five-character CPT/HCPCS
// shaped code, else the service's catalogue.
func ProcedureCoding(code string) r4.Coding {
	system := SystemProcedure
	if cptLike.MatchString(code) {
		system = SystemCPT
	}
	return r4.Coding{System: &system, Code: &code}
}

// CoverageEligibilityResponse is e as an R4 CoverageEligibilityResponse
// (docs/decisions/fhir.md, "Answers out"): outcome complete, one
// insurance with one item for the procedure (benefits: the patient's
// share as copay-percent, the copay, whether the deductible is met;
// authorizationRequired; excluded when not eligible), the disposition in
// words, and the proof as extension [ExtDecisionProof].
func CoverageEligibilityResponse(e Eligibility) r4.CoverageEligibilityResponse {
	created := e.Created.UTC().Format(time.RFC3339)
	served := e.Created.UTC().Format(time.DateOnly)
	eligible, pct := e.Eligible, e.CoveragePercentage
	if !eligible {
		pct = 0
	}
	share := uint(100 - pct)
	shareInt := int(share)
	pctInt := pct
	usd := "USD"
	copay := json.Number(strconv.FormatFloat(e.CopayAmount, 'f', -1, 64))
	deductible := "not met"
	if e.DeductibleMet {
		deductible = "met"
	}
	excluded := !eligible
	auth := e.RequiresAuthorization
	disposition := fmt.Sprintf("Eligible: the plan covers %d%% of %s", pct, e.ProcedureCode)
	if auth {
		disposition += "; prior authorization is required"
	}
	if !eligible {
		disposition = "Not eligible for " + e.ProcedureCode
		if e.Reason != nil && *e.Reason != "" {
			disposition += ": " + *e.Reason
		}
	}
	proc := ProcedureCoding(e.ProcedureCode)
	item := r4.CoverageEligibilityResponseInsuranceItem{
		Extension:        []r4.Extension{{Url: ExtCoveragePercentage, ValueUnsignedInt: &pctInt}},
		ProductOrService: &r4.CodeableConcept{Coding: []r4.Coding{proc}},
		Excluded:         &excluded,
		Benefit: []r4.CoverageEligibilityResponseInsuranceItemBenefit{
			{Type: benefitType("copay-percent", "Patient's share of the cost, percent"), AllowedUnsignedInt: &shareInt},
			{Type: benefitType("copay", "Copay"), AllowedMoney: &r4.Money{Value: &copay, Currency: &usd}},
			{Type: benefitType("deductible", "Deductible"), UsedString: &deductible},
		},
		AuthorizationRequired: &auth,
	}
	if e.ProviderNPI != "" {
		item.Provider = &r4.Reference{Identifier: identifier(SystemNPI, e.ProviderNPI)}
	}
	inforce := true // a request without coverage in force is an error, not an answer
	member := identifier(SystemIdentifierType, e.MemberID)
	memberType := "MB"
	member.Type = &r4.CodeableConcept{Coding: []r4.Coding{{System: strp(SystemIdentifierType), Code: &memberType}}}
	member.System = nil
	resp := r4.CoverageEligibilityResponse{
		Status:       r4.FinancialResourceStatusCodesActive,
		Purpose:      []r4.EligibilityResponsePurpose{r4.EligibilityResponsePurposeValidation, r4.EligibilityResponsePurposeBenefits},
		Patient:      r4.Reference{Identifier: identifier(SystemPatientID, e.PatientID)},
		ServicedDate: &served,
		Created:      created,
		Request:      r4.Reference{Display: strp("POST /api/v1/eligibility/verify")},
		Outcome:      r4.ClaimProcessingCodesComplete,
		Disposition:  &disposition,
		Insurer:      r4.Reference{Display: strp("The payer of the patient's recorded coverage")},
		Insurance: []r4.CoverageEligibilityResponseInsurance{{
			Coverage: r4.Reference{Identifier: member},
			Inforce:  &inforce,
			Item:     []r4.CoverageEligibilityResponseInsuranceItem{item},
		}},
	}
	if p := proofExtension(e.Proof); p != nil {
		resp.Extension = []r4.Extension{*p}
	}
	return resp
}

func benefitType(code, text string) r4.CodeableConcept {
	return r4.CodeableConcept{Coding: []r4.Coding{{System: strp(SystemBenefitType), Code: &code}}, Text: &text}
}

func proofExtension(p *Proof) *r4.Extension {
	if p == nil || p.ProofData == "" {
		return nil
	}
	ext := r4.Extension{Url: ExtDecisionProof}
	sub := func(url, v string) {
		ext.Extension = append(ext.Extension, r4.Extension{Url: url, ValueString: strp(v)})
	}
	sub("proof", p.ProofData)
	for _, in := range p.PublicInputs {
		sub("public-input", in)
	}
	if p.BlockchainTx != "" {
		sub("transaction", p.BlockchainTx)
	}
	if len(p.Statement) > 0 {
		sub("statement", string(p.Statement))
	}
	if p.Issuer != "" {
		sub("issuer", p.Issuer)
	}
	return &ext
}

func identifier(system, value string) *r4.Identifier {
	return &r4.Identifier{System: strp(system), Value: strp(value)}
}

func strp(s string) *string { return &s }
