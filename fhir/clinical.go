package fhir

import (
	"slices"
	"strconv"
	"strings"

	r4 "github.com/samply/golang-fhir-models/fhir-models/fhir"
)

// Status code systems of the clinical resources.
const (
	systemConditionClinical    = "http://terminology.hl7.org/CodeSystem/condition-clinical"
	systemConditionVerStatus   = "http://terminology.hl7.org/CodeSystem/condition-ver-status"
	systemAllergyClinical      = "http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical"
	systemAllergyVerification  = "http://terminology.hl7.org/CodeSystem/allergyintolerance-verification"
	observationFeaturePrefixes = "loinc:"
)

// LOINCFeatures names the observations the record keys by name (the
// federated task's features); any other LOINC-coded numeric Observation
// is kept as "loinc:<code>".
var LOINCFeatures = map[string]string{
	"2339-0":  "glucose",      // Glucose [Mass/volume] in Blood
	"2345-7":  "glucose",      // Glucose [Mass/volume] in Serum or Plasma
	"15074-8": "glucose",      // Glucose [Moles/volume] in Blood (mmol/L, converted)
	"39156-5": "bmi",          // Body mass index (BMI) [Ratio]
	"8480-6":  "systolic_bp",  // Systolic blood pressure
	"8462-4":  "diastolic_bp", // Diastolic blood pressure
}

func (m *mapper) condition(path string, c *r4.Condition) error {
	if statusIs(c.VerificationStatus, systemConditionVerStatus, "entered-in-error") {
		return nil
	}
	if m.matchLabel(c.Code) {
		m.label.condition(!statusIs(c.VerificationStatus, systemConditionVerStatus, "refuted"))
	}
	if statusIs(c.VerificationStatus, systemConditionVerStatus, "refuted") ||
		statusIs(c.ClinicalStatus, systemConditionClinical, "inactive", "resolved", "remission") {
		return nil // not a condition the patient has now
	}
	codes := codeIn(c.Code, SystemICD10CM)
	if len(codes) == 0 {
		return errAt(path+".code", "no ICD-10-CM coding (system %s): the contraindication rules are keyed by ICD-10-CM", SystemICD10CM)
	}
	for _, code := range codes {
		m.rec.Conditions = appendNew(m.rec.Conditions, code)
	}
	return nil
}

func (m *mapper) allergy(path string, a *r4.AllergyIntolerance) error {
	if statusIs(a.VerificationStatus, systemAllergyVerification, "refuted", "entered-in-error") ||
		statusIs(a.ClinicalStatus, systemAllergyClinical, "inactive", "resolved") {
		return nil
	}
	if a.Code == nil {
		return errAt(path+".code", "missing (the substance the patient is allergic to)")
	}
	name := ""
	if a.Code.Text != nil {
		name = strings.TrimSpace(*a.Code.Text)
	}
	for _, c := range a.Code.Coding {
		if name == "" && c.Display != nil {
			name = strings.TrimSpace(*c.Display)
		}
	}
	if codes := codeIn(a.Code, SystemRxNorm); name == "" && len(codes) > 0 {
		name = codes[0] // an RxNorm-coded drug allergy without a name
	}
	if name == "" {
		return errAt(path+".code.text", "missing (the allergen's name, e.g. penicillin, or an RxNorm coding; the rules match allergens by name)")
	}
	name = strings.ToLower(name)
	// A food or environment allergy names no drug: say so, so the
	// prescription agent does not ask for review of an allergen it does not
	// list (docs/decisions/fhir.md).
	if cat := nonDrugCategory(a.Category); cat != "" {
		name = cat + ": " + name
	}
	if !slices.Contains(m.rec.Allergies, name) {
		m.rec.Allergies = append(m.rec.Allergies, name)
		m.sources.Allergies = append(m.sources.Allergies, path)
	}
	return nil
}

