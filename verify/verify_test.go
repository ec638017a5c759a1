package verify_test

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/verify"
	"github.com/healthagents/healthagents/verify/verifytest"
)

func failed(r verify.Report) []string {
	var names []string
	for _, c := range r.Checks {
		if !c.OK {
			names = append(names, c.Name)
		}
	}
	return names
}

func TestDecision(t *testing.T) {
	f := verifytest.New(t)
	ctx := t.Context()
	digest := big.NewInt(1001)
	tx := f.Record(t, digest)
	nonce := uint64(5)
	claim := &verify.Claim{Digest: digest, IssuerKeyHash: big.NewInt(verifytest.Issuer), CircuitID: f.Circuit, RevocationNonce: &nonce}
	opts := verify.Options{Registry: f.Gov.Address(), Claim: claim, Confirmations: 1}

	t.Run("ok/real decision", func(t *testing.T) {
		r, err := verify.Decision(ctx, f.RPC, tx, opts)
		require.NoError(t, err)
		assert.True(t, r.OK(), r.String())
		names := map[string]bool{}
		for _, c := range r.Checks {
			names[c.Name] = true
		}
		for _, n := range []string{"receipt", "registry", "event", "inputs", "verifier", "proof", "issuer", "statement", "revocation"} {
			assert.True(t, names[n], "check %s ran:\n%s", n, r)
		}
		require.NotNil(t, r.Recorded)
		assert.Equal(t, 0, r.Recorded.Digest.Cmp(digest))
	})
	t.Run("fail/tampered statement", func(t *testing.T) {
		bad := *claim
		bad.Digest = new(big.Int).Add(digest, big.NewInt(1))
		o := opts
		o.Claim = &bad
		r, err := verify.Decision(ctx, f.RPC, tx, o)
		require.NoError(t, err)
		assert.False(t, r.OK())
		assert.Equal(t, []string{"statement"}, failed(r), r.String())
	})
	t.Run("fail/wrong contract", func(t *testing.T) {
		o := opts
		o.Registry = f.Verifier
		r, err := verify.Decision(ctx, f.RPC, tx, o)
		require.NoError(t, err)
		assert.Equal(t, []string{"registry"}, failed(r), r.String())
	})
	t.Run("fail/unknown transaction", func(t *testing.T) {
		r, err := verify.Decision(ctx, f.RPC, common.Hash{1}, opts)
		require.NoError(t, err)
		assert.Equal(t, []string{"receipt"}, failed(r), r.String())
	})
	t.Run("fail/not a record call", func(t *testing.T) {
		// An owner action sent to the registry: right contract, no statement.
		owned := f.Own(t, f.Gov.RegisterIssuer(big.NewInt(999), common.Address{}))
		r, err := verify.Decision(ctx, f.RPC, owned, opts)
		require.NoError(t, err)
		assert.Equal(t, []string{"event"}, failed(r), r.String())
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
		assert.Equal(t, []string{"confirmations"}, failed(r), r.String())
	})
}

// TestDecisionRevokedIssuer: a credential nonce revoked before a decision
// fails it; one revoked after leaves the earlier decision valid. A retired
// issuer leaves earlier decisions valid and stops new ones on chain.
func TestDecisionRevokedIssuer(t *testing.T) {
	f := verifytest.New(t)
	ctx := t.Context()
	d1 := big.NewInt(2002)
	before := f.Record(t, d1)
	nonce := uint64(9)
	f.Own(t, f.Gov.RevokeNonce(big.NewInt(verifytest.Issuer), nonce))
	d2 := big.NewInt(2003)
	after := f.Record(t, d2)

	check := func(tx common.Hash, d *big.Int) verify.Report {
		r, err := verify.Decision(ctx, f.RPC, tx, verify.Options{Registry: f.Gov.Address(),
			Claim: &verify.Claim{Digest: d, RevocationNonce: &nonce}})
		require.NoError(t, err)
		return r
	}
	r := check(before, d1)
	assert.True(t, r.OK(), r.String())
	assert.Contains(t, r.String(), "revoked later")
	r = check(after, d2)
	assert.Equal(t, []string{"revocation"}, failed(r), r.String())

	f.Own(t, f.Gov.RetireIssuer(big.NewInt(verifytest.Issuer)))
	r, err := verify.Decision(ctx, f.RPC, before, verify.Options{Registry: f.Gov.Address()})
	require.NoError(t, err)
	assert.True(t, r.OK(), r.String())
	assert.Contains(t, r.String(), "retired later")
}
