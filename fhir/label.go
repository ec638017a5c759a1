package fhir

import (
	"strings"

	r4 "github.com/samply/golang-fhir-models/fhir-models/fhir"
)

// Label says which resource carries the federated task's label
// (record.Diagnosis): a Condition or an Observation coded System|Code
// (Code a prefix of the resource's code when Prefix is set, so "E11"
// matches E11.9).
//
//   - a matching Condition gives Positive, unless its verificationStatus
//     is refuted (then Negative);
//   - a matching Observation gives its value: valueBoolean, or a
//     valueString / valueCodeableConcept whose text, display or SNOMED CT
//     code (10828004 positive, 260385009 negative) says which;
//   - a Bundle with no matching resource gives Negative (a bulk export
//     lists the conditions a patient has, not those they lack).
//
// A positive finding wins over a negative one in the same Bundle.
type Label struct {
	System, Code       string
	Prefix             bool
	Positive, Negative string
}

// DefaultLabel is the label of the built-in diagnosis task: type 2
// diabetes, ICD-10-CM E11.*.
func DefaultLabel(positive, negative string) *Label {
	return &Label{System: SystemICD10CM, Code: "E11", Prefix: true, Positive: positive, Negative: negative}
}

const (
	snomedPositive = "10828004"
	snomedNegative = "260385009"
	systemSNOMED   = "http://snomed.info/sct"
)

type labelState struct{ positive, negative bool }

func (s *labelState) condition(present bool) {
	if present {
		s.positive = true
	} else {
		s.negative = true
	}
}

func (s *labelState) observation(positive bool) { s.condition(positive) }

func (m *mapper) matchLabel(cc *r4.CodeableConcept) bool {
	l := m.opts.Label
	if l == nil || cc == nil {
		return false
	}
	for _, code := range codeIn(cc, l.System) {
		if code == l.Code || (l.Prefix && strings.HasPrefix(code, l.Code)) {
			return true
		}
	}
	return false
}

func (m *mapper) labelValue(path string, o *r4.Observation) (bool, error) {
	l := m.opts.Label
	if o.ValueBoolean != nil {
		return *o.ValueBoolean, nil
	}
	var words []string
	if o.ValueString != nil {
		words = append(words, *o.ValueString)
	}
	if cc := o.ValueCodeableConcept; cc != nil {
		if hasCode(*cc, systemSNOMED, snomedPositive) {
			return true, nil
		}
		if hasCode(*cc, systemSNOMED, snomedNegative) {
			return false, nil
		}
		if cc.Text != nil {
			words = append(words, *cc.Text)
		}
		for _, c := range cc.Coding {
			if c.Display != nil {
				words = append(words, *c.Display)
			}
			if c.Code != nil {
				words = append(words, *c.Code)
			}
		}
	}
	for _, w := range words {
		w = strings.TrimSpace(w)
		switch {
		case strings.EqualFold(w, l.Positive) || strings.EqualFold(w, "positive"):
			return true, nil
		case strings.EqualFold(w, l.Negative) || strings.EqualFold(w, "negative"):
			return false, nil
		}
	}
	return false, errAt(path+".value[x]", "the label Observation's value must be a boolean, or say %s or %s", l.Positive, l.Negative)
}

func (m *mapper) finishLabel() error {
	l := m.opts.Label
	if l == nil {
		return nil
	}
	if m.label.positive {
		m.rec.Diagnosis = l.Positive
	} else {
		m.rec.Diagnosis = l.Negative
	}
	return nil
}
