package statement_test

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/zkp/statement"
)

// testSchema has one field of every rendering.
func testSchema() statement.Schema {
	return statement.Schema{
		Circuit: "test-v1", CircuitID: big.NewInt(77),
		Fields: []statement.FieldSchema{
			{Name: "subject", Text: statement.RenderNone},
			{Name: "code", Text: statement.RenderCode},
			{Name: "nonce", Text: statement.RenderNumber},
			{Name: "day", Text: statement.RenderDay},
			{Name: "flag", Text: statement.RenderFlag},
			{Name: "copay", Text: statement.RenderCents},
			{Name: "drug", Text: statement.RenderCode},
			{Name: "clinical", Text: statement.RenderClinical, Slot: "drug"},
			{Name: "triggers", Text: statement.RenderTriggers},
			{Name: "revocation_nonce", Text: statement.RenderNumber},
		},
		Ranks:    []string{"none", "minor", "moderate", "major", "contraindicated"},
		Triggers: []string{"allergy:penicillin", "condition:I21", "condition:N18"}, TriggerBase: 128, TriggerSlots: 8,
	}
}

func field(s string) *big.Int { return new(big.Int).SetBytes([]byte(s)) }

// testOpening is an opening that follows testSchema, with the texts
// written out by hand.
func testOpening() statement.Opening {
	n := big.NewInt
	return statement.Opening{Circuit: "test-v1", CircuitID: n(77), IssuerKeyHash: n(88), RevocationNonce: 7,
		Fields: []statement.Field{
			{Name: "subject", Value: n(123456)},
			{Name: "code", Value: field("PROC001"), Text: "PROC001"},
			{Name: "nonce", Value: n(7), Text: "7"},
			{Name: "day", Value: n(20454), Text: "2026-01-01"},
			{Name: "flag", Value: n(1), Text: "true"},
			{Name: "copay", Value: n(2505), Text: "25.05"},
			{Name: "drug", Value: field("11289"), Text: "11289"},
			{Name: "clinical", Value: n(3 + 8*0 + 64*0), Text: "interaction=major contraindication=none valid=false"},
			{Name: "triggers", Value: n(3*128 + 1), Text: "allergy:penicillin condition:N18"},
			{Name: "revocation_nonce", Value: n(7), Text: "7"},
		}}
}

func TestSchemaTexts(t *testing.T) {
	t.Parallel()
	sc := testSchema()
	o := testOpening()
	st, err := statement.New(o)
	require.NoError(t, err)
	require.NoError(t, st.CheckSchema(sc))
	require.NoError(t, sc.CheckNames(o))
	assert.Empty(t, sc.CheckTexts(o))

	text := func(name string, v *big.Int, slot *big.Int) (string, error) {
		values := o.Values()
		for i, f := range sc.Fields {
			if f.Name == "drug" && slot != nil {
				values[i] = slot
			}
		}
		for i, f := range sc.Fields {
			if f.Name == name {
				values[i] = v
				return sc.Text(values, i)
			}
		}
		t.Fatalf("no field %s", name)
		return "", nil
	}
	n := big.NewInt
	for _, tc := range []struct {
		name  string
		value *big.Int
		slot  *big.Int
		want  string
	}{
		{"code", n(0), nil, ""},
		{"flag", n(0), nil, "false"},
		{"copay", n(0), nil, "0.00"},
		{"copay", n(100000), nil, "1000.00"},
		{"day", n(0), nil, "1970-01-01"},
		{"day", n(2932896), nil, "9999-12-31"},
		{"clinical", n(0), n(0), ""}, // an empty slot
		{"clinical", n(0), nil, "interaction=none contraindication=none valid=false"}, // a drug in the slot
		{"clinical", n(64), nil, "interaction=none contraindication=none valid=true"}, // valid
		{"clinical", n(2 + 8*4), nil, "interaction=moderate contraindication=contraindicated valid=false"},
		{"triggers", n(0), nil, ""},
		{"triggers", n(2), nil, "condition:I21"},
		{"subject", n(5), nil, ""},
	} {
		got, err := text(tc.name, tc.value, tc.slot)
		require.NoError(t, err, "%s %s", tc.name, tc.value)
		assert.Equal(t, tc.want, got, "%s %s", tc.name, tc.value)
	}
	for _, tc := range []struct {
		name  string
		value *big.Int
		slot  *big.Int
		err   string
	}{
		{"flag", n(2), nil, "not a flag"},
		{"day", n(2932897), nil, "before 10000-01-01"},
		{"code", new(big.Int).SetBytes([]byte{0xff, 0xfe}), nil, "UTF-8"},
		{"code", new(big.Int).Lsh(n(1), 250), nil, "1-31 byte"},
		{"clinical", n(5), nil, "ranks 0-4"},
		{"clinical", n(128), nil, "ranks 0-4"},
		{"clinical", n(64), n(0), "empty slot"},
		{"triggers", n(4), nil, "trigger 4 of a list of 3"},
		{"triggers", new(big.Int).Exp(n(128), n(8), nil), nil, "more than 8"},
	} {
		_, err := text(tc.name, tc.value, tc.slot)
		require.Error(t, err, "%s %s", tc.name, tc.value)
		assert.Contains(t, err.Error(), tc.err)
	}
}

