package zkp

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/consensys/gnark/frontend"

	"github.com/healthagents/healthagents/credential"
	"github.com/healthagents/healthagents/prescription"
	"github.com/healthagents/healthagents/zkp/statement"
)

// MaxDrugs is how many medications one prescription-v4 proof covers (the v1
// API's most per prescription): a
// request's drugs fill the first slots, the rest are empty (0). One proof
// and one transaction per request, so nothing links a patient's drugs on
// chain.
const MaxDrugs = 10

// PrescriptionV4Circuit is the statement behind a prescription: "the payer
// whose key hashes to IssuerKeyHash signed coverage terms for this subject;
// on this day, for each of these drugs, the plan covers it or not, the
// public formulary puts it on this tier, and against the public
// interaction and contraindication rules, with these current medications,
// matched allergy/condition triggers and drug allergies, its most severe
// interaction and contraindication have these ranks and it is valid or
// not" — and no drug is valid when the patient has a medication or allergy
// the service could not identify (the unidentified field, non-zero then).
// Public inputs: IssuerKeyHash, Digest, CircuitID; the rest is in the
// digest (docs/statement.md). prescription-v2, its predecessor, had no
// unidentified field: an entry it could not identify was left out of the
// facts.
type PrescriptionV4Circuit struct {
	Credential signedVars

	ServiceDay frontend.Variable
	Drugs      [MaxDrugs]frontend.Variable // StringField(RxCUI), 0 for an empty slot
	Covered    [MaxDrugs]frontend.Variable
	Tier       [MaxDrugs]frontend.Variable
	Clinical   clinicalVars
	Salt       frontend.Variable

	IssuerKeyHash frontend.Variable `gnark:",public"`
	Digest        frontend.Variable `gnark:",public"`
	CircuitID     frontend.Variable `gnark:",public"`
}

// drugCatalogue is the public formulary and interaction table compiled
// into prescription-v4: keys the RxCUI fields (and 0, the empty slot),
// columns the tier (0 when the formulary does not cover the drug), present
// (1 for a drug) and the clinical table's (clinical.go).
type drugCatalogue struct {
	tier     map[string]int
	table    *lookupTable
	clinical *clinicalTable
}

var (
	drugsOnce sync.Once
	drugsV3   *drugCatalogue
	drugsErr  error
)

func formulary() (*drugCatalogue, error) {
	drugsOnce.Do(func() {
		agent, err := prescription.New()
		if err != nil {
			drugsErr = err
			return
		}
		drugs := agent.Drugs()
		sort.Slice(drugs, func(i, j int) bool { return drugs[i].RxCUI < drugs[j].RxCUI })
		c := &drugCatalogue{tier: map[string]int{}}
		keys, tiers, present := []*big.Int{big.NewInt(0)}, []*big.Int{big.NewInt(0)}, []*big.Int{big.NewInt(0)}
		rx := []string{""}
		for _, d := range drugs {
			k, err := codeField("rxcui", d.RxCUI)
			if err != nil {
				drugsErr = err
				return
			}
			t := 0
			if d.Formulary.Covered {
				t = d.Formulary.Tier
			}
			c.tier[d.RxCUI] = t
			keys, tiers, present = append(keys, k), append(tiers, big.NewInt(int64(t))), append(present, big.NewInt(1))
			rx = append(rx, d.RxCUI)
		}
		clinical, cols, err := compileClinical(agent.Rules(), rx)
		if err != nil {
			drugsErr = err
			return
		}
		c.clinical = clinical
		c.table = newLookupTable(keys, append([][]*big.Int{tiers, present}, cols...)...)
		drugsV3 = c
	})
	return drugsV3, drugsErr
}

