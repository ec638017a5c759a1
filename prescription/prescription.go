package prescription

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/healthagents/healthagents/record"
)

// Drug is one ingredient-level RxNorm concept of the catalogue.
type Drug struct {
	RxCUI string `json:"rxcui"`
	Name  string `json:"name"`  // RxNorm ingredient name, lower case ("warfarin")
	Class string `json:"class"` // therapeutic class, e.g. "anticoagulant", "nsaid", "ssri"
	// Groups are the pharmacological properties interaction rules refer to,
	// e.g. "strong_cyp3a4_inhibitor", "qt_prolonging".
	Groups []string `json:"groups,omitempty"`
	// Aliases are brand names and international names Lookup also accepts.
	Aliases []string `json:"aliases,omitempty"`
	// NDCs are example package codes, 11 digits (5-4-2) without hyphens. Most
	// drugs list none: see docs/decisions/prescription.md.
	NDCs      []string  `json:"ndcs,omitempty"`
	Formulary Formulary `json:"formulary"`
}

// Formulary is the drug's place on the (illustrative) built-in formulary.
type Formulary struct {
	Covered bool `json:"covered"`
	// Tier 1 generic, 2 preferred brand, 3 non-preferred, 4 specialty,
	// 5 reserved; 0 when not covered.
	Tier int `json:"tier"`
}

func (d Drug) clone() Drug {
	d.Groups = slices.Clone(d.Groups)
	d.Aliases = slices.Clone(d.Aliases)
	d.NDCs = slices.Clone(d.NDCs)
	return d
}

// Severity grades an interaction or contraindication.
type Severity string

// Severities, most severe first.
const (
	SeverityContraindicated Severity = "contraindicated"
	SeverityMajor           Severity = "major"
	SeverityModerate        Severity = "moderate"
	SeverityMinor           Severity = "minor"
)

// Rank orders severities: 4 contraindicated, 3 major, 2 moderate, 1 minor,
// 0 for anything else.
func (s Severity) Rank() int {
	switch s {
	case SeverityContraindicated:
		return 4
	case SeverityMajor:
		return 3
	case SeverityModerate:
		return 2
	case SeverityMinor:
		return 1
	}
	return 0
}

// Blocks reports whether the severity makes a prescription invalid
// (major or contraindicated).
func (s Severity) Blocks() bool { return s.Rank() >= 3 }

// Interaction is a drug-drug interaction found for a candidate drug.
type Interaction struct {
	With Drug `json:"with"` // the other drug
	// BetweenCandidates is true when With is another drug of the same
	// [Agent.Check] call rather than a current medication.
	BetweenCandidates bool     `json:"between_candidates,omitempty"`
	Severity          Severity `json:"severity"`
	Mechanism         string   `json:"mechanism"`
	Management        string   `json:"management"`
	Source            string   `json:"source"`
	RuleID            string   `json:"rule_id"`
}

// Contraindication is a patient allergy or condition that argues against a drug.
type Contraindication struct {
	Kind string `json:"kind"` // KindAllergy or KindCondition
	// Trigger is the patient's entry that matched: the allergen as recorded
	// (normalized to lower case) or the ICD-10 code (upper case). It is
	// medical data: never log it or put it in an error.
	Trigger    string   `json:"trigger"`
	Severity   Severity `json:"severity"`
	Reason     string   `json:"reason"`
	Management string   `json:"management"`
	Source     string   `json:"source"`
	RuleID     string   `json:"rule_id"`
}

// Decision is the outcome of validating one drug for one patient.
//
// Interactions and Contraindications are ordered most severe first. Apart
// from Reason, the fields describe the patient's medications, allergies and
// conditions: they are medical data, for the caller to use, never to log.
type Decision struct {
	Drug                Drug               `json:"drug"`
	Valid               bool               `json:"valid"`
	InteractionsChecked bool               `json:"interactions_checked"`
	Interactions        []Interaction      `json:"interactions,omitempty"`
	Contraindications   []Contraindication `json:"contraindications,omitempty"`
	// Blocking is the most severe interaction, if it is major or
	// contraindicated; it makes the decision invalid.
	Blocking *Interaction `json:"blocking,omitempty"`
	// BlockingContraindication is the most severe contraindication, if it is
	// major or contraindicated; it makes the decision invalid.
	BlockingContraindication *Contraindication `json:"blocking_contraindication,omitempty"`
	// Reason is "" when valid. Otherwise "Drug interaction detected with
	// <name>" when an interaction blocks (it wins over a contraindication),
	// "Contraindication detected for <name of the drug checked>", or, when
	// nothing blocks but an entry is unidentified, ReasonUnidentified. It
	// names drugs only, never a medication, allergy or condition of the
	// record.
	Reason string `json:"reason,omitempty"`
	// Unidentified lists the patient's current medications and allergies
	// the agent could not identify (in record order, medications first).
	// What they are cannot be checked, so the decision is not valid even
	// without a finding: Reason is then ReasonUnidentified (a blocking
	// finding's reason wins). They are medical data.
	Unidentified []Unidentified `json:"unidentified,omitempty"`
}

