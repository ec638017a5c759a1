package zkp

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/prescription"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/zkp/statement"
)

// randomPatient is a record whose medications, allergies and conditions
// are drawn mostly from what the rules mention (so findings are common),
// with some noise, and 1 to MaxDrugs candidates (repeats allowed).
func randomPatient(r *rand.Rand, agent *prescription.Agent, rules prescription.Rules) (*record.Record, []string) {
	var ruled []string // drugs some rule names
	for _, ir := range rules.Interactions {
		ruled = append(ruled, ir.A...)
		ruled = append(ruled, ir.B...)
	}
	for _, c := range rules.Contraindications {
		ruled = append(ruled, c.Drugs...)
	}
	drugs := agent.Drugs()
	pick := func() string {
		if r.IntN(4) == 0 {
			return drugs[r.IntN(len(drugs))].RxCUI
		}
		return ruled[r.IntN(len(ruled))]
	}
	rec := &record.Record{PatientID: "PT-1"}
	for range r.IntN(9) {
		switch r.IntN(6) {
		case 0:
			rec.Medications = append(rec.Medications, "not-a-drug")
		case 1:
			rec.Medications = append(rec.Medications, drugs[r.IntN(len(drugs))].Name)
		default:
			rec.Medications = append(rec.Medications, pick())
		}
	}
	for range r.IntN(3) {
		var allergens []string
		for _, t := range rules.Triggers {
			if t.Kind == prescription.KindAllergy {
				allergens = append(allergens, t.Text)
			}
		}
		switch r.IntN(4) {
		case 0:
			d := drugs[r.IntN(len(drugs))]
			rec.Allergies = append(rec.Allergies, strings.ToUpper(d.Name)+" allergy")
		case 1:
			rec.Allergies = append(rec.Allergies, "latex")
		default:
			rec.Allergies = append(rec.Allergies, allergens[r.IntN(len(allergens))])
		}
	}
	for range r.IntN(3) {
		var prefixes []string
		for _, t := range rules.Triggers {
			if t.Kind == prescription.KindCondition {
				prefixes = append(prefixes, t.Text)
			}
		}
		if r.IntN(4) == 0 {
			rec.Conditions = append(rec.Conditions, "E11.9")
			continue
		}
		p := prefixes[r.IntN(len(prefixes))]
		if len(p) > 3 {
			p = p[:3] + "." + p[3:]
		}
		rec.Conditions = append(rec.Conditions, p+strings.Repeat("1", r.IntN(2)))
	}
	cands := make([]string, 1+r.IntN(MaxDrugs))
	for i := range cands {
		cands[i] = pick()
	}
	return rec, cands
}

// TestClinicalAgreesWithAgent is the property that the circuit and the
// prescription agent never disagree: for random patients and
// prescriptions, the ranks and validity the statement carries (computed as
// the circuit's witness) equal prescription.Agent.Check's decisions, and a
// sample of them satisfies the circuit.
func TestClinicalAgreesWithAgent(t *testing.T) {
	t.Parallel()
	agent, err := prescription.New()
	require.NoError(t, err)
	rules := agent.Rules()
	c := signed(t, testTerms())
	r := rand.New(rand.NewPCG(16, 2026))
	// Every rule alone first, then random patients.
	type tc struct {
		rec   *record.Record
		cands []string
	}
	var cases []tc
	for _, ir := range rules.Interactions {
		cases = append(cases, tc{&record.Record{Medications: ir.B[len(ir.B)-1:]}, ir.A[:1]})
	}
	for _, cr := range rules.Contraindications {
		rec := &record.Record{}
		tr := rules.Triggers[cr.Triggers[0]]
		if tr.Kind == prescription.KindAllergy {
			rec.Allergies = []string{tr.Text}
		} else {
			rec.Conditions = []string{tr.Text}
		}
		cases = append(cases, tc{rec, cr.Drugs[len(cr.Drugs)-1:]})
	}
	for range 400 {
		rec, cands := randomPatient(r, agent, rules)
		cases = append(cases, tc{rec, cands})
	}
	found := map[string]int{}
	for n, k := range cases {
		rec, cands := k.rec, k.cands
		b, err := agent.Check(t.Context(), nil, cands, rec)
		require.NoError(t, err)
		facts := agent.Facts(rec, nil)
		a, _, outs, err := prescriptionV4Statement(PrescriptionV4Input{Credential: c, Drugs: cands, ServiceDate: june, Facts: facts}, big.NewInt(int64(n)))
		if err != nil {
			require.ErrorIs(t, err, ErrRecordTooLarge)
			found["beyond limits"]++
			continue
		}
		byDrug := map[string]PrescriptionV4Outcome{}
		for _, o := range outs {
			byDrug[o.RxCUI] = o
		}
		for _, d := range b.Decisions {
			o, ok := byDrug[d.Drug.RxCUI]
			require.True(t, ok)
			ir, cr := 0, 0
			for _, ia := range d.Interactions {
				ir = max(ir, ia.Severity.Rank())
			}
			for _, ci := range d.Contraindications {
				cr = max(cr, ci.Severity.Rank())
			}
			msg := fmt.Sprintf("case %d, drug %s", n, d.Drug.RxCUI)
			assert.Equal(t, ir, o.InteractionRank, msg)
			assert.Equal(t, cr, o.ContraindicationRank, msg)
			assert.Equal(t, d.Valid, o.Valid, msg)
			found[fmt.Sprintf("interaction %d", ir)]++
			found[fmt.Sprintf("contraindication %d", cr)]++
		}
		if n%40 == 0 {
			require.NoError(t, solveRx(t, a), "case %d", n)
		}
	}
	t.Logf("findings over the cases: %v", found)
	for _, k := range []string{"interaction 1", "interaction 2", "interaction 3", "interaction 4", "contraindication 2", "contraindication 3", "contraindication 4"} {
		assert.Positive(t, found[k], "the random cases never produce %s", k)
	}
}

