package fhir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/healthagents/healthagents/record"
	r4 "github.com/samply/golang-fhir-models/fhir-models/fhir"
)

// MaxSize is the largest Bundle [Parse] reads, in bytes. A sealed Bundle
// of this size still fits cipher.MaxEncryptedSize.
const MaxSize = 512 << 10

// Code systems this package reads and writes.
const (
	SystemICD10CM = "http://hl7.org/fhir/sid/icd-10-cm"
	SystemRxNorm  = "http://www.nlm.nih.gov/research/umls/rxnorm"
	SystemLOINC   = "http://loinc.org"
	SystemNDC     = "http://hl7.org/fhir/sid/ndc"
	SystemNPI     = "http://hl7.org/fhir/sid/us-npi"
	// SystemCoverageClass is the code system of Coverage.class.type ("plan").
	SystemCoverageClass = "http://terminology.hl7.org/CodeSystem/coverage-class"
	// SystemCopayType is the code system of Coverage.costToBeneficiary.type
	// ("copay", "deductible").
	SystemCopayType = "http://terminology.hl7.org/CodeSystem/coverage-copay-type"
)

// Options tunes the mapping. The zero value maps a Bundle for the agents
// (no label), keeping one code per medication.
type Options struct {
	// Label, when set, names the Condition or Observation that carries the
	// federated task's label (record.Diagnosis); see [Label].
	Label *Label
	// Drugs, when set, identifies each medication from every coding, the
	// text and the ingredients (see [MedicationIdentifier]); the service
	// maps with its drug catalogue.
	Drugs MedicationIdentifier
}

// Sources says which resource of the Bundle each of a record's
// medications and allergies came from, by FHIR path
// ("Bundle.entry[3].resource(MedicationStatement)"), in the record's
// order; Coverage is the Coverage mapped ("" for none).
type Sources struct {
	Medications []string
	Allergies   []string
	Coverage    string
}

// IsBundle reports whether b is a JSON object whose resourceType is
// "Bundle". It is how the service tells a FHIR Bundle from our own record
// inside an envelope.
func IsBundle(b []byte) bool {
	return resourceType(b) == "Bundle"
}

// resourceType is the top-level resourceType of the JSON object b, or "".
func resourceType(b []byte) string {
	var probe struct {
		ResourceType string `json:"resourceType"`
	}
	if json.Unmarshal(b, &probe) != nil {
		return ""
	}
	return probe.ResourceType
}

// ParseRecord parses plaintext in either accepted format: a FHIR R4 Bundle
// (recognised by its resourceType) or our own record JSON
// (record.Parse). Every error of a Bundle is an *Error; every error of a
// record wraps record.ErrMalformed.
func ParseRecord(plaintext []byte) (*record.Record, error) {
	return ParseRecordWith(plaintext, Options{})
}

// ParseRecordWith is ParseRecord mapping a Bundle with opts.
func ParseRecordWith(plaintext []byte, opts Options) (*record.Record, error) {
	if IsFHIR(plaintext) {
		rt := resourceType(plaintext)
		if rt != "Bundle" {
			return nil, errAt("resourceType", "must be Bundle (a FHIR R4 Bundle of the patient's resources)")
		}
		return Parse(plaintext, opts)
	}
	return record.Parse(plaintext)
}

// IsFHIR reports whether plaintext is a FHIR resource (a JSON object with
// a resourceType) rather than our own record JSON.
func IsFHIR(plaintext []byte) bool {
	return bytes.Contains(plaintext, []byte(`"resourceType"`)) && resourceType(plaintext) != ""
}

// Parse maps a FHIR R4 Bundle onto a record (docs/decisions/fhir.md, "Records
// in"). The result has passed record.Validate.
func Parse(b []byte, opts Options) (*record.Record, error) {
	rec, _, err := Map(b, opts)
	return rec, err
}

// Map is Parse, also saying where each medication, allergy and the
// coverage came from (for notes such as `healthagents seal --fhir`'s).
func Map(b []byte, opts Options) (*record.Record, Sources, error) {
	rec, m, err := mapBundle(b, opts)
	if err != nil {
		return nil, Sources{}, err
	}
	return rec, m.sources, nil
}

