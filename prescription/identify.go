package prescription

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Identifying what a record names: an ingredient RxCUI, a product RxCUI
// listed in the data, an NDC, or a name read with the RxNorm name grammar
// (docs/decisions/prescription.md, "Identifying what EHRs send").

// namesFile is the shape of data/names.json: the vocabulary of the grammar.
type namesFile struct {
	Version          string   `json:"version"`
	Note             string   `json:"note"`
	Salts            []string `json:"salts"`
	Forms            []string `json:"forms"`
	Inert            []string `json:"inert"`
	NonDrugAllergens []string `json:"non_drug_allergens"`
	NoAllergies      []string `json:"no_allergies"`
}

// Product is a product-level RxNorm concept the data lists by RxCUI (a
// clinical or branded drug or pack: TTY SCD, SBD, GPCK or BPCK) with its
// RxNorm name, from which its ingredients are read at load.
type Product struct {
	RxCUI string `json:"rxcui"`
	TTY   string `json:"tty"`
	Name  string `json:"name"`
}

// vocabulary is names.json, indexed.
type vocabulary struct {
	salts, forms, inert, nonDrug, noAllergy map[string]bool
}

func setOf(list []string) map[string]bool {
	m := make(map[string]bool, len(list))
	for _, s := range list {
		m[normName(s)] = true
	}
	return m
}

func loadVocabulary(raw []byte) (vocabulary, error) {
	var nf namesFile
	if err := decodeStrict(raw, &nf, "names"); err != nil {
		return vocabulary{}, err
	}
	if len(nf.Salts) == 0 || len(nf.Forms) == 0 {
		return vocabulary{}, dataErr("names: salts and forms are required")
	}
	return vocabulary{salts: setOf(nf.Salts), forms: setOf(nf.Forms), inert: setOf(nf.Inert),
		nonDrug: setOf(nf.NonDrugAllergens), noAllergy: setOf(nf.NoAllergies)}, nil
}

// drugSet is a set of catalogue drug indexes in the order first found.
type drugSet []int

func (s drugSet) add(more ...int) drugSet {
	for _, i := range more {
		if !slices.Contains(s, i) {
			s = append(s, i)
		}
	}
	return s
}

// maxNameDepth bounds the grammar's nesting (a pack of branded drugs is 3).
const maxNameDepth = 6

// identify reads s as a code or a name. It returns every catalogue drug it
// found and whether s is identified completely: every ingredient it names
// is in the catalogue. A code of digits only is an RxCUI up to 8 digits
// (an ingredient's, or a listed product's) and an NDC from 9 digits on;
// digits with hyphens are an NDC; anything else is a name. errNDC is set
// for a malformed NDC.
func (k *knowledge) identify(s string) (found drugSet, complete bool, errNDC error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return nil, false, nil
	case allDigits(s) && len(s) <= 8:
		if i, ok := k.byRxCUI[s]; ok {
			return drugSet{i}, true, nil
		}
		p, ok := k.byProduct[s]
		return slices.Clone(p), ok, nil
	case allDigits(strings.ReplaceAll(s, "-", "")):
		ndc, err := NormalizeNDC(s)
		if err != nil {
			return nil, false, err
		}
		i, ok := k.byNDC[ndc]
		if !ok {
			return nil, false, nil
		}
		return drugSet{i}, true, nil
	}
	found, complete = k.name(normName(s), 0)
	return found, complete && len(found) > 0, nil
}

