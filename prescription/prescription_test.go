package prescription_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/prescription"
	"github.com/healthagents/healthagents/record"
)

func newAgent(t testing.TB) *prescription.Agent {
	t.Helper()
	a, err := prescription.New()
	require.NoError(t, err)
	return a
}

func patient(meds, allergies, conditions []string) *record.Record {
	return &record.Record{PatientID: "PT-1", Medications: meds, Allergies: allergies, Conditions: conditions}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	a := newAgent(t)

	tests := []struct {
		name   string
		rec    *record.Record
		code   string
		valid  bool
		reason string
		rule   string // RuleID of Blocking, or of the blocking contraindication, or of the first finding
		nInter int
		nContr int
	}{
		{"fail/warfarin with current ibuprofen", patient([]string{"5640"}, nil, nil), "11289",
			false, "Drug interaction detected with ibuprofen", "warfarin-nsaid", 1, 0},
		{"fail/ibuprofen with current warfarin", patient([]string{"11289"}, nil, nil), "ibuprofen",
			false, "Drug interaction detected with warfarin", "warfarin-nsaid", 1, 0},
		{"fail/warfarin with current aspirin", patient([]string{"1191"}, nil, nil), "warfarin",
			false, "Drug interaction detected with aspirin", "warfarin-aspirin", 1, 0},
		{"fail/amoxicillin with penicillin allergy", patient(nil, []string{"penicillin"}, nil), "723",
			false, "Contraindication detected for amoxicillin", "allergy-penicillin", 0, 1},
		{"fail/allergy written differently", patient(nil, []string{"  Penicillin  Allergy "}, nil), "Amoxil",
			false, "Contraindication detected for amoxicillin", "allergy-penicillin", 0, 1},
		{"fail/sulfa allergy and sulfamethoxazole", patient(nil, []string{"Sulfa"}, nil), "10180",
			false, "Contraindication detected for sulfamethoxazole", "allergy-sulfonamide-antibiotic", 0, 1},
		{"fail/allergy to the drug itself by brand", patient(nil, []string{"coumadin"}, nil), "11289",
			false, "Contraindication detected for warfarin", "allergy-drug-itself", 0, 1},
		{"fail/nsaid allergy covers aspirin", patient(nil, []string{"NSAIDs"}, nil), "aspirin",
			false, "Contraindication detected for aspirin", "allergy-nsaid", 0, 1},
		{"fail/metformin in CKD stage 5", patient(nil, nil, []string{"N18.5"}), "6809",
			false, "Contraindication detected for metformin", "ckd-metformin", 0, 1},
		{"fail/metformin in ESRD, dotless code", patient(nil, nil, []string{"n186"}), "metformin",
			false, "Contraindication detected for metformin", "ckd-metformin", 0, 1},
		{"fail/warfarin in pregnancy", patient(nil, nil, []string{"O09.90"}), "11289",
			false, "Contraindication detected for warfarin", "pregnancy-warfarin", 0, 1},
		{"fail/lisinopril pregnant state", patient(nil, nil, []string{"Z33.1"}), "29046",
			false, "Contraindication detected for lisinopril", "pregnancy-raas", 0, 1},
		{"fail/atorvastatin in pregnancy is major", patient(nil, nil, []string{"Z34.00"}), "83367",
			false, "Contraindication detected for atorvastatin", "pregnancy-statin", 0, 1},
		{"fail/naproxen with peptic ulcer", patient(nil, nil, []string{"K25.4"}), "7258",
			false, "Contraindication detected for naproxen", "ulcer-nsaid", 0, 1},
		{"fail/interaction named before contraindication", patient([]string{"1191"}, nil, []string{"O24.419"}), "11289",
			false, "Drug interaction detected with aspirin", "warfarin-aspirin", 1, 1},
		{"fail/most severe interaction blocks", patient([]string{"17767", "21212"}, nil, nil), "36567",
			false, "Drug interaction detected with clarithromycin", "onc-statin-cyp3a4", 2, 0},
		{"ok/clean drug", patient([]string{"29046", "6809"}, []string{"latex"}, []string{"E11.9", "I10"}), "17767",
			true, "", "", 0, 0},
		{"ok/no medications at all", patient(nil, nil, nil), "amoxicillin", true, "", "", 0, 0},
		{"ok/moderate interaction reported", patient([]string{"7646"}, nil, nil), "32968",
			true, "", "clopidogrel-ppi", 1, 0},
		{"ok/minor sulfa cross-reactivity reported", patient(nil, []string{"sulfa"}, nil), "furosemide",
			true, "", "allergy-sulfonamide-nonantibiotic", 0, 1},
		{"ok/postpartum code is not pregnancy", patient(nil, nil, []string{"O90.89"}), "11289", true, "", "", 0, 0},
		{"ok/refill of a current drug", patient([]string{"11289"}, nil, nil), "11289", true, "", "", 0, 0},
		{"ok/duplicate current entries counted once", patient([]string{"7646", "omeprazole", "7646"}, nil, nil), "clopidogrel",
			true, "", "clopidogrel-ppi", 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, err := a.Validate(t.Context(), tc.rec, tc.code)
			require.NoError(t, err)
			assert.True(t, d.InteractionsChecked)
			assert.Equal(t, tc.valid, d.Valid)
			assert.Equal(t, tc.reason, d.Reason)
			assert.Len(t, d.Interactions, tc.nInter)
			assert.Len(t, d.Contraindications, tc.nContr)
			switch {
			case d.Blocking != nil:
				assert.Equal(t, tc.rule, d.Blocking.RuleID)
				assert.True(t, d.Blocking.Severity.Blocks())
				assert.Equal(t, d.Interactions[0], *d.Blocking)
			case d.BlockingContraindication != nil:
				assert.Equal(t, tc.rule, d.BlockingContraindication.RuleID)
			case len(d.Interactions) > 0:
				assert.Equal(t, tc.rule, d.Interactions[0].RuleID)
				assert.False(t, d.Interactions[0].Severity.Blocks())
			case len(d.Contraindications) > 0:
				assert.Equal(t, tc.rule, d.Contraindications[0].RuleID)
				assert.False(t, d.Contraindications[0].Severity.Blocks())
			default:
				assert.Empty(t, tc.rule)
			}
			for _, ia := range d.Interactions {
				assert.NotEmpty(t, ia.Mechanism)
				assert.NotEmpty(t, ia.Management)
				assert.NotEmpty(t, ia.Source)
			}
			// The reason never repeats the patient's allergies or conditions:
			// without the drug names it names, nothing of them is left.
			rest := strings.ToLower(strings.ReplaceAll(d.Reason, d.Drug.Name, ""))
			if d.Blocking != nil {
				rest = strings.ReplaceAll(rest, d.Blocking.With.Name, "")
			}
			for _, x := range append(append([]string{}, tc.rec.Allergies...), tc.rec.Conditions...) {
				if x = strings.TrimSpace(x); x != "" {
					assert.NotContains(t, rest, strings.ToLower(x))
				}
			}
		})
	}
}

