package prescription

import (
	"slices"
	"strings"

	"github.com/healthagents/healthagents/record"
)

// Rules is the reference data's rules with every selector resolved to
// RxCUIs: the public interaction and contraindication table a circuit
// compiles (package zkp proves the checks of [Agent.Check] from it).
type Rules struct {
	Interactions      []InteractionRule
	Contraindications []ContraindicationRule
	// Triggers is every distinct allergen and ICD-10 prefix of the
	// contraindication rules, in rule order, each listed once.
	Triggers []Trigger
}

// InteractionRule is an interaction rule: a drug of A with a different
// drug of B (either way round) interacts with Severity.
type InteractionRule struct {
	ID       string
	A, B     []string // RxCUIs
	Severity Severity
}

// ContraindicationRule is a contraindication rule: a patient entry that
// matches one of Triggers (indexes into Rules.Triggers) argues against
// each drug of Drugs with Severity.
type ContraindicationRule struct {
	ID       string
	Triggers []int
	Drugs    []string // RxCUIs
	Severity Severity
}

// Trigger is an allergen (Kind KindAllergy, Text in the comparison form:
// lower case, single spaces) or an ICD-10 code prefix (KindCondition, Text
// upper case without the dot).
type Trigger struct {
	Kind string
	Text string
}

// String is "allergy:penicillin" or "condition:I21".
func (t Trigger) String() string { return t.Kind + ":" + t.Text }

// Rules returns the resolved rules. Besides them, a recorded allergy to a
// drug itself (its RxCUI, name or an alias) contraindicates it
// (SeverityContraindicated): [Facts.AllergyDrugs].
func (a *Agent) Rules() Rules {
	k := a.k
	var out Rules
	rx := func(idx []int) []string {
		s := make([]string, len(idx))
		for n, i := range idx {
			s[n] = k.drugs[i].RxCUI
		}
		return s
	}
	for n, r := range k.interactions {
		out.Interactions = append(out.Interactions, InteractionRule{ID: r.ID, A: rx(k.sides[n][0]), B: rx(k.sides[n][1]), Severity: r.Severity})
	}
	index := map[Trigger]int{}
	for n := range k.contra {
		r := &k.contra[n]
		cr := ContraindicationRule{ID: r.ID, Drugs: rx(k.contraDrugs[n]), Severity: r.Severity}
		for _, t := range r.norm {
			tr := Trigger{Kind: r.Kind, Text: t}
			i, ok := index[tr]
			if !ok {
				i = len(out.Triggers)
				index[tr] = i
				out.Triggers = append(out.Triggers, tr)
			}
			if !slices.Contains(cr.Triggers, i) {
				cr.Triggers = append(cr.Triggers, i)
			}
		}
		out.Contraindications = append(out.Contraindications, cr)
	}
	return out
}

// Facts is what the checks of [Agent.Check] read from a patient's record,
// in terms of [Rules]. It is medical data: never log it.
type Facts struct {
	// Medications are the catalogue drugs the current medications name
	// (RxCUIs, each once, in the record's order).
	Medications []string
	// Triggers are the indexes into Rules.Triggers that the record's
	// allergies and conditions match, ascending.
	Triggers []int
	// AllergyDrugs are the catalogue drugs (RxCUIs, each once) that a
	// recorded allergy names itself.
	AllergyDrugs []string
	// Unidentified are the current medications and allergies that could
	// not be identified (Decision.Unidentified): with any, no drug is
	// valid.
	Unidentified []Unidentified
}

// Facts returns rec's facts for the checks, with current the extra current
// medications as in [Agent.Check]. Check's findings for a candidate are a
// function of the candidates and these facts alone: an interaction rule
// fires when the candidate is on one side and another drug of the
// candidates and Medications is on the other; a contraindication rule
// fires when the candidate is one of its drugs and one of its triggers is
// in Triggers; a drug in AllergyDrugs is contraindicated; and a decision is
// valid only when nothing blocks and Unidentified is empty.
func (a *Agent) Facts(rec *record.Record, current []string) Facts {
	var f Facts
	if rec == nil {
		return f
	}
	view := a.read(rec, current)
	for _, i := range view.meds {
		f.Medications = append(f.Medications, a.k.drugs[i].RxCUI)
	}
	f.Unidentified = view.unidentified
	rules := a.Rules()
	matched := map[int]bool{}
	var allergy drugSet
	for _, al := range view.allergies {
		for i, t := range rules.Triggers {
			if t.Kind == KindAllergy && t.Text == al.norm {
				matched[i] = true
			}
		}
		allergy = allergy.add(al.drugs...)
	}
	for _, i := range allergy {
		f.AllergyDrugs = append(f.AllergyDrugs, a.k.drugs[i].RxCUI)
	}
	for _, raw := range rec.Conditions {
		code := normICD(raw)
		if code == "" {
			continue
		}
		for i, t := range rules.Triggers {
			if t.Kind == KindCondition && strings.HasPrefix(code, t.Text) {
				matched[i] = true
			}
		}
	}
	for i := range rules.Triggers {
		if matched[i] {
			f.Triggers = append(f.Triggers, i)
		}
	}
	return f
}
