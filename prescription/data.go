package prescription

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

//go:embed data/*.json
var dataFS embed.FS

// ErrData is wrapped by every error about malformed reference data.
var ErrData = errors.New("prescription: invalid reference data")

// The on-disk shapes of the three data files.
type drugsFile struct {
	Version  string    `json:"version"`
	Note     string    `json:"note"`
	Drugs    []Drug    `json:"drugs"`
	Products []Product `json:"products"`
}

type selector struct {
	RxCUIs []string `json:"rxcuis"`
	Groups []string `json:"groups"`
}

type interactionRule struct {
	ID         string   `json:"id"`
	A          selector `json:"a"`
	B          selector `json:"b"`
	Severity   Severity `json:"severity"`
	Mechanism  string   `json:"mechanism"`
	Management string   `json:"management"`
	Source     string   `json:"source"`
}

type contraRule struct {
	ID         string   `json:"id"`
	Kind       string   `json:"kind"`
	Triggers   []string `json:"triggers"`
	Drugs      selector `json:"drugs"`
	Severity   Severity `json:"severity"`
	Reason     string   `json:"reason"`
	Management string   `json:"management"`
	Source     string   `json:"source"`

	// normalized triggers, filled at load
	norm []string
}

type rulesFile[T any] struct {
	Version string `json:"version"`
	Note    string `json:"note"`
	Rules   []T    `json:"rules"`
}

// Kinds of [Contraindication].
const (
	KindAllergy   = "allergy"
	KindCondition = "condition"
)

// Data is a complete set of reference data in the JSON shapes of the
// embedded files data/drugs.json, data/interactions.json,
// data/contraindications.json and data/names.json. See [WithData].
type Data struct {
	Drugs             []byte
	Interactions      []byte
	Contraindications []byte
	// Names is the vocabulary of the drug-name grammar (salts, dose forms,
	// non-drug allergens); the embedded one when empty.
	Names []byte
}

func embeddedData() (Data, error) {
	var d Data
	var err error
	if d.Drugs, err = dataFS.ReadFile("data/drugs.json"); err != nil {
		return d, err
	}
	if d.Interactions, err = dataFS.ReadFile("data/interactions.json"); err != nil {
		return d, err
	}
	if d.Contraindications, err = dataFS.ReadFile("data/contraindications.json"); err != nil {
		return d, err
	}
	d.Names, err = dataFS.ReadFile("data/names.json")
	return d, err
}

var (
	rxcuiRE = regexp.MustCompile(`^[1-9][0-9]{0,7}$`)
	icdRE   = regexp.MustCompile(`^[A-Z][0-9][0-9A-Z]?(\.[0-9A-Z]{1,4})?$`)
)

// pairKey is an unordered pair of drug indexes, smaller first.
type pairKey struct{ lo, hi int }

func pair(i, j int) pairKey {
	if i > j {
		i, j = j, i
	}
	return pairKey{i, j}
}

// knowledge is the parsed, validated and indexed reference data.
type knowledge struct {
	drugs     []Drug
	byRxCUI   map[string]int
	byNDC     map[string]int
	byName    map[string]int
	products  []Product
	byProduct map[string]drugSet // product RxCUI → its ingredients
	vocab     vocabulary
	triggers  map[string]bool // every allergen of the contraindication rules

	interactions []interactionRule
	pairs        map[pairKey]int // → index into interactions (most severe rule for the pair)
	sides        [][2][]int      // per interaction rule, its A and B drug indexes

	contraDrugs [][]int // per contraindication rule, its drug indexes

	contra     []contraRule
	contraByDr [][]int // drug index → indexes into contra
}

func decodeStrict(raw []byte, v any, what string) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrData, what, err)
	}
	return nil
}

func dataErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrData, fmt.Sprintf(format, args...))
}

