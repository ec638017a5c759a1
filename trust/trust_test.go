package trust_test

import (
	"context"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/iden3/go-iden3-crypto/babyjub"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/credential"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/trust"
)

var day = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

func coverage() *record.Coverage {
	return &record.Coverage{
		PayerID: "60054", PlanID: "PPO-GOLD", MemberID: "W123456789", Status: "active",
		Start: "2026-01-01", End: "2026-12-31", Deductible: 1500, DeductibleMet: 200, Copay: 25,
		ExcludedProcedures: []string{"PROC999"}, CoverageOverrides: map[string]int{"70551": 50},
	}
}

// signedBy signs the coverage block with k, as a payer would.
func signedBy(t *testing.T, k credential.Terms, key babyjub.PrivateKey) *credential.Credential {
	t.Helper()
	c, err := credential.Sign(key, k)
	require.NoError(t, err)
	return c
}

func termsOf(c *record.Coverage, nonce uint64, expires string) credential.Terms {
	return credential.Terms{
		MemberID: c.MemberID, Salt: "42", PayerID: c.PayerID, PlanID: c.PlanID, Status: c.Status,
		Start: c.Start, End: c.End, Deductible: c.Deductible, DeductibleMet: c.DeductibleMet, Copay: c.Copay,
		Expires: expires, Nonce: nonce, Excluded: c.ExcludedProcedures, Overrides: c.CoverageOverrides,
	}
}

type names map[string]string

func (n names) IssuerName(_ context.Context, keyHash string) (string, bool, error) {
	name, ok := n[keyHash]
	return name, ok, nil
}

// chainFixture is one embedded chain (the real issuer registry) with a
// registered payer whose nonce 9 is revoked, and a retired one.
type chainFixture struct {
	ledger         *chain.Ledger
	payer, retired babyjub.PrivateKey
	payerHash      *big.Int
	stranger       babyjub.PrivateKey
}

var fixture = sync.OnceValues(func() (*chainFixture, error) {
	ctx := context.Background()
	l, err := chain.NewSimulated(ctx)
	if err != nil {
		return nil, err
	}
	f := &chainFixture{ledger: l}
	for _, k := range []*babyjub.PrivateKey{&f.payer, &f.retired, &f.stranger} {
		if *k, err = credential.GenerateKey(); err != nil {
			return nil, err
		}
	}
	if f.payerHash, err = credential.IssuerKeyHash(f.payer.Public()); err != nil {
		return nil, err
	}
	retiredHash, err := credential.IssuerKeyHash(f.retired.Public())
	if err != nil {
		return nil, err
	}
	for _, h := range []*big.Int{f.payerHash, retiredHash} {
		if _, err := l.RegisterIssuer(ctx, h, common.Address{}); err != nil {
			return nil, err
		}
	}
	if _, err := l.Govern(ctx, l.Governed().RevokeNonce(f.payerHash, 9)); err != nil {
		return nil, err
	}
	if _, err := l.RetireIssuer(ctx, retiredHash); err != nil {
		return nil, err
	}
	return f, nil
})

func setup(t *testing.T, mode trust.Mode) (*trust.Policy, *chainFixture) {
	t.Helper()
	f, err := fixture()
	require.NoError(t, err)
	self, err := credential.GenerateKey()
	require.NoError(t, err)
	p, err := trust.New(mode, self, f.ledger.Governed(), names{f.payerHash.String(): "Acme Health"})
	require.NoError(t, err)
	return p, f
}