func mapBundle(b []byte, opts Options) (*record.Record, *mapper, error) {
	if len(b) > MaxSize {
		return nil, nil, errAt("Bundle", "is larger than %d bytes", MaxSize)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	var bundle r4.Bundle
	if err := dec.Decode(&bundle); err != nil {
		return nil, nil, decodeError("Bundle", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, errAt("Bundle", "must be a single JSON object")
	}
	if rt := resourceType(b); rt != "Bundle" {
		return nil, nil, errAt("Bundle.resourceType", "must be Bundle")
	}
	// Strings first: the decoder turns invalid UTF-8 into U+FFFD and keeps
	// control characters, which would then be read as if they were text.
	for i, e := range bundle.Entry {
		if err := checkText(e.Resource); err != nil {
			return nil, nil, errAt(entryPath(i, entryType(e.Resource)), "%s", err)
		}
	}
	if err := checkText(b); err != nil {
		return nil, nil, errAt("Bundle", "%s (outside the entries' resources)", err)
	}
	m := &mapper{opts: opts, rec: &record.Record{Schema: record.Schema}, medications: map[string]drug{}, fullURLs: map[string]int{}}
	for i, e := range bundle.Entry {
		if err := m.entry(i, e.Resource); err != nil {
			return nil, nil, err
		}
		if e.FullUrl != nil && resourceType(e.Resource) == "Medication" {
			m.fullURLs[*e.FullUrl] = i
		}
	}
	rec, err := m.finish()
	return rec, m, err
}

// mapper collects one Bundle's resources into a record.
type mapper struct {
	opts        Options
	rec         *record.Record
	patientAt   int // entry index of the Patient, -1 before one is seen
	patientSeen bool
	coverages   []coverageAt
	label       labelState
	observedAt  map[string]string // effective time of each observation kept
	medications map[string]drug   // Medication entries by "Medication/<id>" and entry index
	fullURLs    map[string]int    // entry index of each Medication by its fullUrl
	pendingMeds []pendingMed      // medication uses that refer to a Medication entry
	sources     Sources
}

type coverageAt struct {
	index int
	cov   r4.Coverage
}

func (m *mapper) entry(i int, raw json.RawMessage) error {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return errAt(fmt.Sprintf("Bundle.entry[%d].resource", i), "missing")
	}
	rt := resourceType(raw)
	if rt == "" {
		return errAt(fmt.Sprintf("Bundle.entry[%d].resource.resourceType", i), "missing")
	}
	path := entryPath(i, rt)
	switch rt {
	case "Patient":
		var p r4.Patient
		if err := json.Unmarshal(raw, &p); err != nil {
			return decodeError(path, err)
		}
		return m.patient(i, path, &p)
	case "Coverage":
		if err := checkCode(raw, path, "status"); err != nil {
			return err
		}
		var c r4.Coverage
		if err := json.Unmarshal(raw, &c); err != nil {
			return decodeError(path, err)
		}
		m.coverages = append(m.coverages, coverageAt{i, c})
		return nil
	case "Condition":
		var c r4.Condition
		if err := json.Unmarshal(raw, &c); err != nil {
			return decodeError(path, err)
		}
		return m.condition(path, &c)
	case "AllergyIntolerance":
		var a r4.AllergyIntolerance
		if err := json.Unmarshal(raw, &a); err != nil {
			return decodeError(path, err)
		}
		return m.allergy(path, &a)
	case "MedicationStatement":
		var s r4.MedicationStatement
		if err := json.Unmarshal(raw, &s); err != nil {
			return decodeError(path, err)
		}
		return m.medication(path, s.Status, medicationStatementActive, &s.MedicationCodeableConcept, &s.MedicationReference, raw)
	case "MedicationRequest":
		var r r4.MedicationRequest
		if err := json.Unmarshal(raw, &r); err != nil {
			return decodeError(path, err)
		}
		return m.medication(path, r.Status, medicationRequestActive, &r.MedicationCodeableConcept, &r.MedicationReference, raw)
	case "Medication":
		var md r4.Medication
		if err := json.Unmarshal(raw, &md); err != nil {
			return decodeError(path, err)
		}
		m.medicationEntry(i, &md)
		return nil
	case "Observation":
		if err := checkCode(raw, path, "status"); err != nil {
			return err
		}
		var o r4.Observation
		if err := json.Unmarshal(raw, &o); err != nil {
			return decodeError(path, err)
		}
		return m.observation(path, &o)
	case "Bundle":
		// Its entries would be skipped: a medication among them unseen.
		return errAt(path, "a Bundle inside the Bundle is not read; send one Bundle of the patient's resources")
	default:
		// Other R4 resources (Organization, Practitioner, Encounter, ...)
		// carry nothing the record holds. A type R4 does not define is
		// refused: it may be a misspelt resource the record needs
		// ("Coverages"), and skipping it would decide on partial data.
		if !isR4Resource(rt) {
			return errAt(path, "resourceType is not a FHIR R4 resource type (http://hl7.org/fhir/R4/resourcelist.html)")
		}
		return nil
	}
}

func (m *mapper) patient(i int, path string, p *r4.Patient) error {
	if m.patientSeen {
		return errAt(path, "a second Patient (Bundle.entry[%d] is the first); the Bundle must hold one patient's resources", m.patientAt)
	}
	m.patientSeen, m.patientAt = true, i
	switch {
	case p.Id != nil && strings.TrimSpace(*p.Id) != "":
		m.rec.PatientID = *p.Id
	case len(p.Identifier) > 0 && p.Identifier[0].Value != nil && strings.TrimSpace(*p.Identifier[0].Value) != "":
		m.rec.PatientID = *p.Identifier[0].Value
	default:
		return errAt(path+".id", "missing (the patient's de-identified code: Patient.id, or else Patient.identifier[0].value)")
	}
	if p.BirthDate != nil {
		if _, err := time.Parse(record.DateLayout, *p.BirthDate); err != nil {
			return errAt(path+".birthDate", "must be a full date YYYY-MM-DD")
		}
		m.rec.BirthDate = *p.BirthDate
	}
	if p.Gender != nil {
		m.rec.Sex = p.Gender.Code()
	}
	m.rec.Name = patientName(p.Name)
	return nil
}

// patientName is the record's name from Patient.name: the official name,
// else the first, when it has a family and a given name; else none.
func patientName(names []r4.HumanName) *record.Name {
	pick := -1
	for i, n := range names {
		if n.Use != nil && *n.Use == r4.NameUseOfficial {
			pick = i
			break
		}
		if pick < 0 {
			pick = i
		}
	}
	if pick < 0 {
		return nil
	}
	n := names[pick]
	if n.Family == nil || strings.TrimSpace(*n.Family) == "" || len(n.Given) == 0 || strings.TrimSpace(n.Given[0]) == "" {
		return nil
	}
	return &record.Name{Family: *n.Family, Given: n.Given[0]}
}

func (m *mapper) finish() (*record.Record, error) {
	if !m.patientSeen {
		return nil, errAt("Bundle.entry", "no Patient resource (the Bundle must hold exactly one)")
	}
	if err := m.resolveMedications(); err != nil {
		return nil, err
	}
	if err := m.coverage(); err != nil {
		return nil, err
	}
	if err := m.finishLabel(); err != nil {
		return nil, err
	}
	if len(m.rec.Observations) == 0 {
		m.rec.Observations = nil
	}
	if err := m.rec.Validate(); err != nil {
		var fe *record.FieldError
		if errors.As(err, &fe) {
			return nil, errAt("Bundle", "maps to a record whose field '%s' %s", fe.Field, fe.Reason)
		}
		return nil, errAt("Bundle", "does not map to a valid record")
	}
	return m.rec, nil
}

// checkCode checks that the top-level code element name of raw, when
// present, is a JSON string: the generated types reject an unknown code
// with an error that repeats it, so codes are checked here first and
// named by path.
func checkCode(raw json.RawMessage, path, name string) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return errAt(path, "is not a JSON object")
	}
	v, ok := top[name]
	if !ok {
		return errAt(path+"."+name, "missing")
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return errAt(path+"."+name, "must be a string code")
	}
	return nil
}

// decodeError names the element a decoding error is about, without its
// value.
func decodeError(path string, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		el := path
		if te.Field != "" {
			el += "." + te.Field
		}
		return errAt(el, "must be %s", jsonKind(te.Type.Kind().String()))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errAt(path, "is not valid JSON")
	}
	// The generated code types reject a code outside their value set.
	return errAt(path, "holds a code outside its R4 value set (a status, gender or other coded element)")
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "float64", "int", "int64":
		return "a number"
	case "slice":
		return "an array"
	default:
		return "an object"
	}
}
