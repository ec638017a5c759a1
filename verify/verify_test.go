package verify_test

import (
	"bytes"
	"fmt"
	"math/big"
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

// everyCheck is the report of a decision checked with its statement, in
// order.
var everyCheck = []string{"receipt", "registry", "event", "inputs", "verifier", "proof", "issuer",
	"digest", "statement", "circuit", "circuit id", "schema", "text", "issuer key", "nonce", "revocation"}

func checkNames(r verify.Report) []string {
	var names []string
	for _, c := range r.Checks {
		names = append(names, c.Name)
	}
	return names
}

func TestDecision(t *testing.T) {
	f := verifytest.New(t)
	ctx := t.Context()
	st, tx := f.Decision(t)
	opts := verify.Options{Registry: f.Gov.Address(), Statement: &st, Confirmations: 1}

	t.Run("ok/eligibility statement", func(t *testing.T) {
		r, err := verify.Decision(ctx, f.RPC, tx, opts)
		require.NoError(t, err)
		assert.True(t, r.OK(), r.String())
		assert.False(t, r.Incomplete())
		assert.Equal(t, everyCheck, checkNames(r), r.String())
		require.NotNil(t, r.Recorded)
		assert.Zero(t, r.Recorded.Digest.Cmp(st.Digest))
		assert.Contains(t, r.String(), "ok   schema        the 13 field names, in order, are eligibility-v3's")
		assert.Contains(t, r.String(), "ok   text          every text is the rendering of its value")
	})
	t.Run("ok/prescription statement", func(t *testing.T) {
		rx := verifytest.PrescriptionStatement(t, 12)
		r, err := verify.Decision(ctx, f.RPC, f.RecordStatement(t, rx), verify.Options{Registry: f.Gov.Address(), Statement: &rx})
		require.NoError(t, err)
		assert.True(t, r.OK(), r.String())
		assert.Contains(t, r.String(), "are prescription-v4's")

		// The unidentified entries' text is bound by its hash: changed, or
		// dropped, it is refused.
		for _, text := range []string{`["medication: Tylenol"]`, ""} {
			doctored := verifytest.Copy(rx)
			doctored.Opening.Fields[62].Text = text
			r, err = verify.Decision(ctx, f.RPC, f.RecordStatement(t, rx), verify.Options{Registry: f.Gov.Address(), Statement: &doctored})
			require.NoError(t, err)
			assert.Equal(t, []string{"text"}, r.Failed(), r.String())
			assert.Contains(t, r.String(), "FAIL text          field 62 unidentified: text ")
		}
	})
	t.Run("ok/statements of retired circuits stay checkable", func(t *testing.T) {
		// eligibility-v2 and prescription-v3 had the digests of their
		// successors; prescription-v2 had no unidentified field.
		rx := verifytest.PrescriptionStatement(t, 13)
		for _, c := range []struct {
			name string
			st   statement.Statement
			drop string
		}{{"eligibility-v2", st, ""}, {"prescription-v3", rx, ""}, {"prescription-v2", rx, "unidentified"}} {
			old := verifytest.Copy(c.st)
			old.Opening.Circuit, old.Opening.CircuitID = c.name, zkp.CircuitID(c.name)
			old.Opening.Fields = slices.DeleteFunc(old.Opening.Fields, func(f statement.Field) bool { return f.Name == c.drop })
			d, err := old.Opening.Recompute()
			require.NoError(t, err)
			old.Digest = d
			r, err := verify.Decision(ctx, f.RPC, f.RecordStatement(t, old), verify.Options{Registry: f.Gov.Address(), Statement: &old})
			require.NoError(t, err)
			assert.True(t, r.OK(), r.String())
			assert.Contains(t, r.String(), "are "+c.name+"'s", c.name)
		}
	})
	t.Run("fail/not checked without a statement", func(t *testing.T) {
		r, err := verify.Decision(ctx, f.RPC, tx, verify.Options{Registry: f.Gov.Address()})
		require.NoError(t, err)
		assert.False(t, r.OK(), "a decision whose statement was not checked is not verified")
		assert.True(t, r.Incomplete())
		assert.Equal(t, []string{"statement"}, r.Failed(), r.String())
		assert.Contains(t, r.String(), "FAIL statement     not checked: no statement was given")
	})
	t.Run("fail/a circuit with no schema", func(t *testing.T) {
		// The same statement recorded under the fixture's own circuit,
		// which no statement schema describes.
		other := f.RecordAs(t, st.Opening.IssuerKeyHash, st.Digest, f.Circuit)
		r, err := verify.Decision(ctx, f.RPC, other, opts)
		require.NoError(t, err)
		assert.Equal(t, []string{"circuit", "circuit id", "schema", "text"}, r.Failed(), r.String())
		assert.Contains(t, r.String(), "FAIL schema        no statement schema for the recorded circuit 0x")
		assert.Contains(t, r.String(), "this verifier knows eligibility-v3 (0x")
		assert.Contains(t, r.String(), "FAIL text          not checked: ")
		assert.False(t, r.Incomplete(), "a refusal, not a missing statement")
	})
	t.Run("fail/wrong contract", func(t *testing.T) {
		o := opts
		o.Registry = f.Verifier
		r, err := verify.Decision(ctx, f.RPC, tx, o)
		require.NoError(t, err)
		assert.Equal(t, []string{"registry"}, r.Failed(), r.String())
	})
	t.Run("fail/unknown transaction", func(t *testing.T) {
		r, err := verify.Decision(ctx, f.RPC, common.Hash{1}, opts)
		require.NoError(t, err)
		assert.Equal(t, []string{"receipt"}, r.Failed(), r.String())
	})
	t.Run("fail/not a record call", func(t *testing.T) {
		// An owner action sent to the registry: right contract, no statement.
		owned := f.Own(t, f.Gov.RegisterIssuer(big.NewInt(999), common.Address{}))
		r, err := verify.Decision(ctx, f.RPC, owned, opts)
		require.NoError(t, err)
		assert.Equal(t, []string{"event"}, r.Failed(), r.String())
	})
	t.Run("fail/no registry", func(t *testing.T) {
		_, err := verify.Decision(ctx, f.RPC, tx, verify.Options{})
		require.ErrorIs(t, err, verify.ErrRegistryRequired)
	})
	t.Run("confirmations", func(t *testing.T) {
		o := opts
		o.Confirmations = 1000
		r, err := verify.Decision(ctx, f.RPC, tx, o)
		require.NoError(t, err)
		assert.Equal(t, []string{"confirmations"}, r.Failed(), r.String())
	})
}

// TestDecisionTampered: every doctored decision of issue 25 fails exactly
// the checks that name the part that does not match.
func TestDecisionTampered(t *testing.T) {
	f := verifytest.New(t)
	st, tx := f.Decision(t)
	for _, c := range f.Cases(t, st, tx) {
		t.Run(c.Name, func(t *testing.T) {
			r, err := verify.Decision(t.Context(), f.RPC, c.Tx, verify.Options{Registry: c.Registry, Statement: &c.Statement})
			require.NoError(t, err)
			assert.False(t, r.OK())
			assert.Equal(t, c.Failed, r.Failed(), r.String())
			for _, line := range c.Lines {
				assert.Contains(t, r.String(), line)
			}
		})
	}
}

// TestDecisionRevokedIssuer: a credential nonce revoked before a decision
// fails it; one revoked after leaves the earlier decision valid. A retired
// issuer leaves earlier decisions valid and stops new ones on chain.
func TestDecisionRevokedIssuer(t *testing.T) {
	f := verifytest.New(t)
	ctx := t.Context()
	const nonce = 9
	first := verifytest.EligibilityStatement(t, nonce)
	before := f.RecordStatement(t, first)
	issuer := first.Opening.IssuerKeyHash
	f.Own(t, f.Gov.RevokeNonce(issuer, nonce))
	second := verifytest.EligibilityStatement(t, nonce)
	after := f.RecordStatement(t, second)

	check := func(tx common.Hash, st statement.Statement) verify.Report {
		r, err := verify.Decision(ctx, f.RPC, tx, verify.Options{Registry: f.Gov.Address(), Statement: &st})
		require.NoError(t, err)
		return r
	}
	r := check(before, first)
	assert.True(t, r.OK(), r.String())
	assert.Contains(t, r.String(), "revoked later")
	r = check(after, second)
	assert.Equal(t, []string{"revocation"}, r.Failed(), r.String())

	f.Own(t, f.Gov.RetireIssuer(issuer))
	r = check(before, first)
	assert.True(t, r.OK(), r.String())
	assert.Contains(t, r.String(), "retired later")
}

// everyBatchCheck is the report of a decision anchored in a batch, checked
// with its statement and proof, in order (docs/verify.md, "Batches").
var everyBatchCheck = []string{"receipt", "registry", "batch", "batch", "path", "verifier", "proof", "issuer",
	"digest", "statement", "circuit", "circuit id", "schema", "text", "issuer key", "nonce", "revocation"}

func proofOf(t *testing.T, a verifytest.Answer) *verify.Proof {
	t.Helper()
	p, err := verify.ParseProof(a.ProofData, a.PublicInputs)
	require.NoError(t, err)
	return p
}

// TestDecisionBatched: every decision of a batch of eligibility and
// prescription statements, anchored by one recordBatch transaction, passes
// every batched check with its statement and the answer's proof; without
// the proof the report says what was not checked, without the statement
// too; neither is a pass.
func TestDecisionBatched(t *testing.T) {
	f := verifytest.New(t)
	ctx := t.Context()
	_, batch := f.Batch(t)

	t.Run("ok/every leaf", func(t *testing.T) {
		for i, a := range batch {
			r, err := verify.Decision(ctx, f.RPC, a.Tx, verify.Options{Registry: f.Gov.Address(), Statement: &a.Statement, Proof: proofOf(t, a), Confirmations: 1})
			require.NoError(t, err)
			assert.True(t, r.OK(), "leaf %d: %s", i, r.String())
			assert.Equal(t, everyBatchCheck, checkNames(r), r.String())
			require.NotNil(t, r.Batch)
			assert.Nil(t, r.Recorded)
			assert.EqualValues(t, verifytest.BatchSize, r.Batch.Size)
			assert.Contains(t, r.String(), "ok   path          the statement's leaf 0x")
			assert.Contains(t, r.String(), fmt.Sprintf("with its path (leaf index %d, 3 values) leads to the recorded root", i))
		}
	})
	t.Run("ok/proof without public inputs", func(t *testing.T) {
		a := batch[1]
		p := proofOf(t, a)
		p.Inputs = nil
		r, err := verify.Decision(ctx, f.RPC, a.Tx, verify.Options{Registry: f.Gov.Address(), Statement: &a.Statement, Proof: p})
		require.NoError(t, err)
		assert.True(t, r.OK(), r.String())
	})
	t.Run("ok/a batch of one", func(t *testing.T) {
		one := f.RecordBatch(t, []statement.Statement{verifytest.EligibilityStatement(t, 31)})[0]
		require.Empty(t, one.Statement.Batch.Path, "a batch of one: the root is the leaf")
		r, err := verify.Decision(ctx, f.RPC, one.Tx, verify.Options{Registry: f.Gov.Address(), Statement: &one.Statement, Proof: proofOf(t, one)})
		require.NoError(t, err)
		assert.True(t, r.OK(), r.String())
	})
	t.Run("unverified/no proof", func(t *testing.T) {
		a := batch[0]
		r, err := verify.Decision(ctx, f.RPC, a.Tx, verify.Options{Registry: f.Gov.Address(), Statement: &a.Statement})
		require.NoError(t, err)
		assert.False(t, r.OK(), "a batched decision whose proof was not checked is not verified")
		assert.True(t, r.Incomplete())
		assert.Equal(t, []string{"proof"}, r.Failed(), r.String())
		assert.Contains(t, r.String(), "FAIL proof         not checked: no proof was given (the answer's proof_data)")
		assert.Equal(t, everyBatchCheck, checkNames(r), "every other check still runs")
	})
	t.Run("unverified/no statement", func(t *testing.T) {
		r, err := verify.Decision(ctx, f.RPC, batch[0].Tx, verify.Options{Registry: f.Gov.Address(), Proof: proofOf(t, batch[0])})
		require.NoError(t, err)
		assert.True(t, r.Incomplete())
		assert.Equal(t, []string{"receipt", "registry", "batch", "statement"}, checkNames(r), r.String())
		assert.Contains(t, r.String(), "FAIL statement     not checked: no statement was given")
	})
	t.Run("fail/wrong contract", func(t *testing.T) {
		a := batch[0]
		r, err := verify.Decision(ctx, f.RPC, a.Tx, verify.Options{Registry: f.Verifier, Statement: &a.Statement, Proof: proofOf(t, a)})
		require.NoError(t, err)
		assert.Equal(t, []string{"registry"}, r.Failed(), r.String())
	})
	t.Run("fail/revoked before the batch", func(t *testing.T) {
		st := verifytest.EligibilityStatement(t, 33)
		f.Own(t, f.Gov.RevokeNonce(st.Opening.IssuerKeyHash, 33))
		a := f.RecordBatch(t, []statement.Statement{st, verifytest.EligibilityStatement(t, 34)})[0]
		r, err := verify.Decision(ctx, f.RPC, a.Tx, verify.Options{Registry: f.Gov.Address(), Statement: &a.Statement, Proof: proofOf(t, a)})
		require.NoError(t, err)
		assert.Equal(t, []string{"revocation"}, r.Failed(), r.String())
	})
}

// TestDecisionBatchTampered: every doctored batched decision of issue 30
// fails exactly the check that names what does not match.
func TestDecisionBatchTampered(t *testing.T) {
	f := verifytest.New(t)
	honest, batch := f.Batch(t)
	for _, c := range f.BatchCases(t, honest, batch) {
		t.Run(c.Name, func(t *testing.T) {
			r, err := verify.Decision(t.Context(), f.RPC, c.Answer.Tx, verify.Options{Registry: c.Registry, Statement: &c.Answer.Statement, Proof: proofOf(t, c.Answer)})
			require.NoError(t, err)
			assert.False(t, r.OK())
			assert.Equal(t, c.Failed, r.Failed(), r.String())
			for _, line := range c.Lines {
				assert.Contains(t, r.String(), line)
			}
		})
	}
}

func TestParseProof(t *testing.T) {
	t.Parallel()
	word := func(b byte) string { return strings.Repeat(fmt.Sprintf("%02x", b), 32) }
	data := "0x" + word(1) + word(2) + word(3) + word(4) + word(5) + word(6) + word(7) + word(8)
	p, err := verify.ParseProof(data, []string{"0x" + strings.Repeat("0", 63) + "5"})
	require.NoError(t, err)
	assert.Equal(t, big.NewInt(5), p.Inputs[0])
	assert.Zero(t, p.Words[7].Cmp(new(big.Int).SetBytes(bytes.Repeat([]byte{8}, 32))))
	r := "0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001" // BN254's r itself
	for _, bad := range []struct {
		data   string
		inputs []string
	}{
		{data[:len(data)-2], nil}, {strings.TrimPrefix(data, "0x"), nil}, {data[:10] + "zz" + data[12:], nil},
		{data, []string{"0x05"}}, {data, []string{r}},
	} {
		_, err := verify.ParseProof(bad.data, bad.inputs)
		require.ErrorIs(t, err, verify.ErrProof, "%.20s… %v", bad.data, bad.inputs)
	}
}