// ReasonUnidentified is a Decision's Reason when nothing blocks it but an
// entry of the patient's record could not be identified. It names nothing
// from the record.
const ReasonUnidentified = "Review required: a current medication or allergy in the patient record could not be identified, so its interactions and contraindications were not checked"

// Blocked reports whether a finding (interaction or contraindication) is
// major or contraindicated, as opposed to a decision that is not valid
// only because of Unidentified entries.
func (d Decision) Blocked() bool { return d.Blocking != nil || d.BlockingContraindication != nil }

// BatchDecision is the outcome of [Agent.Check]: one [Decision] per
// candidate, in the order given.
type BatchDecision struct {
	Decisions []Decision `json:"decisions"`
	// Valid is true when every decision is valid.
	Valid               bool `json:"valid"`
	InteractionsChecked bool `json:"interactions_checked"`
}

var (
	// ErrUnknownDrug is wrapped, with the code, by Lookup, Validate and Check
	// for a drug code that is not in the catalogue.
	ErrUnknownDrug = errors.New("unknown drug code")
	// ErrNoRecord is returned by Validate and Check when given a nil record.
	ErrNoRecord = errors.New("prescription: no patient record")
	// ErrNoCandidates is returned by Check when no candidate drug is given.
	ErrNoCandidates = errors.New("prescription: no drug to check")
	// ErrCombination is wrapped, with ErrUnknownDrug and the code, by
	// Lookup, Validate and Check for a code or name of a combination
	// product (several catalogue ingredients): a prescription line is
	// checked as one drug, so each ingredient must be asked for by itself.
	ErrCombination = errors.New("names a combination product")
)

const maxCodeInError = 64

// truncate trims s and cuts it to at most maxCodeInError bytes, at a rune
// boundary, marking the cut with "…".
func truncate(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= maxCodeInError {
		return s
	}
	cut := maxCodeInError
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Option configures an [Agent].
type Option func(*options) error

type options struct {
	data *Data
}

// WithData replaces the embedded reference data. Drugs, interactions and
// contraindications are required (names defaults to the embedded
// vocabulary) and are validated like the embedded ones; New fails with an
// error wrapping [ErrData] if any is malformed or inconsistent.
func WithData(d Data) Option {
	return func(o *options) error {
		if len(d.Drugs) == 0 || len(d.Interactions) == 0 || len(d.Contraindications) == 0 {
			return dataErr("WithData needs drugs, interactions and contraindications")
		}
		o.data = &d
		return nil
	}
}

// Agent validates prescriptions against its reference data. It is immutable
// after New and safe for concurrent use.
type Agent struct {
	k *knowledge
}

// New loads and validates the reference data (embedded unless [WithData]
// is given) and returns a ready agent.
func New(opts ...Option) (*Agent, error) {
	var o options
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	var d Data
	if o.data != nil {
		d = *o.data
	} else {
		var err error
		if d, err = embeddedData(); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrData, err)
		}
	}
	k, err := loadKnowledge(d)
	if err != nil {
		return nil, err
	}
	return &Agent{k: k}, nil
}

