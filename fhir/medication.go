package fhir

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	r4 "github.com/samply/golang-fhir-models/fhir-models/fhir"
)

// Current medications: MedicationStatement and MedicationRequest, their
// medication as a CodeableConcept or a reference to a Medication (in the
// Bundle or contained), read with the drug catalogue when the options give
// one (docs/decisions/fhir.md, "Medications").

// MedicationIdentifier reads the names of one medication (RxNorm and NDC
// codes, RxNorm names, free text) in terms of the drug catalogue: the
// RxCUIs of the catalogue ingredients they name, and whether the
// medication is identified completely. *prescription.Agent is one.
type MedicationIdentifier interface {
	Identify(names ...string) (rxcuis []string, identified bool)
}

var (
	medicationStatementActive = []string{"active", "intended", "on-hold"}
	medicationRequestActive   = []string{"active", "on-hold"}
)

// pendingMed is a medication use whose medicationReference names a
// Medication entry of the Bundle, resolved once every entry is read.
type pendingMed struct {
	path, ref string
}

// drug is what a medication use names: the Medication's code (or the
// medicationCodeableConcept) and its ingredients.
type drug struct {
	code        *r4.CodeableConcept
	ingredients []r4.MedicationIngredient
}

func (m *mapper) medication(path, status string, active []string, cc *r4.CodeableConcept, ref *r4.Reference, raw []byte) error {
	if status == "" {
		return errAt(path+".status", "missing")
	}
	if !slices.Contains(active, status) {
		return nil // completed, stopped, cancelled, ...: not a current medication
	}
	switch {
	case len(cc.Coding) > 0 || textOf(cc) != "":
		return m.addMedication(path, path+".medicationCodeableConcept", drug{code: cc})
	case ref.Reference == nil:
		return errAt(path+".medication[x]", "missing: a medicationCodeableConcept with a coding or text, or a medicationReference to a Medication")
	case strings.HasPrefix(*ref.Reference, "#"):
		md, err := containedMedication(path, raw, (*ref.Reference)[1:])
		if err != nil {
			return err
		}
		return m.addMedication(path, path+".contained(Medication)", md)
	}
	m.pendingMeds = append(m.pendingMeds, pendingMed{path: path, ref: *ref.Reference})
	return nil
}

// medicationEntry keeps a Medication entry for the references to it.
func (m *mapper) medicationEntry(i int, md *r4.Medication) {
	d := drug{code: md.Code, ingredients: md.Ingredient}
	if md.Id != nil {
		m.medications["Medication/"+*md.Id] = d
	}
	m.medications["#entry"+strconv.Itoa(i)] = d
}

