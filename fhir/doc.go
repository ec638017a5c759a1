// Package fhir speaks HL7 FHIR R4 at the service's edges: it maps a FHIR R4
// Bundle (JSON) holding Patient, Coverage, Condition, AllergyIntolerance,
// MedicationStatement, MedicationRequest and Observation resources onto our
// plaintext [record.Record], reads FHIR bulk-export NDJSON (one Bundle per
// patient) for federated training, and writes the service's answers as R4
// resources: a CoverageEligibilityResponse for an eligibility decision and
// DetectedIssue resources for prescription findings.
//
// Input the mapping cannot read — a resourceType R4 does not define, a
// string with a control character or invalid UTF-8, a medication reference
// that resolves to nothing — is refused with an [*Error] naming the entry,
// never skipped. With [Options].Drugs a medication is read from every
// coding, its text and its ingredients (see [MedicationIdentifier]).
//
// The resource types are github.com/samply/golang-fhir-models (structs
// generated from the R4 StructureDefinitions); docs/decisions/fhir.md says
// why, lists the element mapping and the extension URLs this package
// defines. Errors name the resource and the element by its FHIR path, e.g.
// "Bundle.entry[2].resource(Coverage).period.start: missing", and never
// repeat a value from the Bundle.
//
// The package is a domain package: no net/http, no storage.
package fhir