// Drugs returns the catalogue ordered by name. The slice is a copy.
func (a *Agent) Drugs() []Drug {
	out := make([]Drug, len(a.k.drugs))
	for i, d := range a.k.drugs {
		out[i] = d.clone()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup finds a drug by RxCUI ("11289", or a product RxCUI the data lists,
// such as 855332 "warfarin sodium 5 MG Oral Tablet"), by NDC in any form
// [NormalizeNDC] accepts ("0003-0894-21", "00003089421"), or by name,
// case-insensitively: a generic or brand name ("Warfarin", "coumadin"), an
// RxNorm drug name ("warfarin sodium 5 MG Oral Tablet [Coumadin]") or free
// text ("Coumadin 5 mg tablet"). A code of digits only is an RxCUI up to 8
// digits and an NDC from 9 digits on; one with hyphens is an NDC. A code it
// cannot identify gives an error wrapping [ErrUnknownDrug] (and
// [ErrInvalidNDC] for a malformed NDC, [ErrCombination] for a combination
// product).
func (a *Agent) Lookup(code string) (Drug, error) {
	i, err := a.lookup(code)
	if err != nil {
		return Drug{}, err
	}
	return a.k.drugs[i].clone(), nil
}

func (a *Agent) lookup(code string) (int, error) {
	s := strings.TrimSpace(code)
	found, complete, errNDC := a.k.identify(s)
	switch {
	case errNDC != nil:
		return 0, fmt.Errorf("%w: %q: %w", ErrUnknownDrug, truncate(s), errNDC)
	case !complete:
		return 0, fmt.Errorf("%w: %q", ErrUnknownDrug, truncate(s))
	case len(found) > 1:
		return 0, fmt.Errorf("%w: %q %w", ErrUnknownDrug, truncate(s), ErrCombination)
	}
	return found[0], nil
}

// Validate checks drugCode for the patient of rec: interactions with each of
// rec.Medications (RxCUIs, or any code Lookup accepts), and contraindications
// from rec.Allergies and rec.Conditions (ICD-10). The decision is invalid when
// an interaction or a contraindication is major or contraindicated; moderate
// and minor findings are reported but do not invalidate.
//
// Errors: ctx's error, [ErrNoRecord], or an error wrapping [ErrUnknownDrug].
// Validate(ctx, rec, code) equals Check(ctx, nil, []string{code}, rec).Decisions[0].
func (a *Agent) Validate(ctx context.Context, rec *record.Record, drugCode string) (Decision, error) {
	b, err := a.Check(ctx, nil, []string{drugCode}, rec)
	if err != nil {
		return Decision{}, err
	}
	return b.Decisions[0], nil
}

// Check validates several new drugs at once, as a multi-medication
// prescription endpoint needs. Each candidate is checked against the current
// medications — rec.Medications plus current (extra codes the caller knows
// of, in any form Lookup accepts) — against every other candidate (those
// interactions have BetweenCandidates set and appear in both candidates'
// decisions), and against rec's allergies and conditions.
//
// A candidate that is the same drug as a current medication or as another
// candidate is not checked against itself (a refill is not an interaction).
// A current medication is read as Lookup reads a code, and may name several
// ingredients (each is checked); medications and allergies that cannot be
// identified are listed in each decision's Unidentified, and make it not
// valid. An unknown candidate fails the whole call with an error wrapping
// [ErrUnknownDrug] naming it.
func (a *Agent) Check(ctx context.Context, current, candidates []string, rec *record.Record) (BatchDecision, error) {
	if err := ctx.Err(); err != nil {
		return BatchDecision{}, err
	}
	if rec == nil {
		return BatchDecision{}, ErrNoRecord
	}
	if len(candidates) == 0 {
		return BatchDecision{}, ErrNoCandidates
	}
	cand := make([]int, len(candidates))
	for n, c := range candidates {
		i, err := a.lookup(c)
		if err != nil {
			return BatchDecision{}, err
		}
		cand[n] = i
	}

	view := a.read(rec, current)

	out := BatchDecision{Decisions: make([]Decision, len(cand)), Valid: true, InteractionsChecked: true}
	for n, i := range cand {
		if err := ctx.Err(); err != nil {
			return BatchDecision{}, err
		}
		d := Decision{Drug: a.k.drugs[i].clone(), InteractionsChecked: true, Unidentified: slices.Clone(view.unidentified)}
		for _, j := range view.meds {
			if ia, ok := a.interaction(i, j); ok {
				d.Interactions = append(d.Interactions, ia)
			}
		}
		for m, j := range cand {
			if m == n {
				continue
			}
			if ia, ok := a.interaction(i, j); ok {
				ia.BetweenCandidates = true
				d.Interactions = append(d.Interactions, ia)
			}
		}
		d.Contraindications = a.contraindications(i, rec, view)
		d.decide()
		out.Valid = out.Valid && d.Valid
		out.Decisions[n] = d
	}
	return out, nil
}

// interaction returns the interaction between drugs i and j, if any.
func (a *Agent) interaction(i, j int) (Interaction, bool) {
	if i == j {
		return Interaction{}, false
	}
	ri, ok := a.k.pairs[pair(i, j)]
	if !ok {
		return Interaction{}, false
	}
	r := &a.k.interactions[ri]
	return Interaction{
		With: a.k.drugs[j].clone(), Severity: r.Severity,
		Mechanism: r.Mechanism, Management: r.Management, Source: r.Source, RuleID: r.ID,
	}, true
}

// selfAllergyRule is the RuleID of an allergy recorded against the drug
// itself (its name, a brand name or its RxCUI).
const selfAllergyRule = "allergy-drug-itself"

// contraindications returns drug i's contraindications for rec, at most one
// per rule (the first patient entry that triggers it).
func (a *Agent) contraindications(i int, rec *record.Record, view patientView) []Contraindication {
	var out []Contraindication
	dr := &a.k.drugs[i]
	used := map[string]bool{}
	for _, al := range view.allergies {
		if !used[selfAllergyRule] && slices.Contains(al.drugs, i) {
			used[selfAllergyRule] = true
			out = append(out, Contraindication{
				Kind: KindAllergy, Trigger: al.norm, Severity: SeverityContraindicated,
				Reason:     "A recorded allergy to " + dr.Name + " itself.",
				Management: "Do not prescribe; choose a drug of another class.",
				Source:     "patient record", RuleID: selfAllergyRule,
			})
		}
		for _, ci := range a.k.contraByDr[i] {
			r := &a.k.contra[ci]
			if r.Kind != KindAllergy || used[r.ID] || !slices.Contains(r.norm, al.norm) {
				continue
			}
			used[r.ID] = true
			out = append(out, r.finding(al.norm))
		}
	}
	for _, raw := range rec.Conditions {
		code := normICD(raw)
		if code == "" {
			continue
		}
		for _, ci := range a.k.contraByDr[i] {
			r := &a.k.contra[ci]
			if r.Kind != KindCondition || used[r.ID] {
				continue
			}
			for _, prefix := range r.norm {
				if strings.HasPrefix(code, prefix) {
					used[r.ID] = true
					out = append(out, r.finding(strings.ToUpper(strings.TrimSpace(raw))))
					break
				}
			}
		}
	}
	sort.SliceStable(out, func(x, y int) bool { return out[x].Severity.Rank() > out[y].Severity.Rank() })
	return out
}

// patientView is what the checks read from a record: the catalogue drugs
// of its current medications, its allergies with the drugs each names,
// and what could not be identified.
type patientView struct {
	meds         drugSet
	allergies    []allergyEntry
	unidentified []Unidentified
}

type allergyEntry struct {
	norm  string  // normAllergen form
	drugs drugSet // catalogue drugs the allergy names itself
}

// read identifies rec's medications (and current, extra ones) and
// allergies.
func (a *Agent) read(rec *record.Record, current []string) patientView {
	var v patientView
	for _, list := range [][]string{rec.Medications, current} {
		for _, m := range list {
			found, complete, _ := a.k.identify(m)
			v.meds = v.meds.add(found...)
			if !complete {
				v.unidentified = append(v.unidentified, Unidentified{Kind: EntryMedication, Entry: truncate(m)})
			}
		}
	}
	for _, raw := range rec.Allergies {
		norm, drugs, ok := a.k.allergy(raw)
		if norm != "" {
			v.allergies = append(v.allergies, allergyEntry{norm: norm, drugs: drugs})
		}
		if !ok {
			v.unidentified = append(v.unidentified, Unidentified{Kind: EntryAllergy, Entry: truncate(raw)})
		}
	}
	return v
}

func (r *contraRule) finding(trigger string) Contraindication {
	return Contraindication{
		Kind: r.Kind, Trigger: trigger, Severity: r.Severity,
		Reason: r.Reason, Management: r.Management, Source: r.Source, RuleID: r.ID,
	}
}

// decide orders the findings and sets Valid, Blocking and Reason: not
// valid with a blocking finding or an unidentified entry.
func (d *Decision) decide() {
	sort.SliceStable(d.Interactions, func(x, y int) bool {
		return d.Interactions[x].Severity.Rank() > d.Interactions[y].Severity.Rank()
	})
	if len(d.Interactions) > 0 && d.Interactions[0].Severity.Blocks() {
		b := d.Interactions[0]
		d.Blocking = &b
	}
	if len(d.Contraindications) > 0 && d.Contraindications[0].Severity.Blocks() {
		c := d.Contraindications[0]
		d.BlockingContraindication = &c
	}
	switch {
	case d.Blocking != nil:
		d.Reason = "Drug interaction detected with " + d.Blocking.With.Name
	case d.BlockingContraindication != nil:
		d.Reason = "Contraindication detected for " + d.Drug.Name
	case len(d.Unidentified) > 0:
		d.Reason = ReasonUnidentified
	default:
		d.Valid = true
	}
}
