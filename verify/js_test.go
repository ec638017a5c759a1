package verify_test

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/verify"
	"github.com/healthagents/healthagents/verify/verifytest"
	"github.com/healthagents/healthagents/zkp"
	"github.com/healthagents/healthagents/zkp/statement"
)

var update = flag.Bool("update", false, "rewrite examples/verify-js/schema.json from the circuits")

const jsSchemaFile = "../examples/verify-js/schema.json"

// TestJSSchemaIsCurrent: the JavaScript verifier's schema.json is the Go
// circuits' statement schemas (zkp.Schemas), so the two checkers refuse the
// same statements. Regenerate with `go test ./verify -run
// TestJSSchemaIsCurrent -update`.
func TestJSSchemaIsCurrent(t *testing.T) {
	t.Parallel()
	schemas, err := zkp.Schemas()
	require.NoError(t, err)
	want, err := json.MarshalIndent(map[string][]statement.Schema{"circuits": schemas}, "", "  ")
	require.NoError(t, err)
	want = append(want, '\n')
	if *update {
		require.NoError(t, os.WriteFile(jsSchemaFile, want, 0o644))
	}
	have, err := os.ReadFile(jsSchemaFile)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(have), "examples/verify-js/schema.json is stale: go test ./verify -run TestJSSchemaIsCurrent -update")

	var back struct{ Circuits []statement.Schema }
	require.NoError(t, json.Unmarshal(have, &back))
	assert.Equal(t, schemas, back.Circuits)
}

// runJS runs docs/verify.md's script (examples/verify-js/verify.mjs) and
// returns its output and exit status. .ci/run installs the script's packages
// and sets HEALTHAGENTS_TEST_VERIFYJS; without it the test skips.
func runJS(t *testing.T, args ...string) (string, int) {
	t.Helper()
	if os.Getenv("HEALTHAGENTS_TEST_VERIFYJS") == "" {
		t.Skip("HEALTHAGENTS_TEST_VERIFYJS unset (needs node and `npm ci` in examples/verify-js)")
	}
	dir, err := filepath.Abs("../examples/verify-js")
	require.NoError(t, err)
	if len(args) == 0 || !strings.HasPrefix(args[0], "--input-type") {
		args = append([]string{"verify.mjs"}, args...)
	}
	cmd := exec.CommandContext(t.Context(), "node", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	}
	require.NoError(t, err, string(out))
	return string(out), 0
}

func writeStatement(t *testing.T, st statement.Statement) string {
	t.Helper()
	b, err := json.Marshal(st)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "statement.json")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return path
}