// TestHighPriorityInteractions checks that a pair from each of the fifteen
// classes of the ONC high-priority list (Phansalkar et al., JAMIA 2012, table
// 2), warfarin with NSAIDs and aspirin, and other label contraindications
// invalidate a prescription, in both directions, through the expected rule.
func TestHighPriorityInteractions(t *testing.T) {
	t.Parallel()
	a := newAgent(t)
	tests := []struct{ drug, current, rule string }{
		// The fifteen ONC classes.
		{"dextroamphetamine", "phenelzine", "onc-amphetamine-maoi"},
		{"pseudoephedrine", "selegiline", "onc-amphetamine-maoi"},
		{"atazanavir", "omeprazole", "onc-atazanavir-ppi"},
		{"febuxostat", "azathioprine", "onc-febuxostat-thiopurine"},
		{"fluoxetine", "tranylcypromine", "onc-serotonergic-maoi"},
		{"duloxetine", "isocarboxazid", "onc-serotonergic-maoi"},
		{"irinotecan", "ketoconazole", "onc-irinotecan-cyp3a4-inhibitor"},
		{"meperidine", "phenelzine", "onc-opioid-maoi"},
		{"tramadol", "isocarboxazid", "onc-opioid-maoi"},
		{"amitriptyline", "tranylcypromine", "onc-tca-maoi"},
		{"sotalol", "methadone", "onc-high-risk-qt"},
		{"ramelteon", "fluvoxamine", "onc-ramelteon-cyp1a2"},
		{"rifampin", "darunavir", "onc-inducer-protease-inhibitor"},
		{"simvastatin", "clarithromycin", "onc-statin-cyp3a4"},
		{"lovastatin", "atazanavir", "onc-statin-cyp3a4"},
		{"ergotamine", "ritonavir", "onc-ergot-cyp3a4"},
		{"tizanidine", "ciprofloxacin", "onc-tizanidine-cyp1a2"},
		{"tizanidine", "fluvoxamine", "onc-tizanidine-cyp1a2"},
		{"tranylcypromine", "procarbazine", "onc-tranylcypromine-procarbazine"},
		{"sumatriptan", "phenelzine", "onc-triptan-maoi"},
		// Warfarin with NSAIDs and aspirin.
		{"warfarin", "naproxen", "warfarin-nsaid"},
		{"warfarin", "celecoxib", "warfarin-nsaid"},
		{"warfarin", "aspirin", "warfarin-aspirin"},
		// Label contraindications outside the ONC list.
		{"bupropion", "phenelzine", "bupropion-maoi"},
		{"ketoconazole", "cisapride", "cisapride-cyp3a4-inhibitor"},
		{"linezolid", "sertraline", "linezolid-serotonergic"},
		{"methotrexate", "trimethoprim", "methotrexate-trimethoprim"},
		{"sildenafil", "nitroglycerin", "pde5-nitrate"},
		{"tadalafil", "isosorbide mononitrate", "pde5-nitrate"},
		{"voriconazole", "phenobarbital", "voriconazole-inducer"},
		{"thioridazine", "moxifloxacin", "thioridazine-qt"},
		{"irinotecan", "rifampin", "irinotecan-inducer"},
	}
	for _, tc := range tests {
		for _, dir := range [][2]string{{tc.drug, tc.current}, {tc.current, tc.drug}} {
			t.Run(dir[0]+"+"+dir[1], func(t *testing.T) {
				t.Parallel()
				cur, err := a.Lookup(dir[1])
				require.NoError(t, err)
				d, err := a.Validate(t.Context(), patient([]string{cur.RxCUI}, nil, nil), dir[0])
				require.NoError(t, err)
				require.False(t, d.Valid)
				require.NotNil(t, d.Blocking)
				assert.Equal(t, tc.rule, d.Blocking.RuleID)
				assert.Equal(t, "Drug interaction detected with "+cur.Name, d.Reason)
			})
		}
	}
}

