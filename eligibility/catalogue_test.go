package eligibility

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEmbeddedCatalogue(t *testing.T) {
	t.Parallel()
	raw, err := dataFS.ReadFile(defaultCatalogue)
	require.NoError(t, err)
	cat, err := parseCatalogue(raw)
	require.NoError(t, err)

	// The specification's five classes, exactly.
	want := []Class{
		{Code: "PROC001", Name: "MRI scan", BaseCoverage: 80, PreAuth: true, Index: 1},
		{Code: "PROC002", Name: "X-ray", BaseCoverage: 60, PreAuth: false, Index: 2},
		{Code: "PROC003", Name: "CT scan", BaseCoverage: 100, PreAuth: true, Index: 3},
		{Code: "PROC004", Name: "Blood work", BaseCoverage: 90, PreAuth: false, Index: 4},
		{Code: "PROC005", Name: "General surgery", BaseCoverage: 85, PreAuth: true, Index: 5},
	}
	assert.Equal(t, want, cat.classes)

	perClass := map[string]int{}
	external := 0
	for code, p := range cat.byCode {
		assert.Equal(t, code, p.Code)
		assert.NotEmpty(t, p.Name, code)
		assert.Contains(t, want, p.Class, code)
		if p.System != SystemHealthagents {
			external++
			perClass[p.Class.Code]++
		}
	}
	assert.GreaterOrEqual(t, external, 40, "realistic CPT/HCPCS set")
	for _, c := range want {
		assert.GreaterOrEqual(t, perClass[c.Code], 5, "class %s has too few real codes", c.Code)
	}
	// Codes the issue names explicitly.
	for code, class := range map[string]string{"70551": "PROC001", "71046": "PROC002", "74177": "PROC003", "85025": "PROC004", "47562": "PROC005", "G0103": "PROC004"} {
		p, ok := cat.byCode[code]
		require.True(t, ok, code)
		assert.Equal(t, class, p.Class.Code, code)
	}
}

func TestParseCatalogueRejects(t *testing.T) {
	t.Parallel()
	const classes = `"classes":[{"code":"PROC001","name":"MRI scan","base_coverage":80,"pre_auth":true,"index":1}]`
	tests := map[string]string{
		"not json":           `{`,
		"unknown field":      `{` + classes + `,"procedures":[],"extra":1}`,
		"no classes":         `{"classes":[],"procedures":[]}`,
		"bad class code":     `{"classes":[{"code":"MRI","name":"x","base_coverage":1,"index":1}]}`,
		"coverage over 100":  `{"classes":[{"code":"PROC001","name":"x","base_coverage":101,"index":1}]}`,
		"index out of range": `{"classes":[{"code":"PROC001","name":"x","base_coverage":1,"index":2}]}`,
		"duplicate index":    `{"classes":[{"code":"PROC001","name":"x","base_coverage":1,"index":1},{"code":"PROC002","name":"y","base_coverage":1,"index":1}]}`,
		"unknown class":      `{` + classes + `,"procedures":[{"code":"70551","name":"x","system":"CPT","class":"PROC009"}]}`,
		"duplicate code":     `{` + classes + `,"procedures":[{"code":"70551","name":"x","system":"CPT","class":"PROC001"},{"code":"70551","name":"y","system":"CPT","class":"PROC001"}]}`,
		"code shadows class": `{` + classes + `,"procedures":[{"code":"proc001","name":"x","system":"HCPCS","class":"PROC001"}]}`,
		"bad cpt":            `{` + classes + `,"procedures":[{"code":"7055","name":"x","system":"CPT","class":"PROC001"}]}`,
		"bad hcpcs":          `{` + classes + `,"procedures":[{"code":"Z9999","name":"x","system":"HCPCS","class":"PROC001"}]}`,
		"unknown system":     `{` + classes + `,"procedures":[{"code":"70551","name":"x","system":"ICD","class":"PROC001"}]}`,
		"procedure no name":  `{` + classes + `,"procedures":[{"code":"70551","name":" ","system":"CPT","class":"PROC001"}]}`,
		"class without name": `{"classes":[{"code":"PROC001","name":"","base_coverage":1,"index":1}]}`,
		"class listed twice": `{"classes":[{"code":"PROC001","name":"x","base_coverage":1,"index":1},{"code":"PROC001","name":"y","base_coverage":1,"index":2}]}`,
		"negative coverage":  `{"classes":[{"code":"PROC001","name":"x","base_coverage":-1,"index":1}]}`,
	}
	for name, doc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := parseCatalogue([]byte(doc))
			require.ErrorIs(t, err, ErrCatalogue)
		})
	}
}