// TestVerifyJS runs the JavaScript verifier (ethers and @iden3/js-crypto
// only) against real statements recorded on chain: every check passes and
// it exits 0; without a statement it says what was not checked and exits 3;
// every doctored decision of issue 25 is refused (exit 1) with exactly the
// failing lines the Go checker prints.
func TestVerifyJS(t *testing.T) {
	if os.Getenv("HEALTHAGENTS_TEST_VERIFYJS") == "" {
		t.Skip("HEALTHAGENTS_TEST_VERIFYJS unset (needs node and `npm ci` in examples/verify-js)")
	}
	f := verifytest.New(t)
	st, tx := f.Decision(t)
	run := func(t *testing.T, registry common.Address, tx common.Hash, st *statement.Statement) (string, int) {
		args := []string{"--rpc", f.Endpoint, "--registry", registry.Hex(), "--tx", tx.Hex()}
		if st != nil {
			args = append(args, "--statement", writeStatement(t, *st))
		}
		return runJS(t, args...)
	}

	t.Run("ok/eligibility", func(t *testing.T) {
		out, code := run(t, f.Gov.Address(), tx, &st)
		assert.Equal(t, 0, code, out)
		for _, name := range everyCheck {
			assert.Contains(t, out, "ok   "+name+" ", out)
		}
		assert.NotContains(t, out, "FAIL")
		assert.Contains(t, out, "verified: all 16 checks passed")
	})
	t.Run("ok/prescription", func(t *testing.T) {
		rx := verifytest.PrescriptionStatement(t, 12)
		out, code := run(t, f.Gov.Address(), f.RecordStatement(t, rx), &rx)
		assert.Equal(t, 0, code, out)
		assert.Contains(t, out, "ok   text          every text is the rendering of its value (prescription-v4's renderings)")
		assert.NotContains(t, out, "FAIL")
	})
	t.Run("unverified/no statement", func(t *testing.T) {
		out, code := run(t, f.Gov.Address(), tx, nil)
		assert.Equal(t, 3, code, out)
		assert.Equal(t, []string{"statement"}, verifytest.FailedChecks(out), out)
		assert.Contains(t, out, "FAIL statement     not checked: no statement was given")
		assert.Contains(t, out, "NOT VERIFIED")
	})
	t.Run("fail/not a statement", func(t *testing.T) {
		// What the Go reader refuses (zkp/statement TestStrictJSON), the
		// JavaScript one refuses too.
		const opening = `"opening":{"circuit":"x","revocation_nonce":7,"fields":[{"name":"a","value":"1"}]}`
		for doc, want := range map[string]string{
			`{"digest":"1",` + opening + `,"verdict":"approved"}`:                                                 `unknown field "verdict"`,
			`{"digest":"1","opening":{"circuit":"x","note":"ok","fields":[{"name":"a","value":"1"}]}}`:            `unknown field "note"`,
			`{"digest":"007",` + opening + `}`:                                                                    `"007" is not a decimal field element`,
			`{"digest":"+7",` + opening + `}`:                                                                     `"+7" is not a decimal field element`,
			`{"digest":"1","opening":{"circuit":"x","revocation_nonce":"7","fields":[{"name":"a","value":"1"}]}}`: "revocation_nonce is not a number",
			`{"digest":"1","opening":{"circuit":"x","revocation_nonce":7.5,"fields":[{"name":"a","value":"1"}]}}`: "is not a 64-bit nonce",
		} {
			bad := filepath.Join(t.TempDir(), "bad.json")
			require.NoError(t, os.WriteFile(bad, []byte(doc), 0o600))
			_, err := statement.Parse([]byte(doc))
			require.ErrorIs(t, err, statement.ErrMalformed, "the Go reader refuses %s", doc)
			out, code := runJS(t, "--rpc", f.Endpoint, "--registry", f.Gov.Address().Hex(), "--tx", tx.Hex(), "--statement", bad)
			assert.Equal(t, 1, code, out)
			assert.Contains(t, out, `FAIL statement`)
			assert.Contains(t, out, want)
		}
	})
	for _, c := range f.Cases(t, st, tx) {
		t.Run("fail/"+c.Name, func(t *testing.T) {
			out, code := run(t, c.Registry, c.Tx, &c.Statement)
			assert.Equal(t, 1, code, out)
			assert.Equal(t, c.Failed, verifytest.FailedChecks(out), out)
			for _, line := range c.Lines {
				assert.Contains(t, out, line)
			}
			assert.Contains(t, out, "REFUSED")
		})
	}

	// Decisions anchored in one batch, each given as its whole decision
	// response (statement with its batch, proof_data, public_inputs).
	honest, batch := f.Batch(t)
	runAnswer := func(t *testing.T, registry common.Address, a verifytest.Answer, extra ...string) (string, int) {
		path := filepath.Join(t.TempDir(), "decision.json")
		require.NoError(t, os.WriteFile(path, a.JSON(t), 0o600))
		return runJS(t, append([]string{"--rpc", f.Endpoint, "--registry", registry.Hex(), "--tx", a.Tx.Hex(), "--statement", path}, extra...)...)
	}
	t.Run("ok/batched", func(t *testing.T) {
		for i, a := range batch {
			out, code := runAnswer(t, f.Gov.Address(), a)
			assert.Equal(t, 0, code, "leaf %d: %s", i, out)
			for _, name := range everyBatchCheck {
				assert.Contains(t, out, "ok   "+name+" ", out)
			}
			assert.NotContains(t, out, "FAIL")
			assert.Contains(t, out, "(verification_proof.proof_data); it is re-verified for the statement's leaf by eth_call")
			assert.Contains(t, out, fmt.Sprintf("with its path (leaf index %d, 3 values) leads to the recorded root", i))
			assert.Contains(t, out, "verified: all 17 checks passed")

			// The batched lines are the Go checker's, word for word.
			p, err := verify.ParseProof(a.ProofData, a.PublicInputs)
			require.NoError(t, err)
			r, err := verify.Decision(t.Context(), f.RPC, a.Tx, verify.Options{Registry: f.Gov.Address(), Statement: &a.Statement, Proof: p})
			require.NoError(t, err)
			for _, c := range r.Checks {
				if c.Name == "batch" || c.Name == "path" || c.Name == "verifier" || c.Name == "proof" {
					assert.Contains(t, out, c.String()+"\n", "leaf %d", i)
				}
			}
		}
	})
	t.Run("ok/batched, statement and --proof", func(t *testing.T) {
		proof := filepath.Join(t.TempDir(), "proof.json")
		b, err := json.Marshal(map[string]any{"proof_data": honest.ProofData, "public_inputs": honest.PublicInputs})
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(proof, b, 0o600))
		out, code := run(t, f.Gov.Address(), honest.Tx, &honest.Statement)
		assert.Equal(t, 3, code, "without the proof: not verified: %s", out)
		assert.Equal(t, []string{"proof"}, verifytest.FailedChecks(out), out)
		assert.Contains(t, out, "FAIL proof         not checked: no proof was given (the answer's proof_data)")
		assert.Contains(t, out, "NOT VERIFIED: the statement's leaf is in the recorded batch, but no proof was given")
		args := []string{"--rpc", f.Endpoint, "--registry", f.Gov.Address().Hex(), "--tx", honest.Tx.Hex(), "--statement", writeStatement(t, honest.Statement), "--proof", proof}
		out, code = runJS(t, args...)
		assert.Equal(t, 0, code, out)
		assert.Contains(t, out, "verified: all 17 checks passed")
	})
	for _, c := range f.BatchCases(t, honest, batch) {
		t.Run("fail/"+c.Name, func(t *testing.T) {
			out, code := runAnswer(t, c.Registry, c.Answer)
			assert.Equal(t, 1, code, out)
			assert.Equal(t, c.Failed, verifytest.FailedChecks(out), out)
			for _, line := range c.Lines {
				assert.Contains(t, out, line)
			}
			// Every failing line is the Go checker's, word for word.
			p, err := verify.ParseProof(c.Answer.ProofData, c.Answer.PublicInputs)
			require.NoError(t, err)
			r, err := verify.Decision(t.Context(), f.RPC, c.Answer.Tx, verify.Options{Registry: c.Registry, Statement: &c.Answer.Statement, Proof: p})
			require.NoError(t, err)
			for _, check := range r.Checks {
				if !check.OK {
					assert.Contains(t, out, check.String()+"\n")
				}
			}
			assert.Contains(t, out, "REFUSED")
		})
	}
}

