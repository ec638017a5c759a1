package prescription_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"testing/quick"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/prescription"
)

// TestIdentify reads what EHRs send: codes of the RxNorm term types, their
// names by the RxNorm name grammar (SCD, SBD, GPCK, BPCK, SCDC, PIN, MIN),
// salts and esters, and free text with a brand.
func TestIdentify(t *testing.T) {
	t.Parallel()
	a := newAgent(t)
	for _, tc := range []struct {
		name  string
		in    []string
		want  []string
		whole bool
	}{
		{"ok/ingredient RxCUI", []string{"11289"}, []string{"11289"}, true},
		{"ok/SCD RxCUI the data lists", []string{"855332"}, []string{"11289"}, true},
		{"ok/SCD name", []string{"warfarin sodium 5 MG Oral Tablet"}, []string{"11289"}, true},
		{"ok/SBD name, brand in brackets", []string{"warfarin sodium 5 MG Oral Tablet [Coumadin]"}, []string{"11289"}, true},
		{"ok/SCDC", []string{"Acetaminophen 500 MG"}, []string{"161"}, true},
		{"ok/PIN", []string{"warfarin sodium"}, []string{"11289"}, true},
		{"ok/MIN", []string{"acetaminophen / hydrocodone"}, []string{"161", "5489"}, true},
		{"ok/SCD of two ingredients", []string{"acetaminophen 325 MG / hydrocodone bitartrate 5 MG Oral Tablet"}, []string{"161", "5489"}, true},
		{"ok/BPCK of branded tablets", []string{"{6 (azithromycin 250 MG Oral Tablet [Zithromax]) } Pack [Z-PAK]"}, []string{"18631"}, true},
		{"ok/GPCK with inert tablets", []string{"{21 (amoxicillin 500 MG Oral Tablet) / 7 (inert ingredients 1 MG Oral Tablet) } Pack"}, []string{"723"}, true},
		{"ok/extended release with a leading quantity", []string{"24 HR metoprolol succinate 50 MG Extended Release Oral Tablet"}, []string{"6918"}, true},
		{"ok/tall-man letters", []string{"metFORMIN hydrochloride 500 MG Oral Tablet"}, []string{"6809"}, true},
		{"ok/salt with a comma", []string{"nitrofurantoin, macrocrystals 50 MG Oral Capsule"}, []string{"7454"}, true},
		{"ok/two salt words", []string{"penicillin V potassium 250 MG Oral Tablet"}, []string{"7984"}, true},
		{"ok/free text with a brand", []string{"Coumadin 5 mg tablet"}, []string{"11289"}, true},
		{"ok/free text, no strength", []string{"Lipitor tablets"}, []string{"83367"}, true},
		{"ok/free text with and", []string{"sulfamethoxazole and trimethoprim"}, []string{"10180", "10829"}, true},
		{"ok/free text with a slash", []string{"hydrocodone/acetaminophen 5/325 mg tab"}, []string{"5489", "161"}, true},
		{"ok/NDC", []string{"0003-0894-21"}, []string{"1364430"}, true},
		{"ok/one name of several resolves", []string{"99999999", "warfarin sodium 5 MG Oral Tablet"}, []string{"11289"}, true},
		{"fail/unknown code, no display", []string{"99999999"}, nil, false},
		{"fail/unknown NDC", []string{"50580-506-02"}, nil, false},
		{"fail/GPCK with one ingredient not catalogued", []string{"{21 (norethindrone 1 MG / amoxicillin 500 MG Oral Tablet) / 7 (inert ingredients 1 MG Oral Tablet) } Pack"}, []string{"723"}, false},
		{"fail/only inert ingredients", []string{"inert ingredients 1 MG Oral Tablet"}, nil, false},
		{"fail/GPCK of drugs not catalogued", []string{"{21 (ethinyl estradiol 0.035 MG / norethindrone 1 MG Oral Tablet) } Pack"}, nil, false},
		{"fail/a brand that adds an ingredient", []string{"Tylenol PM"}, nil, false},
		{"fail/one ingredient of two unknown", []string{"amoxicillin 500 MG / clavulanate 125 MG Oral Tablet"}, []string{"723"}, false},
		{"fail/SCD of an unknown ingredient with a known brand", []string{"unknownium 5 MG Oral Tablet [Coumadin]"}, []string{"11289"}, false},
		{"fail/only salt words", []string{"sodium chloride 0.9 % Injectable Solution"}, nil, false},
		{"fail/empty", []string{"  "}, nil, false},
		{"fail/nothing", nil, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, whole := a.Identify(tc.in...)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.whole, whole)
		})
	}
}

func TestLookupReadsNames(t *testing.T) {
	t.Parallel()
	a := newAgent(t)
	for _, code := range []string{"855332", "warfarin sodium 5 MG Oral Tablet", "Coumadin 5 mg tablet", "WARFARIN SODIUM"} {
		d, err := a.Lookup(code)
		require.NoError(t, err, code)
		assert.Equal(t, "warfarin", d.Name, code)
	}
	_, err := a.Lookup("acetaminophen 325 MG / hydrocodone bitartrate 5 MG Oral Tablet")
	require.ErrorIs(t, err, prescription.ErrUnknownDrug)
	require.ErrorIs(t, err, prescription.ErrCombination)
	_, err = a.Lookup("Tylenol PM")
	require.ErrorIs(t, err, prescription.ErrUnknownDrug)
	require.NotErrorIs(t, err, prescription.ErrCombination)
}

