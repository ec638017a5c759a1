package zkp

import (
	"fmt"
	"math/big"
	"math/bits"
	"slices"
	"sort"

	"github.com/consensys/gnark/frontend"

	"github.com/healthagents/healthagents/prescription"
)

// The clinical part of prescription-v4: the interaction and
// contraindication findings of prescription.Agent.Check, proven from the
// public rule table (prescription.Rules) and private facts committed in the
// digest. docs/decisions/zk-statements.md has the design; the limits below
// bound the facts one proof covers (a record beyond them cannot be proven:
// ErrRecordTooLarge).
const (
	// MaxMedications is how many current medications (catalogue drugs
	// other than the prescribed ones, each once) a proof covers.
	MaxMedications = 12
	// MaxTriggers is how many entries of the public trigger list
	// (allergens and ICD-10 prefixes of the contraindication rules) the
	// patient's allergies and conditions may match.
	MaxTriggers = 8
	// MaxAllergyDrugs is how many catalogue drugs the patient's allergies
	// may name themselves.
	MaxAllergyDrugs = 4
)

// colSides is the drug table's first clinical column (after tier and
// present).
const colSides = 2

// Digits of a candidate's packed finding sum: for k = 1…4, "an interaction
// of rank ≥ k fires" (digits 0–3) and "a contraindication of rank ≥ k
// fires" (digits 4–7).
const findingDigits = 8

// partner is what makes a rule fire for a candidate on one of its sides:
// another drug of the set on the other side. kind nz: side a holds at least
// one drug of the set (the candidate is not on it); kind ge2: the candidate
// is on both sides a and b, which are then asked for a second drug.
type partner struct {
	ge2  bool
	a, b int // side indexes, a ≤ b
}

// clinicalTable is prescription.Rules compiled for the circuit.
type clinicalTable struct {
	rules prescription.Rules

	sides    [][]bool  // side sets of the interaction rules, by drug key index
	needGe2  []bool    // per side: some rule asks it for a second drug
	partners []partner // the partner conditions, in column order
	tsets    [][]int   // distinct trigger sets of the contraindication rules
	width    [findingDigits]int
	offset   [findingDigits]int
	total    int      // Σ width
	self     *big.Int // packed weight of an allergy to the drug itself (rank 4)
	triggers *lookupTable

	// columns of the drug table after tier and present
	sideCol, partnerCol, tsetCol int
}

// pack is the weight a finding of rank r adds to the digits from first.
func (t *clinicalTable) pack(first, r int) *big.Int {
	w := new(big.Int)
	for k := range r {
		w.Add(w, pow2(t.offset[first+k]))
	}
	return w
}