// TestClinicalSoundness: a false finding, or a fact outside the public
// tables, cannot be proven.
func TestClinicalSoundness(t *testing.T) {
	t.Parallel()
	agent, err := prescription.New()
	require.NoError(t, err)
	rules := agent.Rules()
	penicillin := slices.Index(rules.Triggers, prescription.Trigger{Kind: prescription.KindAllergy, Text: "penicillin"})
	require.GreaterOrEqual(t, penicillin, 0)
	c := signed(t, testTerms())
	// warfarin with ibuprofen (major), amoxicillin with a penicillin
	// allergy (contraindicated), metformin clean.
	facts := prescription.Facts{Medications: []string{"5640"}, Triggers: []int{penicillin}, AllergyDrugs: []string{"6809"}}
	a, op, outs, err := prescriptionV4Statement(PrescriptionV4Input{Credential: c, Drugs: []string{"11289", "723", "6809", "11289"}, ServiceDate: june, Facts: facts}, big.NewInt(3))
	require.NoError(t, err)
	require.NoError(t, solveRx(t, a))
	require.Len(t, outs, 3, "a repeated drug is stated once")
	assert.Equal(t, PrescriptionV4Outcome{RxCUI: "11289", Covered: true, Tier: 1, InteractionRank: 3, Valid: false}, outs[0])
	assert.Equal(t, 4, outs[1].ContraindicationRank)
	assert.Equal(t, 4, outs[2].ContraindicationRank, "an allergy to metformin itself")
	assert.Equal(t, "5640", op.Fields[slices.IndexFunc(op.Fields, func(f statement.Field) bool { return f.Name == "medication_1" })].Text)

	for name, m := range map[string]func(a *PrescriptionV4Circuit){
		"false interaction rank":      func(a *PrescriptionV4Circuit) { a.Clinical.Interaction[0] = 2 },
		"interaction hidden":          func(a *PrescriptionV4Circuit) { a.Clinical.Interaction[0], a.Clinical.Valid[0] = 0, 1 },
		"false contraindication rank": func(a *PrescriptionV4Circuit) { a.Clinical.Contraindication[1] = 3 },
		"false valid bit":             func(a *PrescriptionV4Circuit) { a.Clinical.Valid[0] = 1 },
		"valid empty slot":            func(a *PrescriptionV4Circuit) { a.Clinical.Valid[6] = 1 },
		"medication not in catalogue": func(a *PrescriptionV4Circuit) { a.Clinical.Meds[0] = big.NewInt(424242) },
		"trigger outside the list":    func(a *PrescriptionV4Circuit) { a.Clinical.Triggers[0] = big.NewInt(int64(len(rules.Triggers) + 1)) },
		"medication is a candidate":   func(a *PrescriptionV4Circuit) { a.Clinical.Meds[1] = a.Drugs[2] },
		"candidate repeated":          func(a *PrescriptionV4Circuit) { a.Drugs[3] = a.Drugs[2] },
	} {
		b := *a
		m(&b)
		assert.Error(t, solveRx(t, &b), name)
	}

	var many []string
	for _, d := range agent.Drugs() {
		if d.RxCUI != "1191" {
			many = append(many, d.RxCUI)
		}
	}
	for name, f := range map[string]prescription.Facts{
		"too many medications": {Medications: many[:MaxMedications+1]},
		"unknown medication":   {Medications: []string{"99999999"}},
		"trigger out of range": {Triggers: []int{len(rules.Triggers)}},
		"negative trigger":     {Triggers: []int{-1}},
		"too many triggers":    {Triggers: []int{0, 1, 2, 3, 4, 5, 6, 7, 8}},
		"too many allergies":   {AllergyDrugs: many[:MaxAllergyDrugs+1]},
	} {
		_, _, _, err := prescriptionV4Statement(PrescriptionV4Input{Credential: c, Drugs: []string{"1191"}, ServiceDate: june, Facts: f}, big.NewInt(3))
		assert.ErrorIs(t, err, ErrRecordTooLarge, name)
	}
}
