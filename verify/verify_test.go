package verify_test

import (
	"math/big"
	"slices"
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