// prescriptionV4Fields names the digest's fields: five, then drug,
// covered, tier and the clinical findings (clinicalField) for each slot,
// then the medications, the triggers (packed: triggersField), the drug
// allergies, the unidentified entries (UnidentifiedValue) and the salt.
// Each comes with how its text renders (the statement's schema: Schema).
func prescriptionV4Fields() []statement.FieldSchema {
	f := func(name string, r statement.Render) statement.FieldSchema {
		return statement.FieldSchema{Name: name, Text: r}
	}
	fields := []statement.FieldSchema{f("subject_commitment", statement.RenderNone), f("payer_id", statement.RenderCode),
		f("plan_id", statement.RenderCode), f("revocation_nonce", statement.RenderNumber), f("service_day", statement.RenderDay)}
	for i := range MaxDrugs {
		n := strconv.Itoa(i + 1)
		fields = append(fields, f("drug_"+n, statement.RenderCode), f("covered_"+n, statement.RenderFlag),
			f("formulary_tier_"+n, statement.RenderNumber),
			statement.FieldSchema{Name: "clinical_" + n, Text: statement.RenderClinical, Slot: "drug_" + n})
	}
	for i := range MaxMedications {
		fields = append(fields, f("medication_"+strconv.Itoa(i+1), statement.RenderCode))
	}
	fields = append(fields, f("triggers", statement.RenderTriggers))
	for i := range MaxAllergyDrugs {
		fields = append(fields, f("allergy_drug_"+strconv.Itoa(i+1), statement.RenderCode))
	}
	return append(fields, f("unidentified", statement.RenderEntries), f("salt", statement.RenderNone))
}

// Define implements frontend.Circuit.
func (c *PrescriptionV4Circuit) Define(api frontend.API) error {
	cat, err := formulary()
	if err != nil {
		return err
	}
	cred := &c.Credential
	cred.verify(api, c.IssuerKeyHash)
	api.AssertIsEqual(c.CircuitID, CircuitID(CircuitPrescriptionV4))
	api.ToBinary(c.ServiceDay, DayBits)
	inForce := cred.covered(api, c.ServiceDay)

	values := []frontend.Variable{cred.Fields[fSubject], cred.Fields[fPayer], cred.Fields[fPlan], cred.Fields[fNonce], c.ServiceDay}
	pows := make([][]frontend.Variable, MaxDrugs)
	present := make([]frontend.Variable, MaxDrugs)
	for i := range MaxDrugs {
		pows[i] = cat.table.powers(api, c.Drugs[i]) // a catalogued drug, or 0
		present[i] = cat.table.column(api, pows[i], 1)
		covered := api.Mul(inForce, present[i], api.Sub(1, cred.excludes(api, c.Drugs[i])))
		api.AssertIsEqual(c.Covered[i], covered)
		api.AssertIsEqual(c.Tier[i], cat.table.column(api, pows[i], 0))
	}
	// A wire equal to 1 (CircuitID is asserted above): multiplying a long
	// linear combination by it stores it in one wire.
	one := api.IsZero(api.Sub(c.CircuitID, CircuitID(CircuitPrescriptionV4)))
	cl := &c.Clinical
	cl.define(api, cat, c.Drugs[:], pows, present, one)
	for i := range MaxDrugs {
		clinical := api.Add(cl.Interaction[i], api.Mul(cl.Contraindication[i], 8), api.Mul(cl.Valid[i], 64))
		values = append(values, c.Drugs[i], c.Covered[i], c.Tier[i], clinical)
	}
	values = append(values, cl.Meds[:]...)
	packed := frontend.Variable(0)
	for i := MaxTriggers - 1; i >= 0; i-- {
		packed = api.Add(api.Mul(packed, triggerBase), cl.Triggers[i])
	}
	values = append(values, packed)
	values = append(values, cl.AllergyDrugs[:]...)
	values = append(values, cl.Unidentified, c.Salt)
	api.AssertIsEqual(c.Digest, digestOf(api, values))
	return nil
}