// name reads a normalized name: an ingredient name or alias; an RxNorm
// clinical or branded drug ("warfarin sodium 5 mg oral tablet [coumadin]"),
// component or precise ingredient; a multiple ingredient ("a / b"); a pack
// ("{21 (a 1 mg oral tablet) / 7 (inert ingredients 1 mg oral tablet) }
// pack"); or free text ("coumadin 5 mg tablet").
func (k *knowledge) name(n string, depth int) (drugSet, bool) {
	if n == "" || depth > maxNameDepth {
		return nil, false
	}
	if i, ok := k.byName[n]; ok {
		return drugSet{i}, true
	}
	// A trailing [Brand] (SBD, BPCK): the rest names the ingredients; the
	// brand, when known, adds its drug.
	if strings.HasSuffix(n, "]") {
		if open := strings.LastIndex(n, "["); open >= 0 {
			rest, brand := strings.TrimSpace(n[:open]), strings.TrimSpace(n[open+1:len(n)-1])
			b, bok := k.name(brand, depth+1)
			if rest == "" {
				return b, bok
			}
			r, rok := k.name(rest, depth+1)
			if bok {
				r = r.add(b...)
			}
			return r, rok
		}
	}
	if strings.HasPrefix(n, "{") {
		return k.pack(n, depth)
	}
	if parts := splitTop(n, " / "); len(parts) > 1 {
		return k.all(parts, depth)
	}
	return k.component(n, depth)
}

// packComponent is "21 (a 1 mg oral tablet)": a count and a drug.
var packComponent = regexp.MustCompile(`^[0-9]+ \((.*)\)$`)

// pack reads "{n (drug) / m (drug) } pack": every drug must be identified
// (a component of inert ingredients adds nothing).
func (k *knowledge) pack(n string, depth int) (drugSet, bool) {
	end := strings.LastIndex(n, "}")
	if end < 0 || !slices.Contains([]string{"pack", "kit"}, strings.TrimSpace(n[end+1:])) {
		return nil, false
	}
	var found drugSet
	ok := true
	for _, c := range splitTop(n[1:end], " / ") {
		m := packComponent.FindStringSubmatch(strings.TrimSpace(c))
		if m == nil {
			return found, false
		}
		d, dok := k.name(strings.TrimSpace(m[1]), depth+1)
		found, ok = found.add(d...), ok && dok
	}
	return found, ok
}

// all reads every part; the whole is identified when each part is.
func (k *knowledge) all(parts []string, depth int) (drugSet, bool) {
	var found drugSet
	ok := true
	for _, p := range parts {
		d, dok := k.name(strings.TrimSpace(p), depth+1)
		found, ok = found.add(d...), ok && dok
	}
	return found, ok
}

// component reads one ingredient with its strength and dose form: the
// words before the strength, less trailing salt, ester and dose-form words
// ("warfarin sodium 5 mg oral tablet" → warfarin). A leading quantity
// ("24 hr", "3 ml") is skipped and parenthesised words are dropped. Free
// text joining ingredients with "and" or "/" ("sulfamethoxazole and
// trimethoprim") is read part by part.
func (k *knowledge) component(n string, depth int) (drugSet, bool) {
	toks := strings.Fields(strings.ReplaceAll(dropParens(n), ",", " "))
	for len(toks) >= 3 && numeric(toks[0]) {
		toks = toks[2:]
	}
	end := len(toks)
	for i, t := range toks {
		if numeric(t) {
			end = i
			break
		}
	}
	words := toks[:end]
	for w := words; len(w) > 0; w = w[:len(w)-1] {
		cand := strings.Join(w, " ")
		if i, ok := k.byName[cand]; ok {
			return drugSet{i}, true
		}
		if k.vocab.inert[cand] {
			return nil, true
		}
		if last := w[len(w)-1]; !k.vocab.salts[last] && !k.vocab.forms[last] {
			break
		}
	}
	whole := strings.Join(words, " ")
	for _, sep := range []string{" and ", "/"} {
		if parts := strings.Split(whole, sep); len(parts) > 1 {
			return k.all(parts, depth)
		}
	}
	return nil, false
}

// numeric reports whether a token starts a number ("5", "0.035", ".5",
// "5mg").
func numeric(t string) bool {
	t = strings.TrimPrefix(t, ".")
	return t != "" && t[0] >= '0' && t[0] <= '9'
}

// dropParens removes parenthesised groups: "(product)", "(as sodium)".
func dropParens(s string) string {
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// splitTop splits s at sep outside parentheses, brackets and braces.
func splitTop(s, sep string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		default:
			if depth == 0 && strings.HasPrefix(s[i:], sep) {
				parts = append(parts, s[start:i])
				start = i + len(sep)
				i += len(sep) - 1
			}
		}
	}
	return append(parts, s[start:])
}