func loadKnowledge(d Data) (*knowledge, error) {
	var df drugsFile
	if err := decodeStrict(d.Drugs, &df, "drugs"); err != nil {
		return nil, err
	}
	var inf rulesFile[interactionRule]
	if err := decodeStrict(d.Interactions, &inf, "interactions"); err != nil {
		return nil, err
	}
	var cf rulesFile[contraRule]
	if err := decodeStrict(d.Contraindications, &cf, "contraindications"); err != nil {
		return nil, err
	}
	if len(d.Names) == 0 {
		var err error
		if d.Names, err = dataFS.ReadFile("data/names.json"); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrData, err)
		}
	}
	vocab, err := loadVocabulary(d.Names)
	if err != nil {
		return nil, err
	}
	k := &knowledge{
		drugs:     df.Drugs,
		byRxCUI:   make(map[string]int, len(df.Drugs)),
		byNDC:     make(map[string]int),
		byName:    make(map[string]int, 2*len(df.Drugs)),
		byProduct: make(map[string]drugSet, len(df.Products)),
		vocab:     vocab,
		triggers:  map[string]bool{},
	}
	if len(k.drugs) == 0 {
		return nil, dataErr("no drugs")
	}
	groups := map[string]bool{} // every class and group some drug carries
	for i := range k.drugs {
		dr := &k.drugs[i]
		if !rxcuiRE.MatchString(dr.RxCUI) {
			return nil, dataErr("drug %q: RxCUI %q is not 1-8 digits", dr.Name, dr.RxCUI)
		}
		if _, dup := k.byRxCUI[dr.RxCUI]; dup {
			return nil, dataErr("RxCUI %s listed twice", dr.RxCUI)
		}
		k.byRxCUI[dr.RxCUI] = i
		if strings.TrimSpace(dr.Class) == "" {
			return nil, dataErr("drug %s has no class", dr.RxCUI)
		}
		if dr.Formulary.Tier < 0 || dr.Formulary.Tier > 5 || dr.Formulary.Covered != (dr.Formulary.Tier > 0) {
			return nil, dataErr("drug %s: formulary must be covered with tier 1-5, or not covered with tier 0", dr.RxCUI)
		}
		for _, name := range append([]string{dr.Name}, dr.Aliases...) {
			n := normName(name)
			if n == "" || !strings.ContainsFunc(n, isLetter) {
				return nil, dataErr("drug %s: name or alias %q must contain a letter", dr.RxCUI, name)
			}
			if j, dup := k.byName[n]; dup && j != i {
				return nil, dataErr("name %q used by RxCUI %s and %s", name, k.drugs[j].RxCUI, dr.RxCUI)
			}
			k.byName[n] = i
		}
		for _, ndc := range dr.NDCs {
			if len(ndc) != 11 || !allDigits(ndc) {
				return nil, dataErr("drug %s: NDC %q is not 11 digits", dr.RxCUI, ndc)
			}
			if _, dup := k.byNDC[ndc]; dup {
				return nil, dataErr("NDC %s listed twice", ndc)
			}
			k.byNDC[ndc] = i
		}
		groups[dr.Class] = true
		for _, g := range dr.Groups {
			groups[g] = true
		}
	}
	if err := k.loadProducts(df.Products); err != nil {
		return nil, err
	}
	match := func(sel selector, where string) ([]int, error) {
		if len(sel.RxCUIs)+len(sel.Groups) == 0 {
			return nil, dataErr("%s: empty selector", where)
		}
		var out []int
		seen := map[int]bool{}
		add := func(i int) {
			if !seen[i] {
				seen[i] = true
				out = append(out, i)
			}
		}
		for _, rx := range sel.RxCUIs {
			i, ok := k.byRxCUI[rx]
			if !ok {
				return nil, dataErr("%s: RxCUI %s is not in the drug list", where, rx)
			}
			add(i)
		}
		for _, g := range sel.Groups {
			if !groups[g] {
				return nil, dataErr("%s: no drug has class or group %q", where, g)
			}
			for i := range k.drugs {
				if k.drugs[i].inGroup(g) {
					add(i)
				}
			}
		}
		return out, nil
	}

	ids := map[string]bool{}
	checkCommon := func(id string, sev Severity, texts ...string) error {
		if id == "" || ids[id] {
			return dataErr("rule id %q empty or repeated", id)
		}
		ids[id] = true
		if sev.Rank() == 0 {
			return dataErr("rule %s: unknown severity %q", id, sev)
		}
		for _, t := range texts {
			if strings.TrimSpace(t) == "" {
				return dataErr("rule %s: mechanism/reason, management and source are required", id)
			}
		}
		return nil
	}

	k.interactions = inf.Rules
	k.pairs = make(map[pairKey]int)
	for ri, r := range k.interactions {
		if err := checkCommon(r.ID, r.Severity, r.Mechanism, r.Management, r.Source); err != nil {
			return nil, err
		}
		as, err := match(r.A, r.ID+".a")
		if err != nil {
			return nil, err
		}
		bs, err := match(r.B, r.ID+".b")
		if err != nil {
			return nil, err
		}
		k.sides = append(k.sides, [2][]int{as, bs})
		for _, a := range as {
			for _, b := range bs {
				if a == b {
					continue
				}
				key := pair(a, b)
				if prev, ok := k.pairs[key]; !ok || k.interactions[prev].Severity.Rank() < r.Severity.Rank() {
					k.pairs[key] = ri
				}
			}
		}
	}

	k.contra = cf.Rules
	k.contraByDr = make([][]int, len(k.drugs))
	for ci := range k.contra {
		r := &k.contra[ci]
		if err := checkCommon(r.ID, r.Severity, r.Reason, r.Management, r.Source); err != nil {
			return nil, err
		}
		if len(r.Triggers) == 0 {
			return nil, dataErr("rule %s: no triggers", r.ID)
		}
		for _, t := range r.Triggers {
			switch r.Kind {
			case KindAllergy:
				n := normAllergen(t)
				if n == "" {
					return nil, dataErr("rule %s: empty allergen", r.ID)
				}
				r.norm = append(r.norm, n)
				k.triggers[n] = true
			case KindCondition:
				if !icdRE.MatchString(t) {
					return nil, dataErr("rule %s: %q is not an ICD-10 code prefix", r.ID, t)
				}
				r.norm = append(r.norm, normICD(t))
			default:
				return nil, dataErr("rule %s: kind must be allergy or condition", r.ID)
			}
		}
		ds, err := match(r.Drugs, r.ID+".drugs")
		if err != nil {
			return nil, err
		}
		k.contraDrugs = append(k.contraDrugs, ds)
		for _, i := range ds {
			k.contraByDr[i] = append(k.contraByDr[i], ci)
		}
	}
	return k, nil
}