func TestValidateErrors(t *testing.T) {
	t.Parallel()
	a := newAgent(t)

	_, err := a.Validate(t.Context(), patient(nil, nil, nil), "not-a-drug")
	require.ErrorIs(t, err, prescription.ErrUnknownDrug)
	assert.Contains(t, err.Error(), "not-a-drug")

	_, err = a.Validate(t.Context(), patient(nil, nil, nil), "99999999")
	require.ErrorIs(t, err, prescription.ErrUnknownDrug)

	_, err = a.Validate(t.Context(), nil, "11289")
	require.ErrorIs(t, err, prescription.ErrNoRecord)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = a.Validate(ctx, patient(nil, nil, nil), "11289")
	require.ErrorIs(t, err, context.Canceled)

	long := strings.Repeat("x", 5000)
	_, err = a.Validate(t.Context(), patient(nil, nil, nil), long)
	require.ErrorIs(t, err, prescription.ErrUnknownDrug)
	assert.Less(t, len(err.Error()), 200)
}

func TestUnidentifiedCurrentMedication(t *testing.T) {
	t.Parallel()
	a := newAgent(t)
	d, err := a.Validate(t.Context(), patient([]string{"9999999", "5640"}, nil, nil), "warfarin")
	require.NoError(t, err)
	assert.Equal(t, []prescription.Unidentified{{Kind: "medication", Entry: "9999999"}}, d.Unidentified)
	assert.False(t, d.Valid, "the recognised ibuprofen is still checked")
	assert.Equal(t, "Drug interaction detected with ibuprofen", d.Reason, "a blocking finding's reason wins")
	assert.True(t, d.Blocked())

	// Nothing blocks, but what the patient takes is unknown: not valid.
	d, err = a.Validate(t.Context(), patient([]string{"9999999"}, nil, nil), "warfarin")
	require.NoError(t, err)
	assert.False(t, d.Valid)
	assert.False(t, d.Blocked())
	assert.Equal(t, prescription.ReasonUnidentified, d.Reason)
	assert.NotContains(t, d.Reason, "9999999", "the reason names nothing from the record")
}

