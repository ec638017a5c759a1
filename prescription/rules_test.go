package prescription_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/prescription"
)

func TestRules(t *testing.T) {
	t.Parallel()
	rules := newAgent(t).Rules()
	assert.Len(t, rules.Interactions, 53)
	assert.Len(t, rules.Contraindications, 31)
	assert.Len(t, rules.Triggers, 77, "distinct triggers")
	assert.Equal(t, prescription.Trigger{Kind: prescription.KindAllergy, Text: "penicillin"}, rules.Triggers[0])
	assert.Equal(t, "allergy:penicillin", rules.Triggers[0].String())
	seen := map[prescription.Trigger]bool{}
	for _, tr := range rules.Triggers {
		assert.False(t, seen[tr], "%s listed twice", tr)
		seen[tr] = true
	}
	for _, r := range rules.Interactions {
		assert.NotEmpty(t, r.A, r.ID)
		assert.NotEmpty(t, r.B, r.ID)
	}
	for _, c := range rules.Contraindications {
		assert.NotEmpty(t, c.Drugs, c.ID)
		for _, i := range c.Triggers {
			assert.Less(t, i, len(rules.Triggers))
		}
	}
}

func TestFacts(t *testing.T) {
	t.Parallel()
	a := newAgent(t)
	rules := a.Rules()
	rec := patient([]string{"11289", "Coumadin", "not-a-drug", "ibuprofen"}, []string{"Penicillin allergy", "latex", "METFORMIN"}, []string{"I50.9", "E11.9", ""})
	f := a.Facts(rec, []string{"5640", "0003-0894-21"})
	assert.Equal(t, []string{"11289", "5640", "1364430"}, f.Medications, "catalogue drugs once each, in order")
	assert.Equal(t, []string{"6809"}, f.AllergyDrugs, "an allergy naming a drug")
	var texts []string
	for _, i := range f.Triggers {
		texts = append(texts, rules.Triggers[i].String())
	}
	assert.Equal(t, []string{"allergy:penicillin", "condition:I50"}, texts)
	assert.True(t, slices.IsSorted(f.Triggers))
	require.Empty(t, a.Facts(nil, nil))
}