// compileClinical builds the clinical table for the drugs keyed by keys
// (keys[0] is the empty slot; rx[i] is keys[i]'s RxCUI) and returns the
// drug table's extra columns in the order the circuit reads them.
func compileClinical(rules prescription.Rules, rx []string) (*clinicalTable, [][]*big.Int, error) {
	n := len(rx)
	at := make(map[string]int, n)
	for i, r := range rx {
		if i > 0 {
			at[r] = i
		}
	}
	t := &clinicalTable{rules: rules}
	set := func(codes []string) ([]bool, error) {
		s := make([]bool, n)
		for _, c := range codes {
			i, ok := at[c]
			if !ok {
				return nil, fmt.Errorf("zkp: rule drug %s is not in the formulary", c)
			}
			s[i] = true
		}
		return s, nil
	}
	sideOf := map[string]int{}
	side := func(codes []string) (int, []bool, error) {
		s, err := set(codes)
		if err != nil {
			return 0, nil, err
		}
		key := fmt.Sprint(s)
		i, ok := sideOf[key]
		if !ok {
			i = len(t.sides)
			sideOf[key] = i
			t.sides = append(t.sides, s)
			t.needGe2 = append(t.needGe2, false)
		}
		return i, s, nil
	}
	partnerOf := map[partner]int{}
	partnerIdx := func(p partner) int {
		i, ok := partnerOf[p]
		if !ok {
			i = len(t.partners)
			partnerOf[p] = i
			t.partners = append(t.partners, p)
		}
		return i
	}
	// Per drug, per rule: which partner makes the rule fire, with its rank.
	type contrib struct{ partner, rank int }
	fires := make([][]contrib, n)
	var count [findingDigits][]int
	for d := range count {
		count[d] = make([]int, n)
	}
	for _, r := range rules.Interactions {
		a, as, err := side(r.A)
		if err != nil {
			return nil, nil, err
		}
		b, bs, err := side(r.B)
		if err != nil {
			return nil, nil, err
		}
		rank := r.Severity.Rank()
		for x := 1; x < n; x++ {
			var p partner
			switch {
			case as[x] && bs[x]:
				p = partner{ge2: true, a: min(a, b), b: max(a, b)}
				t.needGe2[a], t.needGe2[b] = true, true
			case as[x]:
				p = partner{a: b, b: b}
			case bs[x]:
				p = partner{a: a, b: a}
			default:
				continue
			}
			fires[x] = append(fires[x], contrib{partnerIdx(p), rank})
			for k := range rank {
				count[k][x]++
			}
		}
	}
	tsetOf := map[string]int{}
	cfires := make([][]contrib, n)
	for _, c := range rules.Contraindications {
		ts := slices.Clone(c.Triggers)
		sort.Ints(ts)
		key := fmt.Sprint(ts)
		si, ok := tsetOf[key]
		if !ok {
			si = len(t.tsets)
			tsetOf[key] = si
			t.tsets = append(t.tsets, ts)
		}
		ds, err := set(c.Drugs)
		if err != nil {
			return nil, nil, err
		}
		rank := c.Severity.Rank()
		for x := 1; x < n; x++ {
			if ds[x] {
				cfires[x] = append(cfires[x], contrib{si, rank})
				for k := range rank {
					count[4+k][x]++
				}
			}
		}
	}
	for x := 1; x < n; x++ { // an allergy to the drug itself
		for k := range 4 {
			count[4+k][x]++
		}
	}
	off := 0
	for d := range findingDigits {
		t.width[d] = bits.Len(uint(slices.Max(count[d])))
		t.offset[d] = off
		off += t.width[d]
	}
	t.total = off
	t.self = t.pack(4, 4)

	var cols [][]*big.Int
	t.sideCol = 0
	for _, s := range t.sides {
		col := make([]*big.Int, n)
		for x := range n {
			col[x] = big.NewInt(int64(boolInt(s[x])))
		}
		cols = append(cols, col)
	}
	t.partnerCol = len(cols)
	for range t.partners {
		col := make([]*big.Int, n)
		for x := range col {
			col[x] = new(big.Int)
		}
		cols = append(cols, col)
	}
	for x := 1; x < n; x++ {
		for _, c := range fires[x] {
			cols[t.partnerCol+c.partner][x].Add(cols[t.partnerCol+c.partner][x], t.pack(0, c.rank))
		}
	}
	t.tsetCol = len(cols)
	for range t.tsets {
		col := make([]*big.Int, n)
		for x := range col {
			col[x] = new(big.Int)
		}
		cols = append(cols, col)
	}
	for x := 1; x < n; x++ {
		for _, c := range cfires[x] {
			cols[t.tsetCol+c.partner][x].Add(cols[t.tsetCol+c.partner][x], t.pack(4, c.rank))
		}
	}

	// The trigger table: keys 0 (empty) and 1…len(Triggers), a column per
	// trigger set.
	keys := make([]*big.Int, len(rules.Triggers)+1)
	for i := range keys {
		keys[i] = big.NewInt(int64(i))
	}
	tcols := make([][]*big.Int, len(t.tsets))
	for s, ts := range t.tsets {
		tcols[s] = make([]*big.Int, len(keys))
		for i := range keys {
			tcols[s][i] = big.NewInt(int64(boolInt(i > 0 && slices.Contains(ts, i-1))))
		}
	}
	if len(keys) > triggerBase {
		return nil, nil, fmt.Errorf("zkp: %d triggers do not pack in base %d", len(rules.Triggers), triggerBase)
	}
	t.triggers = newLookupTable(keys, tcols...)
	return t, cols, nil
}

// findings is what the clinical checks find for each candidate, computed
// from the rules the way prescription.Agent.Check does (not the way the
// circuit does): the most severe interaction with another drug of
// candidates ∪ meds, and the most severe contraindication from triggers and
// allergy drugs. candidates and meds are distinct RxCUIs.
func (t *clinicalTable) findings(candidates, meds []string, triggers []int, allergy []string) (interaction, contra []int) {
	all := append(slices.Clone(candidates), meds...)
	for _, x := range candidates {
		worst := 0
		for _, r := range t.rules.Interactions {
			for _, y := range all {
				if y == x {
					continue
				}
				if (slices.Contains(r.A, x) && slices.Contains(r.B, y)) || (slices.Contains(r.B, x) && slices.Contains(r.A, y)) {
					worst = max(worst, r.Severity.Rank())
				}
			}
		}
		interaction = append(interaction, worst)
		worst = 0
		if slices.Contains(allergy, x) {
			worst = 4
		}
		for _, c := range t.rules.Contraindications {
			if !slices.Contains(c.Drugs, x) {
				continue
			}
			for _, tr := range triggers {
				if slices.Contains(c.Triggers, tr) {
					worst = max(worst, c.Severity.Rank())
				}
			}
		}
		contra = append(contra, worst)
	}
	return interaction, contra
}

// triggerText is the opening's text of trigger i: "allergy:penicillin".
func (t *clinicalTable) triggerText(i int) string {
	return t.rules.Triggers[i].String()
}

// clinicalVars are the clinical witnesses of a prescription-v4 circuit.
type clinicalVars struct {
	Meds         [MaxMedications]frontend.Variable  // StringField(RxCUI), 0 for an empty slot
	Triggers     [MaxTriggers]frontend.Variable     // 1 + index into the trigger list, 0 for an empty slot
	AllergyDrugs [MaxAllergyDrugs]frontend.Variable // StringField(RxCUI), 0 for an empty slot

	// Unidentified commits to the patient's entries the service could not
	// identify (UnidentifiedValue), 0 when there are none.
	Unidentified frontend.Variable

	Interaction      [MaxDrugs]frontend.Variable // rank 0–4 of the most severe interaction
	Contraindication [MaxDrugs]frontend.Variable // rank 0–4 of the most severe contraindication
	Valid            [MaxDrugs]frontend.Variable // 1 when present, neither rank is ≥ 3 and nothing is unidentified
}