// PrescriptionV4Input is a prescription's drugs (RxCUIs, 1 to MaxDrugs
// distinct ones) to prove from a payer's credential on a day, with the
// patient's facts the clinical checks read (prescription.Agent.Facts):
// at most MaxMedications current medications other than the drugs,
// MaxTriggers triggers and MaxAllergyDrugs drug allergies, and any number
// of unidentified entries (listed in the opening; with one, no drug is
// valid).
type PrescriptionV4Input struct {
	Credential  *credential.Credential
	Drugs       []string
	ServiceDate time.Time
	Facts       prescription.Facts
	Salt        *big.Int // nil draws one
}

// PrescriptionV4Outcome is what the proof states for one drug.
type PrescriptionV4Outcome struct {
	RxCUI   string
	Covered bool // the plan covers it on the day: active, in the window, not excluded
	Tier    int  // formulary tier, 0 when the formulary does not cover it
	// InteractionRank and ContraindicationRank are the ranks
	// (prescription.Severity.Rank) of the most severe interaction and
	// contraindication, 0 for none; Valid is neither being 3 or more and
	// no entry of the patient's being unidentified.
	InteractionRank      int
	ContraindicationRank int
	Valid                bool
}

func prescriptionV4Statement(in PrescriptionV4Input, salt *big.Int) (*PrescriptionV4Circuit, statement.Opening, []PrescriptionV4Outcome, error) {
	var op statement.Opening
	cat, err := formulary()
	if err != nil {
		return nil, op, nil, err
	}
	drugs := distinct(in.Drugs)
	if len(drugs) == 0 || len(drugs) > MaxDrugs {
		return nil, op, nil, fmt.Errorf("%w: a prescription proof covers 1 to %d drugs, not %d", ErrRecordTooLarge, MaxDrugs, len(drugs))
	}
	for _, d := range drugs {
		if _, ok := cat.tier[d]; !ok {
			return nil, op, nil, fmt.Errorf("%w: a drug is not in the circuit's formulary", ErrRecordTooLarge)
		}
	}
	var meds []string // current medications other than the drugs
	for _, m := range distinct(in.Facts.Medications) {
		if _, ok := cat.tier[m]; !ok {
			return nil, op, nil, fmt.Errorf("%w: a current medication is not in the circuit's formulary", ErrRecordTooLarge)
		}
		if !slices.Contains(drugs, m) {
			meds = append(meds, m)
		}
	}
	triggers := slices.Clone(in.Facts.Triggers)
	slices.Sort(triggers)
	triggers = slices.Compact(triggers)
	allergy := distinct(in.Facts.AllergyDrugs)
	for _, tr := range triggers {
		if tr < 0 || tr >= len(cat.clinical.rules.Triggers) {
			return nil, op, nil, fmt.Errorf("%w: a trigger index is outside the trigger list", ErrRecordTooLarge)
		}
	}
	for _, a := range allergy {
		if _, ok := cat.tier[a]; !ok {
			return nil, op, nil, fmt.Errorf("%w: a drug allergy is not in the circuit's formulary", ErrRecordTooLarge)
		}
	}
	switch {
	case len(meds) > MaxMedications:
		return nil, op, nil, fmt.Errorf("%w: a prescription proof covers at most %d current medications, not %d", ErrRecordTooLarge, MaxMedications, len(meds))
	case len(triggers) > MaxTriggers:
		return nil, op, nil, fmt.Errorf("%w: a prescription proof covers at most %d matched allergy and condition triggers, not %d", ErrRecordTooLarge, MaxTriggers, len(triggers))
	case len(allergy) > MaxAllergyDrugs:
		return nil, op, nil, fmt.Errorf("%w: a prescription proof covers at most %d drug allergies, not %d", ErrRecordTooLarge, MaxAllergyDrugs, len(allergy))
	}
	w, err := decodeSigned(in.Credential)
	if err != nil {
		return nil, op, nil, err
	}
	day, err := dayOf(in.ServiceDate)
	if err != nil {
		return nil, op, nil, err
	}
	inForce, valid := w.covered(day)
	if !valid {
		return nil, op, nil, fmt.Errorf("%w: %w", ErrUnsatisfied, credential.ErrExpired)
	}
	irank, crank := cat.clinical.findings(drugs, meds, triggers, allergy)
	unidentified, unidentifiedText := UnidentifiedValue(in.Facts.Unidentified)
	a := &PrescriptionV4Circuit{Credential: w.vars, ServiceDay: day, Salt: salt, IssuerKeyHash: w.keyHash, CircuitID: CircuitID(CircuitPrescriptionV4)}
	op = statement.Opening{Circuit: CircuitPrescriptionV4, CircuitID: CircuitID(CircuitPrescriptionV4), IssuerKeyHash: w.keyHash, RevocationNonce: w.nonce,
		Fields: []statement.Field{
			{Name: "subject_commitment", Value: w.subject},
			{Name: "payer_id", Value: w.fields[fPayer], Text: in.Credential.Terms.PayerID},
			{Name: "plan_id", Value: w.fields[fPlan], Text: in.Credential.Terms.PlanID},
			{Name: "revocation_nonce", Value: w.fields[fNonce], Text: strconv.FormatUint(w.nonce, 10)},
			{Name: "service_day", Value: new(big.Int).SetUint64(day), Text: dayText(day)},
		}}
	var outs []PrescriptionV4Outcome
	cl := &a.Clinical
	code := func(list []string, i int) (*big.Int, string, error) {
		if i >= len(list) {
			return big.NewInt(0), "", nil
		}
		v, err := codeField("rxcui", list[i])
		return v, list[i], err
	}
	for i := range MaxDrugs {
		n := strconv.Itoa(i + 1)
		drug, text, err := code(drugs, i)
		if err != nil {
			return nil, op, nil, err
		}
		o := PrescriptionV4Outcome{RxCUI: text}
		if i < len(drugs) {
			o.Covered, o.Tier = inForce && !w.excludes(drug), cat.tier[text]
			o.InteractionRank, o.ContraindicationRank = irank[i], crank[i]
			o.Valid = irank[i] < 3 && crank[i] < 3 && unidentified.Sign() == 0
			outs = append(outs, o)
		}
		a.Drugs[i], a.Covered[i], a.Tier[i] = drug, bit(o.Covered), o.Tier
		cl.Interaction[i], cl.Contraindication[i], cl.Valid[i] = o.InteractionRank, o.ContraindicationRank, bit(o.Valid)
		op.Fields = append(op.Fields,
			statement.Field{Name: "drug_" + n, Value: drug, Text: text},
			statement.Field{Name: "covered_" + n, Value: bit(o.Covered), Text: strconv.FormatBool(o.Covered)},
			statement.Field{Name: "formulary_tier_" + n, Value: big.NewInt(int64(o.Tier)), Text: strconv.Itoa(o.Tier)},
			clinicalField(n, o, i < len(drugs)))
	}
	for i := range MaxMedications {
		v, text, err := code(meds, i)
		if err != nil {
			return nil, op, nil, err
		}
		cl.Meds[i] = v
		op.Fields = append(op.Fields, statement.Field{Name: "medication_" + strconv.Itoa(i+1), Value: v, Text: text})
	}
	packed, texts := new(big.Int), make([]string, len(triggers))
	for i := MaxTriggers - 1; i >= 0; i-- {
		v := big.NewInt(0)
		if i < len(triggers) {
			v, texts[i] = big.NewInt(int64(triggers[i]+1)), cat.clinical.triggerText(triggers[i])
		}
		cl.Triggers[i] = v
		packed.Mul(packed, big.NewInt(triggerBase)).Add(packed, v)
	}
	op.Fields = append(op.Fields, statement.Field{Name: "triggers", Value: packed, Text: strings.Join(texts, " ")})
	for i := range MaxAllergyDrugs {
		v, text, err := code(allergy, i)
		if err != nil {
			return nil, op, nil, err
		}
		cl.AllergyDrugs[i] = v
		op.Fields = append(op.Fields, statement.Field{Name: "allergy_drug_" + strconv.Itoa(i+1), Value: v, Text: text})
	}
	cl.Unidentified = unidentified
	op.Fields = append(op.Fields,
		statement.Field{Name: "unidentified", Value: unidentified, Text: unidentifiedText},
		statement.Field{Name: "salt", Value: salt})
	d, err := op.Recompute()
	if err != nil {
		return nil, op, nil, err
	}
	a.Digest = d
	return a, op, outs, nil
}