// categoryNamesDrugs holds the FHIR AllergyIntolerance categories an
// allergy entry may start with ("food: cashew nuts"), each with whether
// such an allergy can name a drug: food and environment allergies cannot.
var categoryNamesDrugs = map[string]bool{"food": false, "environment": false, "medication": true, "biologic": true}

// splitCategory separates a leading "category:" from an allergy entry.
func splitCategory(s string) (category, rest string) {
	c, r, ok := strings.Cut(s, ":")
	c = strings.ToLower(strings.TrimSpace(c))
	if _, known := categoryNamesDrugs[c]; ok && known {
		return c, r
	}
	return "", s
}

// allergy reads a recorded allergy: the catalogue drugs it names itself
// (an allergy to warfarin, or to "Coumadin 5 mg tablet"), and whether it
// is identified: it names a trigger of the contraindication rules, names
// catalogue drugs completely, or names no drug at all (a food or
// environment allergy by its category or the list of such allergens, or
// "no known allergies").
func (k *knowledge) allergy(raw string) (norm string, drugs drugSet, identified bool) {
	category, _ := splitCategory(raw)
	norm = normAllergen(raw)
	if norm == "" {
		return "", nil, true
	}
	drugs, complete, _ := k.identify(norm)
	switch {
	case complete, k.triggers[norm], category != "" && !categoryNamesDrugs[category],
		k.vocab.noAllergy[norm], k.vocab.nonDrug[norm], k.vocab.nonDrug[singular(norm)]:
		return norm, drugs, true
	}
	return norm, drugs, false
}

// singular drops a plural ending from the last word: "cashew nuts" →
// "cashew nut", "peanuts" → "peanut".
func singular(s string) string {
	switch {
	case strings.HasSuffix(s, "ies"):
		return strings.TrimSuffix(s, "ies") + "y"
	case strings.HasSuffix(s, "es") && strings.HasSuffix(strings.TrimSuffix(s, "es"), "sh"):
		return strings.TrimSuffix(s, "es")
	}
	return strings.TrimSuffix(s, "s")
}

// Kinds of [Unidentified] entry.
const (
	EntryMedication = "medication"
	EntryAllergy    = "allergy"
)

// Unidentified is an entry of the patient's record the agent could not
// identify: a current medication none of whose names resolves completely
// to catalogue ingredients, or an allergy that names neither a rule's
// allergen, nor catalogue drugs, nor a known non-drug allergen. What it
// could be cannot be checked, so a decision with one is not valid
// (docs/decisions/prescription.md). Entry is as recorded, trimmed, at most
// 64 bytes: medical data, never logged.
type Unidentified struct {
	Kind  string `json:"kind"`
	Entry string `json:"entry"`
}

// String is `medication "Tylenol PM"`.
func (u Unidentified) String() string { return fmt.Sprintf("%s %q", u.Kind, u.Entry) }

// Identify reads the names of one medication — its codes (RxCUI of any
// RxNorm term type listed in the data, NDC), RxNorm names and free text, in
// any order — and returns the RxCUIs of the catalogue ingredients they
// name, and whether the medication is identified: some name resolves
// completely (every ingredient it names is in the catalogue). rxcuis is
// the union over the names that resolve completely, or, when none does,
// over what the names resolved partly. The fhir package maps a
// CodeableConcept's codings and text with it.
func (a *Agent) Identify(names ...string) (rxcuis []string, identified bool) {
	var all, partial drugSet
	for _, n := range names {
		d, complete, _ := a.k.identify(n)
		if complete {
			all = all.add(d...)
		} else {
			partial = partial.add(d...)
		}
	}
	identified = len(all) > 0
	if !identified {
		all = partial
	}
	for _, i := range all {
		rxcuis = append(rxcuis, a.k.drugs[i].RxCUI)
	}
	return rxcuis, identified
}