// TestJSRenderingsMatchGo: for values of every rendering — ordinary ones
// and ones no statement can hold — verify.mjs's texts, and its refusals
// with their words, are the Go schema's (statement.Schema.Text), field by
// field of both circuits' real schemas.
func TestJSRenderingsMatchGo(t *testing.T) {
	if os.Getenv("HEALTHAGENTS_TEST_VERIFYJS") == "" {
		t.Skip("HEALTHAGENTS_TEST_VERIFYJS unset (needs node and `npm ci` in examples/verify-js)")
	}
	n := big.NewInt
	code := func(s string) *big.Int { return new(big.Int).SetBytes([]byte(s)) }
	pow := func(b, e int64) *big.Int { return new(big.Int).Exp(n(b), n(e), nil) }
	probes := map[statement.Render][]*big.Int{
		statement.RenderNone:     {n(0), n(12345)},
		statement.RenderCode:     {n(0), code("PROC001"), code("é-ü 名"), new(big.Int).SetBytes([]byte{0xff, 0xfe}), code(strings.Repeat("x", 31)), code(strings.Repeat("x", 32)), pow(2, 250)},
		statement.RenderNumber:   {n(0), n(7), pow(2, 64)},
		statement.RenderDay:      {n(0), n(20518), n(2932896), n(2932897), pow(2, 70)},
		statement.RenderFlag:     {n(0), n(1), n(2)},
		statement.RenderCents:    {n(0), n(5), n(100), n(123456789)},
		statement.RenderClinical: {n(0), n(64), n(3), n(3 + 8*4), n(5), n(7 + 8*7), n(128), pow(2, 100)},
		statement.RenderTriggers: {n(0), n(1), n(5 * 128), n(127), new(big.Int).Sub(pow(128, 8), n(1)), pow(128, 8)},
	}
	schemas, err := zkp.Schemas()
	require.NoError(t, err)
	type probe struct {
		Schema int      `json:"schema"`
		Field  int      `json:"field"`
		Values []string `json:"values"`
		Text   string   `json:"-"`
		Err    string   `json:"-"`
	}
	var probesJS []probe
	for si, sc := range schemas {
		base := make([]*big.Int, len(sc.Fields))
		for i := range base {
			base[i] = code("1") // every slot holds something
		}
		for fi, f := range sc.Fields {
			for _, v := range probes[f.Text] {
				for _, emptySlot := range []bool{false, true} {
					if emptySlot && f.Slot == "" {
						continue
					}
					values := slices.Clone(base)
					values[fi] = v
					if emptySlot {
						values[slices.IndexFunc(sc.Fields, func(g statement.FieldSchema) bool { return g.Name == f.Slot })] = n(0)
					}
					p := probe{Schema: si, Field: fi}
					for _, x := range values {
						p.Values = append(p.Values, x.String())
					}
					p.Text, err = sc.Text(values, fi)
					if err != nil {
						p.Err = err.Error()
					}
					probesJS = append(probesJS, p)
				}
			}
		}
	}
	in, err := json.Marshal(map[string]any{"schemas": schemas, "probes": probesJS})
	require.NoError(t, err)
	input := filepath.Join(t.TempDir(), "probes.json")
	require.NoError(t, os.WriteFile(input, in, 0o600))
	script := `import { render } from "./verify.mjs";
import { readFileSync } from "node:fs";
const { schemas, probes } = JSON.parse(readFileSync(process.argv[1], "utf8"));
const out = probes.map((p) => {
  try { return { text: render(schemas[p.schema], p.values.map(BigInt), p.field) }; }
  catch (e) { return { err: e.message }; }
});
console.log(JSON.stringify(out));`
	out, code2 := runJS(t, "--input-type=module", "-e", script, input)
	require.Equal(t, 0, code2, out)
	var got []struct{ Text, Err string }
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	require.Len(t, got, len(probesJS))
	for i, p := range probesJS {
		f := schemas[p.Schema].Fields[p.Field]
		assert.Equal(t, p.Text, got[i].Text, "%s %s (%s) = %s", schemas[p.Schema].Circuit, f.Name, f.Text, p.Values[p.Field])
		assert.Equal(t, p.Err, got[i].Err, "%s %s (%s) = %s", schemas[p.Schema].Circuit, f.Name, f.Text, p.Values[p.Field])
	}
}