func TestCheck(t *testing.T) {
	t.Parallel()
	a := newAgent(t)

	t.Run("fail/interaction between two new drugs", func(t *testing.T) {
		t.Parallel()
		b, err := a.Check(t.Context(), nil, []string{"warfarin", "amlodipine", "5640"}, patient(nil, nil, nil))
		require.NoError(t, err)
		require.Len(t, b.Decisions, 3)
		assert.False(t, b.Valid)
		assert.True(t, b.InteractionsChecked)
		assert.Equal(t, "Drug interaction detected with ibuprofen", b.Decisions[0].Reason)
		assert.True(t, b.Decisions[0].Blocking.BetweenCandidates)
		assert.True(t, b.Decisions[1].Valid)
		assert.Equal(t, "Drug interaction detected with warfarin", b.Decisions[2].Reason)
	})
	t.Run("fail/extra current medication from the caller", func(t *testing.T) {
		t.Parallel()
		b, err := a.Check(t.Context(), []string{"00069-4220-30"}, []string{"isosorbide mononitrate", "metformin"}, patient([]string{"6809"}, nil, nil))
		require.NoError(t, err)
		assert.False(t, b.Valid)
		assert.Equal(t, "Drug interaction detected with sildenafil", b.Decisions[0].Reason)
		assert.False(t, b.Decisions[0].Blocking.BetweenCandidates)
		assert.True(t, b.Decisions[1].Valid, "metformin is already taken: no self-interaction")
	})
	t.Run("ok/all valid", func(t *testing.T) {
		t.Parallel()
		b, err := a.Check(t.Context(), nil, []string{"lisinopril", "metformin", "atorvastatin"}, patient(nil, nil, []string{"E11.9"}))
		require.NoError(t, err)
		assert.True(t, b.Valid)
		for _, d := range b.Decisions {
			assert.True(t, d.Valid)
			assert.Empty(t, d.Reason)
		}
	})
	t.Run("fail/unknown candidate", func(t *testing.T) {
		t.Parallel()
		_, err := a.Check(t.Context(), nil, []string{"warfarin", "unobtainium"}, patient(nil, nil, nil))
		require.ErrorIs(t, err, prescription.ErrUnknownDrug)
		assert.Contains(t, err.Error(), "unobtainium")
	})
	t.Run("fail/no candidates", func(t *testing.T) {
		t.Parallel()
		_, err := a.Check(t.Context(), []string{"warfarin"}, nil, patient(nil, nil, nil))
		require.ErrorIs(t, err, prescription.ErrNoCandidates)
	})
}

func TestLookup(t *testing.T) {
	t.Parallel()
	a := newAgent(t)
	tests := []struct {
		in, rxcui string
	}{
		{"11289", "11289"},
		{" 723 ", "723"},
		{"Warfarin", "11289"},
		{"  ISOSORBIDE   mononitrate ", "6058"},
		{"coumadin", "11289"},
		{"paracetamol", "161"},
		{"0003-0894-21", "1364430"},  // 4-4-2
		{"00003-0894-21", "1364430"}, // 5-4-2
		{"00003089421", "1364430"},   // 11 digits
		{"50458-580-30", "1114195"},  // 5-3-2
		{"0071-0155-23", "83367"},
		{"00069-4220-30", "136411"},
	}
	for _, tc := range tests {
		t.Run("ok/"+tc.in, func(t *testing.T) {
			t.Parallel()
			d, err := a.Lookup(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.rxcui, d.RxCUI)
		})
	}
	for _, in := range []string{"", "  ", "0", "12345678", "unknown", "0003089421", "00003-0894-2x", "00003-0894-99"} {
		t.Run("fail/"+in, func(t *testing.T) {
			t.Parallel()
			_, err := a.Lookup(in)
			require.ErrorIs(t, err, prescription.ErrUnknownDrug)
		})
	}
	_, err := a.Lookup("0003089421")
	require.ErrorIs(t, err, prescription.ErrInvalidNDC, "10 digits without hyphens is ambiguous")

	d, err := a.Lookup("apixaban")
	require.NoError(t, err)
	d.NDCs[0] = "changed" // a copy: the agent is unaffected
	d2, err := a.Lookup("apixaban")
	require.NoError(t, err)
	assert.Equal(t, "00003089421", d2.NDCs[0])
}