func TestSchemaRefusals(t *testing.T) {
	t.Parallel()
	sc := testSchema()
	t.Run("fail/names swapped", func(t *testing.T) {
		o := testOpening()
		o.Fields[1].Name, o.Fields[2].Name = o.Fields[2].Name, o.Fields[1].Name
		err := sc.CheckNames(o)
		require.ErrorIs(t, err, statement.ErrSchema)
		assert.Contains(t, err.Error(), `field 1 is named "nonce", test-v1's field 1 is "code"`)
		assert.Empty(t, sc.CheckTexts(o), "texts are read by position: the swap is a schema error only")
	})
	t.Run("fail/field missing or extra", func(t *testing.T) {
		o := testOpening()
		o.Fields = o.Fields[:9]
		require.ErrorContains(t, sc.CheckNames(o), "the opening has 9 fields, test-v1 has 10")
		errs := sc.CheckTexts(o)
		require.Len(t, errs, 1)
		assert.ErrorIs(t, errs[0], statement.ErrSchema)
		o = testOpening()
		o.Fields = append(o.Fields, statement.Field{Name: "note", Value: big.NewInt(1)})
		require.ErrorContains(t, sc.CheckNames(o), `field 10 "note" is extra`)
	})
	t.Run("fail/text", func(t *testing.T) {
		o := testOpening()
		o.Fields[3].Text = "2026-01-02"
		o.Fields[0].Text = "approved" // a text on a field that has none
		errs := sc.CheckTexts(o)
		require.Len(t, errs, 2)
		assert.ErrorIs(t, errs[0], statement.ErrText)
		assert.Contains(t, errs[0].Error(), `field 0 subject: text "approved" is not ""`)
		assert.Contains(t, errs[1].Error(), `field 3 day: text "2026-01-02" is not "2026-01-01", the rendering of its value 20454`)
	})
	t.Run("fail/nonce", func(t *testing.T) {
		o := testOpening()
		o.RevocationNonce = 8
		require.ErrorIs(t, o.CheckNonce(), statement.ErrNonce)
		o.Fields = o.Fields[:9]
		_, err := o.CommittedNonce()
		require.ErrorContains(t, err, "no revocation_nonce field")
	})
	t.Run("fail/circuit", func(t *testing.T) {
		o := testOpening()
		o.Circuit = "other-v1"
		st, err := statement.New(o)
		require.NoError(t, err)
		require.ErrorIs(t, st.CheckSchema(sc), statement.ErrSchema)
	})
}

// TestStrictJSON: a statement reads only in the form docs/statement.md
// gives — keys it does not have, and values spelt other than plain
// decimal, are refused, so no word of it can escape the checks.
func TestStrictJSON(t *testing.T) {
	t.Parallel()
	st, err := statement.New(testOpening())
	require.NoError(t, err)
	b, err := json.Marshal(st)
	require.NoError(t, err)
	_, err = statement.Parse(b)
	require.NoError(t, err)
	for name, edit := range map[string]func(string) string{
		"unknown top-level key": func(s string) string { return strings.Replace(s, `{"digest"`, `{"verdict":"approved","digest"`, 1) },
		"unknown opening key":   func(s string) string { return strings.Replace(s, `"circuit":`, `"note":"ok","circuit":`, 1) },
		"unknown field key":     func(s string) string { return strings.Replace(s, `"name":"day"`, `"name":"day","label":"x"`, 1) },
		"leading zero":          func(s string) string { return strings.Replace(s, `"value":"7"`, `"value":"07"`, 1) },
		"plus sign":             func(s string) string { return strings.Replace(s, `"value":"7"`, `"value":"+7"`, 1) },
		"hex":                   func(s string) string { return strings.Replace(s, `"value":"7"`, `"value":"0x7"`, 1) },
		"trailing data":         func(s string) string { return s + "{}" },
	} {
		_, err := statement.Parse([]byte(edit(string(b))))
		require.ErrorIs(t, err, statement.ErrMalformed, name)
	}
}

func TestSchemaJSON(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(testSchema())
	require.NoError(t, err)
	assert.Contains(t, string(b), `"circuit_id":"77"`)
	var back statement.Schema
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, testSchema(), back)
}
