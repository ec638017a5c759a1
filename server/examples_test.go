package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/server"
	"github.com/healthagents/healthagents/zkp/statement"
)

// TestOpenAPIExamples walks the document: every component schema carries
// an example, every request and response body is such a component (or
// carries its own example), no example holds the placeholder "string",
// and every example, whole-object or per property, validates against the
// schema it illustrates (JSON Schema 2020-12, formats asserted).
func TestOpenAPIExamples(t *testing.T) {
	t.Parallel()
	spec, err := server.OpenAPI()
	require.NoError(t, err)
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Webhooks   map[string]map[string]json.RawMessage `json:"webhooks"`
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(spec, &doc))
	require.NotEmpty(t, doc.Components.Schemas)

	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(spec))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	require.NoError(t, c.AddResource("mem:///openapi.json", inst))
	validate := func(t *testing.T, pointer string, example any) {
		t.Helper()
		sch, err := c.Compile("mem:///openapi.json#" + pointer)
		require.NoError(t, err, pointer)
		b, err := json.Marshal(example)
		require.NoError(t, err)
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		require.NoError(t, err)
		assert.NoError(t, sch.Validate(v), "%s: its example does not validate", pointer)
	}

	names := make([]string, 0, len(doc.Components.Schemas))
	for n := range doc.Components.Schemas {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		s := doc.Components.Schemas[name]
		t.Run(name, func(t *testing.T) {
			exs, ok := s["examples"].([]any)
			require.True(t, ok && len(exs) > 0, "components/schemas/%s has no example", name)
			for i, ex := range exs {
				assertNoPlaceholder(t, fmt.Sprintf("%s.examples[%d]", name, i), ex)
				validate(t, "/components/schemas/"+name, ex)
			}
			props, _ := s["properties"].(map[string]any)
			for p, ps := range props {
				pm, _ := ps.(map[string]any)
				pexs, _ := pm["examples"].([]any)
				for i, ex := range pexs {
					assertNoPlaceholder(t, fmt.Sprintf("%s.%s.examples[%d]", name, p, i), ex)
					validate(t, "/components/schemas/"+name+"/properties/"+p, ex)
				}
			}
		})
	}

	// Every body names a component (checked above) or has its own example.
	for _, ops := range []map[string]map[string]json.RawMessage{doc.Paths, doc.Webhooks} {
		for path, byMethod := range ops {
			for method, raw := range byMethod {
				var op struct {
					RequestBody *struct {
						Content map[string]struct{ Schema map[string]any } `json:"content"`
					} `json:"requestBody"`
					Responses map[string]struct {
						Content map[string]struct{ Schema map[string]any } `json:"content"`
					} `json:"responses"`
				}
				if json.Unmarshal(raw, &op) != nil {
					continue // a path-level field, not an operation
				}
				check := func(where string, schema map[string]any) {
					if ref, ok := schema["$ref"].(string); ok {
						assert.Contains(t, doc.Components.Schemas, strings.TrimPrefix(ref, "#/components/schemas/"), where)
						return
					}
					assert.NotEmpty(t, schema["examples"], "%s: an inline body schema without an example", where)
				}
				if op.RequestBody != nil {
					for ct, m := range op.RequestBody.Content {
						check(fmt.Sprintf("%s %s request %s", method, path, ct), m.Schema)
					}
				}
				for status, r := range op.Responses {
					for ct, m := range r.Content {
						check(fmt.Sprintf("%s %s %s %s", method, path, status, ct), m.Schema)
					}
				}
			}
		}
	}
}

// assertNoPlaceholder fails on a string "string" anywhere in an example:
// what a generator writes when nobody gave a value.
func assertNoPlaceholder(t *testing.T, where string, v any) {
	t.Helper()
	switch v := v.(type) {
	case string:
		assert.NotEqual(t, "string", v, "%s: placeholder value", where)
	case []any:
		for i, x := range v {
			assertNoPlaceholder(t, fmt.Sprintf("%s[%d]", where, i), x)
		}
	case map[string]any:
		for k, x := range v {
			assertNoPlaceholder(t, where+"."+k, x)
		}
	}
}

// TestExampleEnvelopeOpens: the document's example envelope is a real one,
// sealed with the published ExampleFernetKey over a record that parses.
func TestExampleEnvelopeOpens(t *testing.T) {
	t.Parallel()
	kr, err := cipher.ParseKeyring(server.ExampleFernetKey)
	require.NoError(t, err)
	env := server.ExampleEnvelope()
	plain, err := kr.Open(t.Context(), env)
	require.NoError(t, err)
	rec, err := record.Parse(plain)
	require.NoError(t, err)
	assert.Equal(t, env.PatientID, rec.PatientID)
	assert.Equal(t, cipher.DataHash(plain), env.DataHash)
	id, err := cipher.CIDFor([]byte(env.EncryptedData))
	require.NoError(t, err)
	assert.Equal(t, id.String(), env.IPFSCID)
}

// TestExampleStatementRecomputes: the document's example statement is a
// real one: its digest recomputes from its opening (iden3 Poseidon), and the
// example proof's public inputs are [issuerKeyHash, digest, circuitId].
func TestExampleStatementRecomputes(t *testing.T) {
	t.Parallel()
	ex := server.ExampleDecision()
	require.NotNil(t, ex.Statement)
	require.NotNil(t, ex.VerificationProof)
	b, err := json.Marshal(ex.Statement)
	require.NoError(t, err)
	var st statement.Statement
	require.NoError(t, json.Unmarshal(b, &st))
	d, err := st.Opening.Recompute()
	require.NoError(t, err)
	assert.Equal(t, ex.Statement.Digest, d.String())
	hexOf := func(dec string) string {
		n, ok := new(big.Int).SetString(dec, 10)
		require.True(t, ok, dec)
		return fmt.Sprintf("0x%064x", n)
	}
	assert.Equal(t, []string{hexOf(ex.Statement.Opening.IssuerKeyHash), hexOf(ex.Statement.Digest), hexOf(ex.Statement.Opening.CircuitID)},
		ex.VerificationProof.PublicInputs)
}