// containedMedication is the contained Medication id.
func containedMedication(path string, raw []byte, id string) (drug, error) {
	var res struct {
		Contained []json.RawMessage `json:"contained"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return drug{}, errAt(path+".contained", "must be an array of resources")
	}
	for _, c := range res.Contained {
		var md r4.Medication
		if resourceType(c) != "Medication" || json.Unmarshal(c, &md) != nil || md.Id == nil || *md.Id != id {
			continue
		}
		return drug{code: md.Code, ingredients: md.Ingredient}, nil
	}
	return drug{}, errAt(path+".medicationReference", "refers to a contained Medication the resource does not hold")
}

// resolveMedications maps the medication uses that refer to a Medication
// entry ("Medication/<id>" or the entry's fullUrl). A reference that
// resolves to nothing is refused: the medication would be skipped.
func (m *mapper) resolveMedications() error {
	for _, p := range m.pendingMeds {
		d, ok := m.medications[p.ref]
		if !ok {
			if i, found := m.fullURLs[p.ref]; found {
				d, ok = m.medications["#entry"+strconv.Itoa(i)]
			}
		}
		if !ok {
			return errAt(p.path+".medicationReference", "refers to a Medication the Bundle does not hold")
		}
		if err := m.addMedication(p.path, p.path+".medicationReference(Medication)", d); err != nil {
			return err
		}
	}
	return nil
}

// addMedication records the medication d that the resource at path uses
// (el names the element d came from). With a MedicationIdentifier, every
// coding and the text of the code and of each active ingredient are read:
// the record gets the RxCUI of every catalogue ingredient found, and, when
// the medication is not identified completely (an ingredient, or the code
// itself, not in the catalogue), its name as sent, which the prescription
// agent then reports as unidentified. Without one, the record gets the
// first RxNorm code, else NDC code, else the text or a display.
func (m *mapper) addMedication(path, el string, d drug) error {
	label := medicationLabel(d)
	if label == "" {
		return errAt(el+".code", "missing: the Medication has no code coding, text or ingredient to identify it by")
	}
	if m.opts.Drugs == nil {
		m.addMed(path, firstName(d.code, label))
		return nil
	}
	var found []string
	codeOK := false
	if d.code != nil && len(names(d.code)) > 0 {
		found, codeOK = m.opts.Drugs.Identify(names(d.code)...)
	}
	ingredientsOK, active, unknown := true, 0, ""
	for _, ing := range d.ingredients {
		if ing.IsActive != nil && !*ing.IsActive {
			continue
		}
		alts := names(&ing.ItemCodeableConcept)
		if ing.ItemReference.Display != nil {
			alts = append(alts, *ing.ItemReference.Display)
		}
		rx, ok := m.opts.Drugs.Identify(alts...)
		found = append(found, rx...)
		ingredientsOK, active = ingredientsOK && ok, active+1
		if !ok && unknown == "" {
			unknown = medicationLabel(drug{ingredients: []r4.MedicationIngredient{ing}})
		}
	}
	for _, rx := range found {
		m.addMed(path, rx)
	}
	// Identified: every active ingredient is, and the code is or the
	// ingredients say what the medication holds. Else the record gets a
	// name the agent will not identify either, so that it is reported,
	// never dropped: the medication's own (one of the names that just
	// failed), unless that name alone reads as identified (a text naming
	// one ingredient of two) — then the ingredient that failed.
	if !ingredientsOK || (!codeOK && active == 0) {
		if _, ok := m.opts.Drugs.Identify(label); ok && unknown != "" {
			label = unknown
		}
		m.addMed(path, label)
	}
	return nil
}

// addMed appends one record medication, with the resource it came from.
func (m *mapper) addMed(path, med string) {
	if !slices.Contains(m.rec.Medications, med) {
		m.rec.Medications = append(m.rec.Medications, med)
		m.sources.Medications = append(m.sources.Medications, path)
	}
}

// names are a CodeableConcept's names for the catalogue: RxNorm and NDC
// codes, every coding's display, and the text. Codes of other systems are
// not passed on: a SNOMED CT code read as an RxCUI would name another drug.
func names(cc *r4.CodeableConcept) []string {
	var out []string
	for _, c := range cc.Coding {
		if c.Code != nil && c.System != nil && (*c.System == SystemRxNorm || *c.System == SystemNDC) {
			out = append(out, strings.TrimSpace(*c.Code))
		}
		if c.Display != nil && strings.TrimSpace(*c.Display) != "" {
			out = append(out, strings.TrimSpace(*c.Display))
		}
	}
	if t := textOf(cc); t != "" {
		out = append(out, t)
	}
	return out
}

// medicationLabel is how a warning names a medication: the text, else a
// coding's display, else its code (as "system|code", FHIR's token form,
// unless RxNorm or NDC, so that it is never read as an RxCUI or a name),
// else an ingredient's.
func medicationLabel(d drug) string {
	if d.code != nil {
		if t := textOf(d.code); t != "" {
			return t
		}
		for _, c := range d.code.Coding {
			if c.Display != nil && strings.TrimSpace(*c.Display) != "" {
				return strings.TrimSpace(*c.Display)
			}
		}
		for _, c := range d.code.Coding {
			if c.Code == nil || strings.TrimSpace(*c.Code) == "" {
				continue
			}
			code := strings.TrimSpace(*c.Code)
			if c.System != nil && *c.System != SystemRxNorm && *c.System != SystemNDC {
				code = *c.System + "|" + code
			}
			return code
		}
	}
	for _, ing := range d.ingredients {
		if l := medicationLabel(drug{code: &ing.ItemCodeableConcept}); l != "" {
			return l
		}
		if ing.ItemReference.Display != nil && strings.TrimSpace(*ing.ItemReference.Display) != "" {
			return strings.TrimSpace(*ing.ItemReference.Display)
		}
	}
	return ""
}

// firstName is the one name kept without a catalogue: the first RxNorm
// code, else NDC code, else the label.
func firstName(cc *r4.CodeableConcept, label string) string {
	for _, system := range []string{SystemRxNorm, SystemNDC} {
		if codes := codeIn(cc, system); len(codes) > 0 {
			return codes[0]
		}
	}
	return label
}

func textOf(cc *r4.CodeableConcept) string {
	if cc == nil || cc.Text == nil {
		return ""
	}
	return strings.TrimSpace(*cc.Text)
}
