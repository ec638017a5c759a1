package prescription

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEmbeddedData(t *testing.T) {
	t.Parallel()
	d, err := embeddedData()
	require.NoError(t, err)
	k, err := loadKnowledge(d)
	require.NoError(t, err)

	assert.GreaterOrEqual(t, len(k.drugs), 60)
	// RxCUIs the issue names; the catalogue must use exactly these.
	for rxcui, name := range map[string]string{
		"11289": "warfarin", "723": "amoxicillin", "29046": "lisinopril", "6809": "metformin",
		"83367": "atorvastatin", "5640": "ibuprofen", "1191": "aspirin", "36567": "simvastatin",
		"21212": "clarithromycin", "136411": "sildenafil", "4917": "nitroglycerin",
	} {
		i, ok := k.byRxCUI[rxcui]
		require.True(t, ok, rxcui)
		assert.Equal(t, name, k.drugs[i].Name)
	}
	ndcs := 0
	for _, dr := range k.drugs {
		ndcs += len(dr.NDCs)
	}
	assert.Positive(t, ndcs)

	severities := map[Severity]int{}
	onc := 0
	for _, r := range k.interactions {
		severities[r.Severity]++
		if strings.HasPrefix(r.ID, "onc-") {
			onc++
			assert.Contains(t, r.Source, "Phansalkar")
		}
	}
	assert.Equal(t, 15, onc, "the fifteen classes of the ONC high-priority list")
	for _, s := range []Severity{SeverityContraindicated, SeverityMajor, SeverityModerate, SeverityMinor} {
		assert.Positive(t, severities[s], s)
	}
	kinds := map[string]int{}
	for _, r := range k.contra {
		kinds[r.Kind]++
	}
	assert.GreaterOrEqual(t, kinds[KindAllergy], 5)
	assert.GreaterOrEqual(t, kinds[KindCondition], 5)
}

func TestLoadKnowledgeRejects(t *testing.T) {
	t.Parallel()
	good, err := embeddedData()
	require.NoError(t, err)
	const drugs = `{"drugs":[
	 {"rxcui":"11289","name":"warfarin","class":"anticoagulant","formulary":{"covered":true,"tier":1}},
	 {"rxcui":"5640","name":"ibuprofen","class":"nsaid","formulary":{"covered":true,"tier":1}}]}`
	const inter = `{"rules":[{"id":"w-n","a":{"rxcuis":["11289"]},"b":{"groups":["nsaid"]},"severity":"major","mechanism":"m","management":"g","source":"s"}]}`
	const contra = `{"rules":[{"id":"c","kind":"condition","triggers":["K25"],"drugs":{"groups":["nsaid"]},"severity":"major","reason":"r","management":"g","source":"s"}]}`
	_, err = loadKnowledge(Data{Drugs: []byte(drugs), Interactions: []byte(inter), Contraindications: []byte(contra)})
	require.NoError(t, err, "the minimal base case is valid")
	withProduct := func(p string) []byte { return []byte(strings.Replace(drugs, "]}", "],\"products\":["+p+"]}", 1)) }
	k, err := loadKnowledge(Data{Drugs: withProduct(`{"rxcui":"855332","tty":"SCD","name":"warfarin sodium 5 MG Oral Tablet"}`), Interactions: []byte(inter), Contraindications: []byte(contra)})
	require.NoError(t, err, "a product the grammar reads")
	assert.Equal(t, drugSet{0}, k.byProduct["855332"])

	sub := func(doc, old, repl string) []byte { return []byte(strings.Replace(doc, old, repl, 1)) }
	tests := map[string]Data{
		"drugs not json":           {Drugs: []byte(`[`), Interactions: good.Interactions, Contraindications: good.Contraindications},
		"unknown field":            {Drugs: sub(drugs, `"class"`, `"klass":"x","class"`), Interactions: []byte(inter), Contraindications: []byte(contra)},
		"bad rxcui":                {Drugs: sub(drugs, `"11289"`, `"11289a"`), Interactions: []byte(inter), Contraindications: []byte(contra)},
		"duplicate rxcui":          {Drugs: sub(drugs, `"5640"`, `"11289"`), Interactions: []byte(inter), Contraindications: []byte(contra)},
		"duplicate name":           {Drugs: sub(drugs, `"ibuprofen"`, `"Warfarin"`), Interactions: []byte(inter), Contraindications: []byte(contra)},
		"numeric name":             {Drugs: sub(drugs, `"ibuprofen"`, `"12345"`), Interactions: []byte(inter), Contraindications: []byte(contra)},
		"bad ndc":                  {Drugs: sub(drugs, `"class":"nsaid"`, `"class":"nsaid","ndcs":["0003-0894-21"]`), Interactions: []byte(inter), Contraindications: []byte(contra)},
		"no class":                 {Drugs: sub(drugs, `"nsaid"`, `""`), Interactions: []byte(inter), Contraindications: []byte(contra)},
		"covered with tier 0":      {Drugs: sub(drugs, `"tier":1`, `"tier":0`), Interactions: []byte(inter), Contraindications: []byte(contra)},
		"rule unknown rxcui":       {Drugs: []byte(drugs), Interactions: sub(inter, `["11289"]`, `["1"]`), Contraindications: []byte(contra)},
		"rule unknown group":       {Drugs: []byte(drugs), Interactions: sub(inter, `["nsaid"]`, `["nsiad"]`), Contraindications: []byte(contra)},
		"rule bad severity":        {Drugs: []byte(drugs), Interactions: sub(inter, `"major"`, `"severe"`), Contraindications: []byte(contra)},
		"rule empty side":          {Drugs: []byte(drugs), Interactions: sub(inter, `{"rxcuis":["11289"]}`, `{}`), Contraindications: []byte(contra)},
		"rule no management":       {Drugs: []byte(drugs), Interactions: sub(inter, `"g"`, `" "`), Contraindications: []byte(contra)},
		"contra bad icd":           {Drugs: []byte(drugs), Interactions: []byte(inter), Contraindications: sub(contra, `"K25"`, `"peptic ulcer"`)},
		"contra bad kind":          {Drugs: []byte(drugs), Interactions: []byte(inter), Contraindications: sub(contra, `"condition"`, `"diet"`)},
		"contra no triggers":       {Drugs: []byte(drugs), Interactions: []byte(inter), Contraindications: sub(contra, `["K25"]`, `[]`)},
		"contra duplicate id":      {Drugs: []byte(drugs), Interactions: sub(inter, `"w-n"`, `"c"`), Contraindications: []byte(contra)},
		"contra empty allergen":    {Drugs: []byte(drugs), Interactions: []byte(inter), Contraindications: sub(strings.Replace(contra, `"condition"`, `"allergy"`, 1), `["K25"]`, `[" "]`)},
		"product unresolved":       {Drugs: withProduct(`{"rxcui":"855332","tty":"SCD","name":"unknownium 5 MG Oral Tablet"}`), Interactions: []byte(inter), Contraindications: []byte(contra)},
		"product is an ingredient": {Drugs: withProduct(`{"rxcui":"5640","tty":"SCD","name":"warfarin sodium 5 MG Oral Tablet"}`), Interactions: []byte(inter), Contraindications: []byte(contra)},
		"product bad term type":    {Drugs: withProduct(`{"rxcui":"855332","tty":"IN","name":"warfarin sodium 5 MG Oral Tablet"}`), Interactions: []byte(inter), Contraindications: []byte(contra)},
		"product listed twice":     {Drugs: withProduct(`{"rxcui":"855332","tty":"SCD","name":"warfarin sodium 5 MG Oral Tablet"},{"rxcui":"855332","tty":"SCD","name":"warfarin 5 MG Oral Tablet"}`), Interactions: []byte(inter), Contraindications: []byte(contra)},
		"names without salts":      {Drugs: []byte(drugs), Interactions: []byte(inter), Contraindications: []byte(contra), Names: []byte(`{"forms":["tablet"]}`)},
		"names unknown field":      {Drugs: []byte(drugs), Interactions: []byte(inter), Contraindications: []byte(contra), Names: []byte(`{"salts":["sodium"],"forms":["tablet"],"brands":[]}`)},
	}
	for name, d := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := loadKnowledge(d)
			require.ErrorIs(t, err, ErrData)
		})
	}
}