// TestWarfarinAsEHRsCodeIt is issue 25's case: the patient's warfarin as
// an SCD code or name, or as free text with the brand, still gives the
// warfarin–NSAID finding for ibuprofen.
func TestWarfarinAsEHRsCodeIt(t *testing.T) {
	t.Parallel()
	a := newAgent(t)
	for _, med := range []string{"855332", "warfarin sodium 5 MG Oral Tablet", "Coumadin 5 mg tablet", "warfarin sodium 5 MG Oral Tablet [Coumadin]"} {
		d, err := a.Validate(t.Context(), patient([]string{med}, nil, nil), "5640")
		require.NoError(t, err, med)
		assert.False(t, d.Valid, med)
		require.NotNil(t, d.Blocking, med)
		assert.Equal(t, "warfarin-nsaid", d.Blocking.RuleID, med)
		assert.Empty(t, d.Unidentified, med)
	}
}

func TestAllergies(t *testing.T) {
	t.Parallel()
	a := newAgent(t)
	for _, tc := range []struct {
		name         string
		allergy      string
		drug         string
		unidentified bool
		rule         string
	}{
		{"ok/a rule's allergen", "Penicillin allergy", "723", false, "allergy-penicillin"},
		{"ok/the drug itself, by an SCD name", "warfarin sodium 5 MG Oral Tablet", "11289", false, "allergy-drug-itself"},
		{"ok/the drug itself, by free text", "Coumadin tablets", "11289", false, "allergy-drug-itself"},
		{"ok/a combination names both", "sulfamethoxazole and trimethoprim", "10829", false, "allergy-drug-itself"},
		{"ok/a food, by its FHIR category", "food: kiwi fruit", "11289", false, ""},
		{"ok/a food the list knows, plural", "Cashew nuts", "11289", false, ""},
		{"ok/no known allergies", "NKDA", "11289", false, ""},
		{"fail/a drug not catalogued", "codeine", "11289", true, ""},
		{"fail/a medication category is still read", "medication: codeine", "11289", true, ""},
		{"fail/misspelt", "penicilin", "723", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, err := a.Validate(t.Context(), patient(nil, []string{tc.allergy}, nil), tc.drug)
			require.NoError(t, err)
			if tc.unidentified {
				assert.Equal(t, []prescription.Unidentified{{Kind: "allergy", Entry: tc.allergy}}, d.Unidentified)
				assert.False(t, d.Valid)
				return
			}
			assert.Empty(t, d.Unidentified)
			if tc.rule == "" {
				assert.True(t, d.Valid, d.Reason)
				return
			}
			require.NotEmpty(t, d.Contraindications)
			assert.Equal(t, tc.rule, d.Contraindications[0].RuleID)
		})
	}
}

// TestNeverValidWithAnUnidentifiedEntry: whatever the record and the
// candidates, a decision for a patient with an entry the agent cannot
// identify is never valid, and Facts lists the same entries (the proof
// reads them).
func TestNeverValidWithAnUnidentifiedEntry(t *testing.T) {
	t.Parallel()
	a := newAgent(t)
	drugs := a.Drugs()
	known := func(r *rand.Rand) string {
		d := drugs[r.IntN(len(drugs))]
		switch r.IntN(3) {
		case 0:
			return d.RxCUI
		case 1:
			return d.Name
		}
		return d.Name + " 5 MG Oral Tablet"
	}
	unknown := []string{"99999999", "Tylenol PM", "ethinyl estradiol 0.035 MG Oral Tablet", "unknownium", "12345-6789-0", ""}
	prop := func(seed uint64) bool {
		r := rand.New(rand.NewPCG(seed, 7))
		rec := patient(nil, nil, nil)
		for range r.IntN(6) {
			rec.Medications = append(rec.Medications, known(r))
		}
		bad := unknown[r.IntN(len(unknown))]
		if r.IntN(2) == 0 {
			rec.Medications = append(rec.Medications, bad)
		} else {
			rec.Allergies = append(rec.Allergies, strings.ToUpper(bad)+"x")
		}
		r.Shuffle(len(rec.Medications), func(i, j int) { rec.Medications[i], rec.Medications[j] = rec.Medications[j], rec.Medications[i] })
		candidates := []string{drugs[r.IntN(len(drugs))].RxCUI}
		b, err := a.Check(t.Context(), nil, candidates, rec)
		if err != nil {
			return false
		}
		facts := a.Facts(rec, nil)
		return !b.Valid && !b.Decisions[0].Valid && len(b.Decisions[0].Unidentified) > 0 &&
			len(facts.Unidentified) == len(b.Decisions[0].Unidentified)
	}
	require.NoError(t, quick.Check(prop, &quick.Config{MaxCount: 300}))
}

func TestUnidentifiedEntryIsCutAtARune(t *testing.T) {
	t.Parallel()
	a := newAgent(t)
	long := strings.Repeat("é", 40) // 80 bytes
	d, err := a.Validate(t.Context(), patient([]string{long}, nil, nil), "6809")
	require.NoError(t, err)
	require.Len(t, d.Unidentified, 1)
	e := d.Unidentified[0].Entry
	assert.True(t, utf8.ValidString(e))
	assert.Equal(t, strings.Repeat("é", 32)+"…", e)
}
