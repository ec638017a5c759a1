package fhir

import (
	"fmt"
	"time"

	r4 "github.com/samply/golang-fhir-models/fhir-models/fhir"
)

// Finding is one finding of a prescription validation (a v1 warning, or
// the plan's refusal).
type Finding struct {
	// Code is the v1 finding code: INTERACTION_FOUND, CONTRAINDICATED,
	// INELIGIBLE or UNIDENTIFIED (Drug then names the record's entry that
	// could not be identified).
	Code string
	// Severity: contraindicated, major, moderate or minor.
	Severity string
	// NDC (11 digits) and Drug name the prescribed medication; With names
	// the other drug of an interaction.
	NDC, Drug, With string
	// Mechanism and Management are the finding's text, as the JSON answer
	// words them (class-level for a contraindication).
	Mechanism, Management string
}

// Prescription is a prescription validation's findings.
type Prescription struct {
	PrescriptionID, PatientID, ValidationStatus string
	Created                                     time.Time
	Findings                                    []Finding
}

const systemActCode = "http://terminology.hl7.org/CodeSystem/v3-ActCode"

// DetectedIssues is p as an R4 Bundle (type collection) of DetectedIssue
// resources, one per finding, none when the prescription is clear. The
// Bundle's identifier is the prescription id; each issue carries the
// finding's v1 code (and v3 ActCode DRG for an interaction), its severity
// (contraindicated and major: high; moderate; minor: low), the
// implicated drugs, the detail and the management as mitigation.
func DetectedIssues(p Prescription) r4.Bundle {
	ts := p.Created.UTC().Format(time.RFC3339)
	b := r4.Bundle{
		Type:       r4.BundleTypeCollection,
		Identifier: identifier(SystemPrescriptionID, p.PrescriptionID),
		Timestamp:  &ts,
	}
	for i, f := range p.Findings {
		issue := detectedIssue(p, f, ts)
		raw, err := issue.MarshalJSON()
		if err != nil {
			continue // our own types always marshal
		}
		b.Entry = append(b.Entry, r4.BundleEntry{
			FullUrl:  strp(fmt.Sprintf("urn:healthagents:%s:issue:%d", p.PrescriptionID, i+1)),
			Resource: raw,
		})
	}
	return b
}

func detectedIssue(p Prescription, f Finding, ts string) r4.DetectedIssue {
	code := f.Code
	cc := r4.CodeableConcept{Coding: []r4.Coding{{System: strp(SystemFinding), Code: &code}}}
	if f.Code == "INTERACTION_FOUND" {
		drg := "DRG"
		cc.Coding = append(cc.Coding, r4.Coding{System: strp(systemActCode), Code: &drg, Display: strp("Drug Interaction Alert")})
	}
	sev := r4.DetectedIssueSeverityModerate
	switch f.Severity {
	case "contraindicated", "major":
		sev = r4.DetectedIssueSeverityHigh
	case "minor":
		sev = r4.DetectedIssueSeverityLow
	}
	issue := r4.DetectedIssue{
		Identifier:         []r4.Identifier{*identifier(SystemPrescriptionID, p.PrescriptionID)},
		Status:             r4.ObservationStatusFinal,
		Code:               &cc,
		Severity:           &sev,
		IdentifiedDateTime: &ts,
	}
	if p.PatientID != "" {
		issue.Patient = &r4.Reference{Identifier: identifier(SystemPatientID, p.PatientID)}
	}
	if f.Drug != "" || f.NDC != "" {
		ref := r4.Reference{Display: strp(f.Drug)}
		if f.NDC != "" {
			ref.Identifier = identifier(SystemNDC, f.NDC)
		}
		issue.Implicated = append(issue.Implicated, ref)
	}
	if f.With != "" {
		issue.Implicated = append(issue.Implicated, r4.Reference{Display: strp(f.With)})
	}
	if f.Mechanism != "" {
		issue.Detail = strp(f.Mechanism)
	}
	if f.Management != "" {
		issue.Mitigation = []r4.DetectedIssueMitigation{{Action: r4.CodeableConcept{Text: strp(f.Management)}}}
	}
	return issue
}