// nonDrugCategory is "food" or "environment" when every category of an
// allergy is one of those, else "".
func nonDrugCategory(cats []r4.AllergyIntoleranceCategory) string {
	out := ""
	for _, c := range cats {
		switch c {
		case r4.AllergyIntoleranceCategoryFood, r4.AllergyIntoleranceCategoryEnvironment:
			if out == "" {
				out = c.Code()
			}
		default:
			return ""
		}
	}
	return out
}

func (m *mapper) observation(path string, o *r4.Observation) error {
	switch o.Status {
	case r4.ObservationStatusCancelled, r4.ObservationStatusEnteredInError, r4.ObservationStatusRegistered:
		return nil
	}
	if m.matchLabel(&o.Code) {
		pos, err := m.labelValue(path, o)
		if err != nil {
			return err
		}
		m.label.observation(pos)
		return nil
	}
	when := ""
	if o.EffectiveDateTime != nil {
		when = *o.EffectiveDateTime
	} else if o.EffectivePeriod != nil && o.EffectivePeriod.Start != nil {
		when = *o.EffectivePeriod.Start
	}
	if err := m.observe(path+".valueQuantity", &o.Code, o.ValueQuantity, o.ValueInteger, when); err != nil {
		return err
	}
	for k, c := range o.Component {
		el := path + ".component[" + strconv.Itoa(k) + "].valueQuantity"
		if err := m.observe(el, &c.Code, c.ValueQuantity, c.ValueInteger, when); err != nil {
			return err
		}
	}
	return nil
}

// observe records a numeric LOINC-coded value; the latest (by effective
// time) wins when a code repeats.
func (m *mapper) observe(el string, code *r4.CodeableConcept, q *r4.Quantity, i *int, when string) error {
	codes := codeIn(code, SystemLOINC)
	if len(codes) == 0 {
		return nil
	}
	var v float64
	switch {
	case q != nil && q.Value != nil:
		f, err := strconv.ParseFloat(q.Value.String(), 64)
		if err != nil {
			return errAt(el+".value", "must be a number")
		}
		v = f
		if unit := firstString(q.Code, q.Unit); unit != "" {
			conv, ok := convertUnit(codes[0], unit, v)
			if !ok {
				return errAt(el+".code", "a unit this service does not convert (glucose in mg/dL or mmol/L, BMI in kg/m2, blood pressure in mm[Hg])")
			}
			v = conv
		}
	case i != nil:
		v = float64(*i)
	default:
		return nil // a coded or absent value: nothing numeric to record
	}
	name, ok := LOINCFeatures[codes[0]]
	if !ok {
		name = observationFeaturePrefixes + codes[0]
	}
	if m.rec.Observations == nil {
		m.rec.Observations = map[string]float64{}
		m.observedAt = map[string]string{}
	}
	if prev, seen := m.observedAt[name]; seen && prev > when {
		return nil
	}
	m.rec.Observations[name] = v
	m.observedAt[name] = when
	return nil
}

// convertUnit brings a value of a known LOINC code to the unit the task's
// features use; other codes keep their value whatever the unit.
func convertUnit(loinc, unit string, v float64) (float64, bool) {
	u := strings.ToLower(strings.ReplaceAll(unit, " ", ""))
	switch LOINCFeatures[loinc] {
	case "glucose":
		switch u {
		case "mg/dl":
			return v, true
		case "mmol/l":
			return v * 18.016, true
		}
		return 0, false
	case "bmi":
		return v, u == "kg/m2" || u == "kg/m^2"
	case "systolic_bp", "diastolic_bp":
		return v, u == "mm[hg]" || u == "mmhg"
	}
	return v, true
}

// statusIs reports whether cc has a coding of system with one of codes.
func statusIs(cc *r4.CodeableConcept, system string, codes ...string) bool {
	if cc == nil {
		return false
	}
	for _, c := range codes {
		if hasCode(*cc, system, c) {
			return true
		}
	}
	return false
}

func appendNew(list []string, v string) []string {
	if slices.Contains(list, v) {
		return list
	}
	return append(list, v)
}