func (d *Drug) inGroup(g string) bool {
	if d.Class == g {
		return true
	}
	for _, x := range d.Groups {
		if x == g {
			return true
		}
	}
	return false
}

func isLetter(r rune) bool { return (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') }

// normName is the lookup form of a drug name: lower case, single spaces.
func normName(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}

// normAllergen is the comparison form of a recorded allergy: like normName,
// without a leading FHIR category ("food:") or a trailing
// "allergy"/"allergies" word.
func normAllergen(s string) string {
	_, s = splitCategory(s)
	n := normName(s)
	for _, suffix := range []string{" allergy", " allergies"} {
		n = strings.TrimSuffix(n, suffix)
	}
	return n
}

// normICD is the comparison form of an ICD-10 code or prefix: upper case,
// no dot, no spaces.
func normICD(s string) string {
	return strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), ".", ""))
}

// loadProducts indexes the product-level concepts: each RxCUI new, each
// name read completely by the grammar.
func (k *knowledge) loadProducts(products []Product) error {
	for _, p := range products {
		if !rxcuiRE.MatchString(p.RxCUI) {
			return dataErr("product %q: RxCUI %q is not 1-8 digits", p.Name, p.RxCUI)
		}
		if _, dup := k.byRxCUI[p.RxCUI]; dup {
			return dataErr("product RxCUI %s is an ingredient's", p.RxCUI)
		}
		if _, dup := k.byProduct[p.RxCUI]; dup {
			return dataErr("product RxCUI %s listed twice", p.RxCUI)
		}
		if !slices.Contains([]string{"SCD", "SBD", "GPCK", "BPCK", "SCDC", "PIN", "MIN"}, p.TTY) {
			return dataErr("product %s: term type %q is not SCD, SBD, GPCK, BPCK, SCDC, PIN or MIN", p.RxCUI, p.TTY)
		}
		d, ok := k.name(normName(p.Name), 0)
		if !ok || len(d) == 0 {
			return dataErr("product %s: the name %q does not resolve to catalogue ingredients", p.RxCUI, p.Name)
		}
		k.byProduct[p.RxCUI] = d
		k.products = append(k.products, p)
	}
	return nil
}