// TestJSEntriesMatchGo: prescription-v4's unidentified field is checked the
// other way round (its text is hashed, not rendered), by verify.mjs exactly
// as by statement.CheckEntries: the same texts accepted, the same refusals.
func TestJSEntriesMatchGo(t *testing.T) {
	good := `["medication: Tylenol PM","allergy: codeine"]`
	v := statement.EntriesValue(good)
	probes := []struct {
		Text  string `json:"text"`
		Value string `json:"value"`
	}{
		{"", "0"}, {good, v.String()}, {good, "0"}, {"", v.String()}, {good, new(big.Int).Add(v, big.NewInt(1)).String()},
		{`["medication: é 名"]`, statement.EntriesValue(`["medication: é 名"]`).String()},
		{`["condition: E11"]`, statement.EntriesValue(`["condition: E11"]`).String()},
		{`[]`, statement.EntriesValue(`[]`).String()}, {`null`, statement.EntriesValue(`null`).String()},
		{`"medication: x"`, statement.EntriesValue(`"medication: x"`).String()}, {`[1]`, statement.EntriesValue(`[1]`).String()},
		{`[ "allergy: x" ]`, statement.EntriesValue(`[ "allergy: x" ]`).String()}, {`["allergy: x"`, statement.EntriesValue(`["allergy: x"`).String()},
	}
	in, err := json.Marshal(probes)
	require.NoError(t, err)
	input := filepath.Join(t.TempDir(), "entries.json")
	require.NoError(t, os.WriteFile(input, in, 0o600))
	script := `import { checkEntries } from "./verify.mjs";
import { readFileSync } from "node:fs";
const probes = JSON.parse(readFileSync(process.argv[1], "utf8"));
console.log(JSON.stringify(probes.map((p) => { try { checkEntries(p.text, BigInt(p.value)); return ""; } catch (e) { return e.message; } })));`
	out, code := runJS(t, "--input-type=module", "-e", script, input)
	require.Equal(t, 0, code, out)
	var got []string
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	require.Len(t, got, len(probes))
	accepted := 0
	for i, p := range probes {
		val, _ := new(big.Int).SetString(p.Value, 10)
		want := ""
		if err := statement.CheckEntries(p.Text, val); err != nil {
			want = err.Error()
		} else {
			accepted++
		}
		assert.Equal(t, want, got[i], "text %q value %s", p.Text, p.Value)
	}
	assert.Equal(t, 4, accepted, "empty, the good list, non-ASCII entries, spaces in the array")
}