// UnidentifiedValue is the unidentified field of a prescription-v4
// statement for the patient's unidentified entries: its text is a JSON
// array of "kind: entry" strings in the record's order
// (`["medication: Tylenol PM"]`), its value statement.EntriesValue of the
// text; no entries are the value 0 and the text "". A non-zero value
// makes every drug not valid (docs/statement.md, "Entries").
func UnidentifiedValue(entries []prescription.Unidentified) (*big.Int, string) {
	if len(entries) == 0 {
		return new(big.Int), ""
	}
	list := make([]string, len(entries))
	for i, e := range entries {
		list[i] = e.Kind + ": " + e.Entry
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(list) // a []string always encodes
	text := strings.TrimSuffix(b.String(), "\n")
	return statement.EntriesValue(text), text
}

// distinct is list without repeats, in order.
func distinct(list []string) []string {
	var out []string
	for _, s := range list {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// triggerBase packs the trigger slots into one field: Σ tᵢ·128^(i−1), tᵢ
// the 1-based index of the i-th matched trigger in the public list (0 for
// an empty slot; the list has fewer than 128 entries).
const triggerBase = 128

// clinicalField is slot n's clinical findings: the value
// interaction_rank + 8·contraindication_rank + 64·valid (0 for an empty
// slot), the text "interaction=major contraindication=none valid=false".
func clinicalField(n string, o PrescriptionV4Outcome, present bool) statement.Field {
	v := int64(o.InteractionRank + 8*o.ContraindicationRank + 64*boolInt(o.Valid))
	f := statement.Field{Name: "clinical_" + n, Value: big.NewInt(v)}
	if present {
		f.Text = "interaction=" + rankText(o.InteractionRank) + " contraindication=" + rankText(o.ContraindicationRank) + " valid=" + strconv.FormatBool(o.Valid)
	}
	return f
}

// rankText is a rank's severity name, "none" for 0.
func rankText(r int) string {
	for _, s := range []prescription.Severity{prescription.SeverityMinor, prescription.SeverityModerate, prescription.SeverityMajor, prescription.SeverityContraindicated} {
		if s.Rank() == r {
			return string(s)
		}
	}
	return "none"
}

// ProvePrescriptionV4 proves in with the prescription-v4 circuit: one proof
// for every drug of the request. It returns the proof, the statement and
// what it states per drug (each distinct drug once, in the request's
// order). Errors as for
// ProveEligibilityV3.
func (p *Prover) ProvePrescriptionV4(ctx context.Context, in PrescriptionV4Input) (*Proof, statement.Statement, []PrescriptionV4Outcome, error) {
	salt, err := p.salt(in.Salt)
	if err != nil {
		return nil, statement.Statement{}, nil, err
	}
	a, op, outs, err := prescriptionV4Statement(in, salt)
	if err != nil {
		return nil, statement.Statement{}, nil, err
	}
	st, err := newStatement(op)
	if err != nil {
		return nil, statement.Statement{}, nil, err
	}
	proof, err := p.prove(ctx, CircuitPrescriptionV4, a)
	if err != nil {
		return nil, statement.Statement{}, nil, err
	}
	return proof, st, outs, nil
}
