package issuers_test

import (
	"crypto/ecdsa"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/api"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/credential"
	"github.com/healthagents/healthagents/issuers"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

// signRevocation is what a payer's admin wallet does: the EIP-712
// signature of revoking nonce of the issuer keyHash on l's registry.
func signRevocation(t *testing.T, key *ecdsa.PrivateKey, l *chain.Ledger, keyHash string, nonce uint64) string {
	t.Helper()
	h, ok := new(big.Int).SetString(keyHash, 10)
	require.True(t, ok)
	sig, err := chain.SignRevocation(chain.RevocationTypedData(l.ChainID(), l.Registry(), h, nonce), key)
	require.NoError(t, err)
	return sig
}

// revocationFixture is a registry over the database and l, with one payer
// registered with an admin address and one without.
type revocationFixture struct {
	reg              *issuers.Registry
	withAdmin, plain api.Issuer
	adminKey         *ecdsa.PrivateKey
}

func newRevocationFixture(t *testing.T, l *chain.Ledger, adminKey *ecdsa.PrivateKey, send func(*api.UnsignedTransaction)) revocationFixture {
	t.Helper()
	db := storetest.Open(t, storetest.Backends(t)[0])
	st, err := store.NewIssuerStore(db)
	require.NoError(t, err)
	reg, err := issuers.New(st, l)
	require.NoError(t, err)
	f := revocationFixture{reg: reg, adminKey: adminKey}
	for i, admin := range []string{crypto.PubkeyToAddress(adminKey.PublicKey).Hex(), ""} {
		k, err := credential.GenerateKey()
		require.NoError(t, err)
		iss, _, err := reg.Register(t.Context(), api.IssuerRequest{PublicKey: credential.PublicKeyHex(k), Name: "Payer", Admin: admin})
		require.NoError(t, err)
		if iss.OwnerAction != nil {
			send(iss.OwnerAction)
		}
		if i == 0 {
			f.withAdmin = iss
		} else {
			f.plain = iss
		}
	}
	return f
}

// TestRevokeNonceEmbedded: where the service holds the registry owner's key
// (the embedded chain) it sends the revocation for the owner, or for the
// payer's admin given its signature; anyone else, another signer, another
// nonce's signature or a payer without an admin is refused, nothing sent.
func TestRevokeNonceEmbedded(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	l, err := chain.NewSimulated(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	adminKey, err := crypto.GenerateKey()
	require.NoError(t, err)
	strangerKey, err := crypto.GenerateKey()
	require.NoError(t, err)
	f := newRevocationFixture(t, l, adminKey, nil)
	id := f.withAdmin.IssuerID
	kh, _ := new(big.Int).SetString(f.withAdmin.KeyHash, 10)

	for name, tc := range map[string]struct {
		id      string
		req     api.RevocationRequest
		byOwner bool
	}{
		"fail/no signature, not the owner": {id, api.RevocationRequest{Nonce: 7}, false},
		"fail/another signer":              {id, api.RevocationRequest{Nonce: 7, AdminSignature: signRevocation(t, strangerKey, l, f.withAdmin.KeyHash, 7)}, false},
		"fail/another nonce's signature":   {id, api.RevocationRequest{Nonce: 7, AdminSignature: signRevocation(t, adminKey, l, f.withAdmin.KeyHash, 8)}, true},
		"fail/payer without an admin":      {f.plain.IssuerID, api.RevocationRequest{Nonce: 7, AdminSignature: signRevocation(t, adminKey, l, f.plain.KeyHash, 7)}, false},
	} {
		_, _, err := f.reg.RevokeNonce(ctx, tc.id, tc.req, tc.byOwner)
		require.ErrorIs(t, err, issuers.ErrNotAdmin, name)
	}
	_, _, err = f.reg.RevokeNonce(ctx, strings.Repeat("00", 32), api.RevocationRequest{Nonce: 7}, true)
	require.ErrorIs(t, err, issuers.ErrNotFound)
	revoked, err := l.Governed().IsRevoked(ctx, kh, 7)
	require.NoError(t, err)
	require.False(t, revoked, "nothing was sent")

	rev, created, err := f.reg.RevokeNonce(ctx, strings.ToUpper(id), api.RevocationRequest{Nonce: 7, AdminSignature: signRevocation(t, adminKey, l, f.withAdmin.KeyHash, 7)}, false)
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, "revoked", rev.Status)
	assert.Equal(t, id, rev.IssuerID)
	assert.Equal(t, api.Nonce(7), rev.Nonce)
	assert.NotEmpty(t, rev.TxHash)
	assert.Nil(t, rev.WalletAction)
	at, err := l.RevokedIn(ctx, kh, 7)
	require.NoError(t, err)
	assert.Equal(t, at, rev.RevokedInBlock)
	assert.NotZero(t, at)

	again, created, err := f.reg.RevokeNonce(ctx, id, api.RevocationRequest{Nonce: 7}, true)
	require.NoError(t, err)
	assert.False(t, created, "revoked before")
	assert.Equal(t, "revoked", again.Status)
	assert.Equal(t, at, again.RevokedInBlock)
	assert.Empty(t, again.TxHash)

	// The owner revokes the largest nonce of the plain payer: exact.
	rev, created, err = f.reg.RevokeNonce(ctx, f.plain.IssuerID, api.RevocationRequest{Nonce: api.Nonce(^uint64(0))}, true)
	require.NoError(t, err)
	assert.True(t, created)
	assert.Equal(t, "revoked", rev.Status)
	plain, _ := new(big.Int).SetString(f.plain.KeyHash, 10)
	revoked, err = l.Governed().IsRevoked(ctx, plain, ^uint64(0))
	require.NoError(t, err)
	assert.True(t, revoked)
	revoked, err = l.Governed().IsRevoked(ctx, plain, ^uint64(0)-1)
	require.NoError(t, err)
	assert.False(t, revoked)
}

// TestRevokeNonceColdOwner: on a JSON-RPC node whose owner key the service
// does not hold, the owner's revocation comes back unsigned from the owner,
// the admin's unsigned from the admin; each wallet signs and sends its own,
// and the nonce is revoked.
func TestRevokeNonceColdOwner(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	hotKey, err := crypto.GenerateKey()
	require.NoError(t, err)
	ownerKey, err := crypto.GenerateKey()
	require.NoError(t, err)
	adminKey, err := crypto.GenerateKey()
	require.NoError(t, err)
	node, err := chain.NewSimulated(ctx, chain.WithHTTP(addr), chain.WithKey(hotKey), chain.WithOwnerKey(ownerKey),
		chain.WithFunded(crypto.PubkeyToAddress(adminKey.PublicKey)))
	require.NoError(t, err)
	t.Cleanup(func() { node.Close() })
	l, err := chain.Dial(ctx, "http://"+addr, chain.DialConfig{Key: hexutil.Encode(crypto.FromECDSA(hotKey)), Registry: node.Registry().Hex()},
		chain.WithPollInterval(20*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	require.False(t, l.HoldsOwnerKey())

	send := func(u *api.UnsignedTransaction, key *ecdsa.PrivateKey) {
		t.Helper()
		signed, err := chain.SignUnsigned(chain.UnsignedTx{RLPHex: u.RLP, ChainID: l.ChainID(), From: crypto.PubkeyToAddress(key.PublicKey)}, key)
		require.NoError(t, err)
		require.NoError(t, node.Client().SendTransaction(ctx, signed))
		require.Eventually(t, func() bool {
			r, err := node.Client().TransactionReceipt(ctx, signed.Hash())
			return err == nil && r.Status == 1
		}, 10*time.Second, 20*time.Millisecond)
	}
	f := newRevocationFixture(t, l, adminKey, func(u *api.UnsignedTransaction) { send(u, ownerKey) })
	kh, _ := new(big.Int).SetString(f.withAdmin.KeyHash, 10)

	for _, tc := range []struct {
		nonce   uint64
		byOwner bool
		key     *ecdsa.PrivateKey
	}{{11, true, ownerKey}, {12, false, adminKey}} {
		req := api.RevocationRequest{Nonce: api.Nonce(tc.nonce)}
		if !tc.byOwner {
			req.AdminSignature = signRevocation(t, adminKey, l, f.withAdmin.KeyHash, tc.nonce)
		}
		rev, created, err := f.reg.RevokeNonce(ctx, f.withAdmin.IssuerID, req, tc.byOwner)
		require.NoError(t, err)
		assert.True(t, created)
		assert.Equal(t, "awaiting_signature", rev.Status)
		assert.Empty(t, rev.TxHash)
		require.NotNil(t, rev.WalletAction)
		assert.Equal(t, crypto.PubkeyToAddress(tc.key.PublicKey).Hex(), rev.WalletAction.From, "the caller's own wallet")
		assert.Contains(t, rev.WalletAction.Summary, "revokeNonce(")
		send(rev.WalletAction, tc.key)
		revoked, err := l.Governed().IsRevoked(ctx, kh, tc.nonce)
		require.NoError(t, err)
		assert.True(t, revoked)
		after, created, err := f.reg.RevokeNonce(ctx, f.withAdmin.IssuerID, req, tc.byOwner)
		require.NoError(t, err)
		assert.False(t, created)
		assert.Equal(t, "revoked", after.Status)
		assert.NotZero(t, after.RevokedInBlock)
	}
}
