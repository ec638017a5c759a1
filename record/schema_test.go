package record_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/record"
)

// TestJSONSchemaAgreesWithParser validates records against the published
// JSON Schema (docs/record.schema.json) with a real JSON Schema 2020-12
// validator, and checks the parser accepts and refuses the same ones.
func TestJSONSchemaAgreesWithParser(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../docs/record.schema.json")
	require.NoError(t, err)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	require.NoError(t, c.AddResource("record.schema.json", doc))
	schema, err := c.Compile("record.schema.json")
	require.NoError(t, err)

	sample, err := os.ReadFile("../testdata/record.json")
	require.NoError(t, err)
	for _, tc := range []struct {
		in    string
		valid bool
	}{
		{string(sample), true},
		{`{"patient_id":"P1"}`, true},
		{`{"schema":"healthagents/record/v1","patient_id":"P1","coverage":{"member_id":"M","status":"active","start":"2026-01-01","end":"2026-12-31","coverage_overrides":{"PROC001":90}}}`, true},
		{`{}`, false},
		{`{"patient_id":"P1","schema":"other"}`, false},
		{`{"patient_id":"P1","birth_date":"1968-13-40"}`, false},
		{`{"patient_id":"P1","coverage":{"member_id":"M","status":"maybe","start":"2026-01-01","end":"2026-12-31"}}`, false},
		{`{"patient_id":"P1","coverage":{"status":"active","start":"2026-01-01","end":"2026-12-31"}}`, false},
		{`{"patient_id":"P1","coverage":{"member_id":"M","status":"active","start":"2026-01-01","end":"2026-12-31","coverage_overrides":{"PROC001":101}}}`, false},
		{`{"patient_id":"P1","observations":{"bmi":"high"}}`, false},
		{`{"patient_id":"P1","name":{"family":"Müller-Lüdenscheidt","given":"Zoë"}}`, true},
		{`{"patient_id":"P1","name":{"family":"Doe"}}`, false},
		{`{"patient_id":"P1","name":{"family":"Doe","given":"  "}}`, false},
	} {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(tc.in)))
		require.NoError(t, err)
		schemaErr := schema.Validate(inst)
		_, parseErr := record.Parse([]byte(tc.in))
		if tc.valid {
			require.NoError(t, schemaErr, tc.in)
			require.NoError(t, parseErr, tc.in)
		} else {
			require.Error(t, schemaErr, tc.in)
			require.Error(t, parseErr, tc.in)
		}
	}
}
