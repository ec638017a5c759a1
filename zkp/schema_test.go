package zkp

import (
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/prescription"
	"github.com/healthagents/healthagents/zkp/statement"
)

// TestSchemas: each circuit's schema is its id and the fields its opening
// names, in order; the prescription schema carries the public lists its
// texts come from (the rule table's triggers, the severity ranks) and its
// per-drug part once per slot.
func TestSchemas(t *testing.T) {
	t.Parallel()
	all, err := Schemas()
	require.NoError(t, err)
	names := append(CircuitNames(), RetiredCircuitNames()...)
	require.Len(t, all, len(names))
	for i, sc := range all {
		assert.Equal(t, names[i], sc.Circuit)
		assert.Zero(t, CircuitID(sc.Circuit).Cmp(sc.CircuitID))
	}
	elig, rx := all[0], all[1]
	// The retired circuits keep their digests' schemas: eligibility-v2 and
	// prescription-v3 are the current ones under their own ids (issue 30
	// changed only the signature check), prescription-v2 lacks unidentified.
	eligV2, rxV3, rxV2 := all[2], all[3], all[4]
	assert.Equal(t, elig.Fields, eligV2.Fields)
	assert.Equal(t, rx.Fields, rxV3.Fields)
	assert.Equal(t, rx.Triggers, rxV2.Triggers)
	assert.Len(t, rxV2.Fields, len(rx.Fields)-1)
	assert.Equal(t, rx.Fields[:62], rxV2.Fields[:62])
	assert.Equal(t, "salt", rxV2.Fields[62].Name)
	assert.NotEqual(t, 0, elig.CircuitID.Cmp(eligV2.CircuitID))
	assert.Len(t, elig.Fields, 13)
	assert.Equal(t, "eligible", elig.Fields[7].Name)
	assert.Len(t, rx.Fields, 5+4*MaxDrugs+MaxMedications+1+MaxAllergyDrugs+1+1)
	assert.Equal(t, statement.FieldSchema{Name: "unidentified", Text: statement.RenderEntries}, rx.Fields[62])
	assert.Equal(t, statement.FieldSchema{Name: "clinical_10", Text: statement.RenderClinical, Slot: "drug_10"}, rx.Fields[5+4*9+3])

	agent, err := prescription.New()
	require.NoError(t, err)
	rules := agent.Rules()
	require.Len(t, rx.Triggers, len(rules.Triggers))
	for i, tr := range rules.Triggers {
		assert.Equal(t, tr.String(), rx.Triggers[i])
	}
	assert.Equal(t, []string{"none", "minor", "moderate", "major", "contraindicated"}, rx.Ranks)
	assert.Less(t, len(rx.Triggers), int(rx.TriggerBase), "a trigger position fits its base")

	_, err = Schema("eligibility-v1")
	require.Error(t, err)
}

// TestStatementsFollowTheirSchema: the statements the prover hands out —
// with facts that fill every kind of text (a medication, triggers, a drug
// allergy, an interaction, an empty slot) — follow their circuit's schema,
// and one that does not is never handed out.
func TestStatementsFollowTheirSchema(t *testing.T) {
	t.Parallel()
	c := signed(t, testTerms())
	st, err := EligibilityV3Statement(eligIn(c, "70551", june, true, 80, true))
	require.NoError(t, err)
	sc, err := Schema(CircuitEligibilityV3)
	require.NoError(t, err)
	require.NoError(t, st.CheckSchema(sc))

	agent, err := prescription.New()
	require.NoError(t, err)
	var penicillin int
	for i, tr := range agent.Rules().Triggers {
		if tr.String() == "allergy:penicillin" {
			penicillin = i
		}
	}
	in := PrescriptionV4Input{Credential: c, Drugs: []string{"1191", "6809"}, ServiceDate: june,
		Facts: prescription.Facts{Medications: []string{"11289"}, Triggers: []int{penicillin}, AllergyDrugs: []string{"723"},
			Unidentified: []prescription.Unidentified{{Kind: prescription.EntryAllergy, Entry: "codeine"}}}}
	rx, outs, err := PrescriptionV4Statement(in)
	require.NoError(t, err)
	sc, err = Schema(CircuitPrescriptionV4)
	require.NoError(t, err)
	require.NoError(t, rx.CheckSchema(sc))
	assert.Equal(t, 3, outs[0].InteractionRank, "aspirin with warfarin: major")
	texts := map[string]string{}
	for _, f := range rx.Opening.Fields {
		texts[f.Name] = f.Text
	}
	assert.Equal(t, "interaction=major contraindication=none valid=false", texts["clinical_1"])
	assert.Equal(t, "", texts["clinical_3"], "an empty slot")
	assert.Equal(t, "allergy:penicillin", texts["triggers"])
	assert.Equal(t, "11289", texts["medication_1"])
	assert.Equal(t, "723", texts["allergy_drug_1"])
	assert.Equal(t, `["allergy: codeine"]`, texts["unidentified"])

	// An opening whose text is not its value's rendering is refused.
	op := rx.Opening
	op.Fields = append([]statement.Field(nil), op.Fields...)
	op.Fields[4].Text = "2026-06-02"
	_, err = newStatement(op)
	require.ErrorIs(t, err, statement.ErrText)
	op.Fields[4].Text = rx.Opening.Fields[4].Text
	op.Fields[4].Value = new(big.Int).Add(op.Fields[4].Value, big.NewInt(1))
	_, err = newStatement(op)
	require.ErrorIs(t, err, statement.ErrText)
	// So is one whose unidentified entries are not the ones committed.
	op.Fields[4].Value = rx.Opening.Fields[4].Value
	op.Fields[62].Text = `["allergy: penicillin"]`
	_, err = newStatement(op)
	require.ErrorIs(t, err, statement.ErrText)
}