// TestPairsKeepMostSevere: when several rules cover one pair, the most
// severe wins regardless of file order; on a tie the earlier rule wins.
func TestPairsKeepMostSevere(t *testing.T) {
	t.Parallel()
	const drugs = `{"drugs":[
	 {"rxcui":"1","name":"a","class":"x","groups":["g"],"formulary":{"covered":true,"tier":1}},
	 {"rxcui":"2","name":"b","class":"y","groups":["g"],"formulary":{"covered":true,"tier":1}}]}`
	const inter = `{"rules":[
	 {"id":"general","a":{"groups":["g"]},"b":{"groups":["g"]},"severity":"moderate","mechanism":"m","management":"g","source":"s"},
	 {"id":"specific","a":{"rxcuis":["2"]},"b":{"rxcuis":["1"]},"severity":"major","mechanism":"m","management":"g","source":"s"},
	 {"id":"tie","a":{"rxcuis":["1"]},"b":{"rxcuis":["2"]},"severity":"major","mechanism":"m","management":"g","source":"s"}]}`
	const contra = `{"rules":[{"id":"c","kind":"allergy","triggers":["x"],"drugs":{"rxcuis":["1"]},"severity":"major","reason":"r","management":"g","source":"s"}]}`
	k, err := loadKnowledge(Data{Drugs: []byte(drugs), Interactions: []byte(inter), Contraindications: []byte(contra)})
	require.NoError(t, err)
	require.Len(t, k.pairs, 1)
	assert.Equal(t, "specific", k.interactions[k.pairs[pair(0, 1)]].ID)

	d, err := embeddedData()
	require.NoError(t, err)
	k, err = loadKnowledge(d)
	require.NoError(t, err)
	for _, tc := range []struct{ a, b, rule string }{
		{"10502", "2556", "thioridazine-qt"},    // also "qt-qt" (moderate)
		{"9947", "6813", "onc-high-risk-qt"},    // also "class3-antiarrhythmic-qt" (major)
		{"2556", "26225", "qt-qt"},              // only the general QT rule
		{"36567", "85762", "onc-statin-cyp3a4"}, // PI by class and strong inhibitor by group
	} {
		ri, ok := k.pairs[pair(k.byRxCUI[tc.a], k.byRxCUI[tc.b])]
		require.True(t, ok, tc.rule)
		assert.Equal(t, tc.rule, k.interactions[ri].ID)
	}
}