func TestNormalizeNDC(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string // want "" = error
	}{
		{"0003-0894-21", "00003089421"},  // 4-4-2 → labeler padded
		{"50458-580-30", "50458058030"},  // 5-3-2 → product padded
		{"12345-6789-1", "12345678901"},  // 5-4-1 → package padded
		{"12345-6789-01", "12345678901"}, // 5-4-2 as is
		{"00003089421", "00003089421"},   // 11 digits as is
		{" 00003089421\n", "00003089421"},
		{"0003089421", ""},     // 10 digits, no hyphens: ambiguous
		{"000308942", ""},      // 9 digits
		{"000030894210", ""},   // 12 digits
		{"", ""},               // empty
		{"0003-0894-2A", ""},   // letter
		{"ABCDE-1234-12", ""},  // letters
		{"1234-567-12", ""},    // 4-3-2
		{"123456-789-1", ""},   // 6-3-1
		{"1234-5678-901", ""},  // 4-4-3
		{"12345-67-890", ""},   // 5-2-3
		{"12345-6789", ""},     // two segments
		{"1-2345-6789-01", ""}, // four segments
		{"12345--6789", ""},    // empty segment
		{"-12345-6789", ""},    // leading hyphen
		{"12345 6789 01", ""},  // spaces inside
		{"１２３４５-6789-01", ""},  // full-width digits
		{"+1234567890", ""},    // sign
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := prescription.NormalizeNDC(tc.in)
			if tc.want == "" {
				require.ErrorIs(t, err, prescription.ErrInvalidNDC)
				assert.Empty(t, got)
				if strings.TrimSpace(tc.in) != "" {
					assert.NotContains(t, err.Error(), strings.TrimSpace(tc.in), "errors never echo the input")
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func FuzzNormalizeNDC(f *testing.F) {
	for _, s := range []string{"0003-0894-21", "50458-580-30", "12345-6789-1", "00003089421", "0003089421", "a-b-c", "--", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := prescription.NormalizeNDC(s)
		if err != nil {
			require.ErrorIs(t, err, prescription.ErrInvalidNDC)
			require.Empty(t, out)
			return
		}
		require.Len(t, out, 11)
		for _, c := range out {
			require.True(t, c >= '0' && c <= '9')
		}
		again, err := prescription.NormalizeNDC(out)
		require.NoError(t, err)
		require.Equal(t, out, again, "idempotent")
		// The digits of the input survive, in order, with at most one zero added.
		digits := strings.ReplaceAll(strings.TrimSpace(s), "-", "")
		require.True(t, len(digits) == 10 || len(digits) == 11)
		if len(digits) == 11 {
			require.Equal(t, digits, out)
		}
	})
}

func FuzzLookup(f *testing.F) {
	a := newAgent(f)
	for _, s := range []string{"11289", "warfarin", "Coumadin", "0003-0894-21", "00003089421", "0003089421", "", "-", "12345678901"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := a.Lookup(s)
		if err != nil {
			require.ErrorIs(t, err, prescription.ErrUnknownDrug)
			return
		}
		again, err := a.Lookup(d.RxCUI)
		require.NoError(t, err)
		require.Equal(t, d, again)
	})
}

func BenchmarkValidate(b *testing.B) {
	a := newAgent(b)
	rec := patient([]string{"5640", "6809", "29046", "83367", "7646"}, []string{"penicillin", "latex"}, []string{"E11.9", "I10", "N18.3"})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		d, err := a.Validate(ctx, rec, "11289")
		if err != nil || d.Valid {
			b.Fatal(err, d.Valid)
		}
	}
}