// define constrains the clinical outputs of the candidates (drugs, with the
// powers and column values their formulary lookups gave) from the
// witnesses. one is a wire equal to 1.
func (c *clinicalVars) define(api frontend.API, cat *drugCatalogue, drugs []frontend.Variable, pows [][]frontend.Variable, present []frontend.Variable, one frontend.Variable) {
	t := cat.clinical
	tab := cat.table
	// The set U: candidates and medications. Its power sums give, for every
	// side, how many drugs of U it holds (one column evaluation each).
	all := slices.Clone(pows)
	for m := range MaxMedications {
		all = append(all, tab.powers(api, c.Meds[m]))
	}
	sums := make([]frontend.Variable, len(all[0]))
	sums[0] = len(all)
	for k := 1; k < len(sums); k++ {
		acc := frontend.Variable(0)
		for _, p := range all {
			acc = api.Add(acc, p[k])
		}
		sums[k] = api.Mul(acc, one) // one wire instead of a long sum in every use
	}
	nz := make([]frontend.Variable, len(t.sides))
	ge2 := make([]frontend.Variable, len(t.sides))
	for s := range t.sides {
		cnt := tab.column(api, sums, colSides+t.sideCol+s)
		z := api.IsZero(cnt)
		nz[s] = api.Sub(1, z)
		if t.needGe2[s] {
			ge2[s] = api.Sub(nz[s], api.IsZero(api.Sub(cnt, 1)))
		}
	}
	pv := make([]frontend.Variable, len(t.partners))
	for i, p := range t.partners {
		switch {
		case !p.ge2:
			pv[i] = nz[p.a]
		case p.a == p.b:
			pv[i] = ge2[p.a]
		default:
			pv[i] = api.Sub(api.Add(ge2[p.a], ge2[p.b]), api.Mul(ge2[p.a], ge2[p.b]))
		}
	}
	// Triggers: each slot a key of the trigger table; a trigger set fires
	// when one slot is in it.
	tpows := make([][]frontend.Variable, MaxTriggers)
	for i := range MaxTriggers {
		tpows[i] = t.triggers.powers(api, c.Triggers[i])
	}
	tsums := make([]frontend.Variable, len(tpows[0]))
	tsums[0] = MaxTriggers
	for k := 1; k < len(tsums); k++ {
		acc := frontend.Variable(0)
		for _, p := range tpows {
			acc = api.Add(acc, p[k])
		}
		tsums[k] = acc
	}
	tnz := make([]frontend.Variable, len(t.tsets))
	for s := range t.tsets {
		tnz[s] = api.Sub(1, api.IsZero(t.triggers.column(api, tsums, s)))
	}

	// Nothing unidentified: the one condition every drug's validity shares.
	identified := api.IsZero(c.Unidentified)

	for i := range MaxDrugs {
		x := drugs[i]
		// Each candidate once in U: x differs from every later candidate
		// and every medication (an empty slot is exempt).
		prod := frontend.Variable(1)
		for j := i + 1; j < MaxDrugs; j++ {
			prod = api.Mul(prod, api.Sub(x, drugs[j]))
		}
		for m := range MaxMedications {
			prod = api.Mul(prod, api.Sub(x, c.Meds[m]))
		}
		api.Inverse(api.Add(api.Mul(present[i], api.Sub(prod, 1)), 1))

		// An allergy to the drug itself.
		hit := frontend.Variable(1)
		for _, a := range c.AllergyDrugs {
			hit = api.Mul(hit, api.Sub(x, a))
		}
		self := api.Mul(present[i], api.IsZero(hit))

		sum := api.Mul(self, t.self)
		for p := range t.partners {
			sum = api.Add(sum, api.Mul(pv[p], tab.column(api, pows[i], colSides+t.partnerCol+p)))
		}
		for s := range t.tsets {
			sum = api.Add(sum, api.Mul(tnz[s], tab.column(api, pows[i], colSides+t.tsetCol+s)))
		}
		b := api.ToBinary(sum, t.total)
		var over [findingDigits]frontend.Variable
		for d := range findingDigits {
			digit := frontend.Variable(0)
			for k := range t.width[d] {
				digit = api.Add(digit, api.Mul(b[t.offset[d]+k], pow2(k)))
			}
			over[d] = api.Sub(1, api.IsZero(digit))
		}
		api.AssertIsEqual(c.Interaction[i], api.Add(over[0], over[1], over[2], over[3]))
		api.AssertIsEqual(c.Contraindication[i], api.Add(over[4], over[5], over[6], over[7]))
		api.AssertIsEqual(c.Valid[i], api.Mul(present[i], api.Sub(1, over[2]), api.Sub(1, over[6]), identified))
	}
}