// TestCredentialAgainstTheChain runs the policy against the real issuer
// registry on the embedded chain.
func TestCredentialAgainstTheChain(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		mode      trust.Mode
		cred      func(f *chainFixture, c *record.Coverage) *credential.Credential
		wantLabel string
		wantErr   error
	}{
		"ok/self signs coverage without a credential":           {mode: trust.Self, wantLabel: "self"},
		"fail/registered refuses coverage without a credential": {mode: trust.Registered, wantErr: trust.ErrNoCredential},
		"ok/registered issuer": {mode: trust.Registered, wantLabel: "Acme Health",
			cred: func(f *chainFixture, c *record.Coverage) *credential.Credential {
				return signedBy(t, termsOf(c, 1, "2026-12-31"), f.payer)
			}},
		"ok/registered issuer under self": {mode: trust.Self, wantLabel: "Acme Health",
			cred: func(f *chainFixture, c *record.Coverage) *credential.Credential {
				return signedBy(t, termsOf(c, 1, "2026-12-31"), f.payer)
			}},
		"fail/unknown issuer": {mode: trust.Registered, wantErr: trust.ErrUnknownIssuer,
			cred: func(f *chainFixture, c *record.Coverage) *credential.Credential {
				return signedBy(t, termsOf(c, 1, "2026-12-31"), f.stranger)
			}},
		"fail/unknown issuer under self too": {mode: trust.Self, wantErr: trust.ErrUnknownIssuer,
			cred: func(f *chainFixture, c *record.Coverage) *credential.Credential {
				return signedBy(t, termsOf(c, 1, "2026-12-31"), f.stranger)
			}},
		"fail/retired issuer": {mode: trust.Registered, wantErr: trust.ErrUnknownIssuer,
			cred: func(f *chainFixture, c *record.Coverage) *credential.Credential {
				return signedBy(t, termsOf(c, 1, "2026-12-31"), f.retired)
			}},
		"fail/revoked nonce": {mode: trust.Self, wantErr: trust.ErrRevoked,
			cred: func(f *chainFixture, c *record.Coverage) *credential.Credential {
				return signedBy(t, termsOf(c, 9, "2026-12-31"), f.payer)
			}},
		"fail/expired": {mode: trust.Self, wantErr: credential.ErrExpired,
			cred: func(f *chainFixture, c *record.Coverage) *credential.Credential {
				return signedBy(t, termsOf(c, 1, "2026-05-31"), f.payer)
			}},
		"fail/subject mismatch": {mode: trust.Self, wantErr: credential.ErrSubjectMismatch,
			cred: func(f *chainFixture, c *record.Coverage) *credential.Credential {
				terms := termsOf(c, 1, "2026-12-31")
				terms.MemberID = "W000000000"
				return signedBy(t, terms, f.payer)
			}},
		"fail/altered after signing": {mode: trust.Self, wantErr: credential.ErrBadSignature,
			cred: func(f *chainFixture, c *record.Coverage) *credential.Credential {
				cred := signedBy(t, termsOf(c, 1, "2026-12-31"), f.payer)
				cred.Terms.Copay = 0
				return cred
			}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, f := setup(t, tc.mode)
			c := coverage()
			if tc.cred != nil {
				c.Credential = tc.cred(f, c)
			}
			cred, iss, err := p.Credential(t.Context(), &record.Record{PatientID: "PT-1", Coverage: c}, day)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				detail, ok := trust.Detail(err)
				assert.True(t, ok)
				assert.NotContains(t, detail, c.MemberID)
				return
			}
			require.NoError(t, err)
			require.NoError(t, cred.Check(c.MemberID, day))
			assert.Equal(t, tc.wantLabel, iss.Label)
			h, err := cred.KeyHash()
			require.NoError(t, err)
			assert.Equal(t, h, iss.KeyHash)
			if iss.Self {
				assert.Equal(t, p.SelfKeyHash(), h)
				assert.Equal(t, "2026-06-01", cred.Terms.Expires, "a self credential holds for the day only")
				assert.Equal(t, c.Copay, cred.Terms.Copay)
				assert.ElementsMatch(t, c.ExcludedProcedures, cred.Terms.Excluded)
			}
		})
	}
}

func TestSelfSignedAreFresh(t *testing.T) {
	t.Parallel()
	p, _ := setup(t, trust.Self)
	rec := &record.Record{PatientID: "PT-1", Coverage: coverage()}
	a, _, err := p.Credential(t.Context(), rec, day)
	require.NoError(t, err)
	b, _, err := p.Credential(t.Context(), rec, day)
	require.NoError(t, err)
	assert.NotEqual(t, a.Terms.Salt, b.Terms.Salt)
	assert.NotEqual(t, a.Signature, b.Signature)

	// Terms the encoding cannot hold.
	c := coverage()
	c.ExcludedProcedures = []string{"A", "B", "C", "D", "E"}
	_, _, err = p.Credential(t.Context(), &record.Record{Coverage: c}, day)
	require.ErrorIs(t, err, trust.ErrUnsupported)

	// payer_id and plan_id are optional in a record: "self" stands in.
	c = coverage()
	c.PayerID, c.PlanID = "", ""
	cred, _, err := p.Credential(t.Context(), &record.Record{Coverage: c}, day)
	require.NoError(t, err)
	assert.Equal(t, "self", cred.Terms.PayerID)
	require.NoError(t, cred.Verify())

	// No coverage: nothing to prove.
	cred, iss, err := p.Credential(t.Context(), &record.Record{}, day)
	require.NoError(t, err)
	assert.Nil(t, cred)
	assert.Empty(t, iss.Label)
}

func TestParseMode(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]trust.Mode{"": trust.Self, "self": trust.Self, "Registered": trust.Registered} {
		got, err := trust.ParseMode(in)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	_, err := trust.ParseMode("anyone")
	require.ErrorContains(t, err, "COVERAGE_TRUST")
}
