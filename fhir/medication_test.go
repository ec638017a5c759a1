package fhir_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/fhir"
	"github.com/healthagents/healthagents/fhir/fhirtest"
	"github.com/healthagents/healthagents/prescription"
)

func codeable(text string, codings ...map[string]any) map[string]any {
	cc := map[string]any{}
	if len(codings) > 0 {
		list := make([]any, len(codings))
		for i, c := range codings {
			list[i] = c
		}
		cc["coding"] = list
	}
	if text != "" {
		cc["text"] = text
	}
	return cc
}

func rxnorm(code, display string) map[string]any {
	c := map[string]any{"system": fhir.SystemRxNorm, "code": code}
	if display != "" {
		c["display"] = display
	}
	return c
}

func statement(cc map[string]any) map[string]any {
	return map[string]any{"resourceType": "MedicationStatement", "status": "active", "subject": map[string]any{"reference": "Patient/example"}, "medicationCodeableConcept": cc}
}

// TestMedicationsWithTheCatalogue: with the drug catalogue, a medication
// is read from every coding, its text and its ingredients; the record gets
// catalogue RxCUIs, and the medication's name as sent when it is not
// identified completely.
func TestMedicationsWithTheCatalogue(t *testing.T) {
	t.Parallel()
	drugs, err := prescription.New()
	require.NoError(t, err)
	patient := fhirtest.Example("patient-example")
	tylenolPM := map[string]any{"resourceType": "Medication", "id": "pm", "code": codeable("", map[string]any{"system": fhir.SystemNDC, "code": "50580-506-02", "display": "Tylenol PM"}),
		"ingredient": []any{
			map[string]any{"itemCodeableConcept": codeable("", rxnorm("315266", "Acetaminophen 500 MG"))},
			map[string]any{"itemCodeableConcept": codeable("", rxnorm("901813", "Diphenhydramine Hydrochloride 25 mg"))},
			map[string]any{"itemCodeableConcept": codeable("lactose"), "isActive": false},
		}}
	percocet := map[string]any{"resourceType": "Medication", "id": "perc", "code": codeable("Percocet 5/325"),
		"ingredient": []any{
			map[string]any{"itemCodeableConcept": codeable("", rxnorm("1049621", "oxycodone hydrochloride 5 MG"))},
			map[string]any{"itemCodeableConcept": codeable("acetaminophen 325 MG")},
		}}
	unknownium := map[string]any{"resourceType": "Medication", "id": "half", "code": codeable("acetaminophen"),
		"ingredient": []any{
			map[string]any{"itemCodeableConcept": codeable("acetaminophen 325 MG")},
			map[string]any{"itemCodeableConcept": codeable("unknownium 5 MG")},
		}}
	use := func(ref string) map[string]any {
		return map[string]any{"resourceType": "MedicationRequest", "status": "active", "intent": "order", "subject": map[string]any{"reference": "Patient/example"}, "medicationReference": map[string]any{"reference": ref}}
	}
	for _, tc := range []struct {
		name      string
		resources []any
		want      []string
	}{
		{"ok/SCD code with its display", []any{statement(codeable("", rxnorm("855332", "warfarin sodium 5 MG Oral Tablet")))}, []string{"11289"}},
		{"ok/SCD code we do not list, readable display", []any{statement(codeable("", rxnorm("855296", "warfarin sodium 10 MG Oral Tablet")))}, []string{"11289"}},
		{"ok/free text only", []any{statement(codeable("Coumadin 5 mg tablet"))}, []string{"11289"}},
		{"ok/SNOMED coding, readable display", []any{statement(codeable("", map[string]any{"system": "http://snomed.info/sct", "code": "11289", "display": "Ibuprofen 200mg tablet"}))}, []string{"5640"}},
		{"ok/ingredients name it when the code does not", []any{percocet, use("Medication/perc")}, []string{"7804", "161"}},
		{"fail/unknown code, no display", []any{statement(codeable("", rxnorm("99999999", "")))}, []string{"99999999"}},
		{"fail/SNOMED code, no display, never read as an RxCUI", []any{statement(codeable("", map[string]any{"system": "http://snomed.info/sct", "code": "11289"}))}, []string{"http://snomed.info/sct|11289"}},
		{"fail/local code, no display, never read as a name", []any{statement(codeable("", map[string]any{"system": "urn:local", "code": "warfarin"}))}, []string{"urn:local|warfarin"}},
		{"fail/a text naming one ingredient of two", []any{unknownium, use("Medication/half")}, []string{"161", "unknownium 5 MG"}},
		{"fail/an ingredient not catalogued", []any{tylenolPM, use("Medication/pm")}, []string{"161", "Tylenol PM"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := fhirtest.Bundle(append([]any{patient}, tc.resources...)...)
			rec, src, err := fhir.Map(b, fhir.Options{Drugs: drugs})
			require.NoError(t, err)
			assert.Equal(t, tc.want, rec.Medications)
			require.Len(t, src.Medications, len(tc.want))
			assert.Contains(t, src.Medications[0], "Bundle.entry[")
			d, err := drugs.Validate(t.Context(), rec, "5640")
			require.NoError(t, err)
			if strings.HasPrefix(tc.name, "fail/") {
				require.Len(t, d.Unidentified, 1, "the name as sent is what the agent reports")
				assert.Equal(t, tc.want[len(tc.want)-1], d.Unidentified[0].Entry)
			} else {
				assert.Empty(t, d.Unidentified)
			}
		})
	}

	// Without the catalogue: one code per medication, as before.
	rec, err := fhir.Parse(fhirtest.Bundle(patient, statement(codeable("Coumadin", rxnorm("855332", "warfarin sodium 5 MG Oral Tablet")))), fhir.Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{"855332"}, rec.Medications)
}
