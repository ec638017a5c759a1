package chain_test

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/verify/verifytest"
)

const triKind chain.Kind = "tri-v1"

// proveTriFor proves a three-input statement for kind: its last public
// input is chain.CircuitID(kind), as the registry requires.
func proveTriFor(t testing.TB, kind chain.Kind, issuer, x int64) ([8]*big.Int, []*big.Int) {
	t.Helper()
	return verifytest.Prove(t, big.NewInt(issuer), big.NewInt(x), chain.CircuitID(kind))
}

// triVK is the verifying key of the three-input test circuit.
func triVK(t testing.TB) chain.VerifyingKey { return verifytest.VerifyingKey(t) }

func TestCircuitID(t *testing.T) {
	t.Parallel()
	// keccak256("eligibility-v2") mod r, computed independently of CircuitID.
	h := crypto.Keccak256([]byte("eligibility-v2"))
	want := new(big.Int).Mod(new(big.Int).SetBytes(h), ecc.BN254.ScalarField())
	assert.Equal(t, want, chain.CircuitID("eligibility-v2"))
	assert.NotEqual(t, chain.CircuitID("eligibility-v2"), chain.CircuitID("eligibility-v3"))
	assert.Negative(t, chain.CircuitID("prescription-v2").Cmp(ecc.BN254.ScalarField()))
}

// TestLedgerGovernedEmbedded: on the embedded chain the Ledger holds the
// generated owner key, binds a three-input circuit in the GovernedRegistry,
// records through record, and the hot key governs nothing.
func TestLedgerGovernedEmbedded(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	adminKey, err := crypto.GenerateKey()
	require.NoError(t, err)
	admin := crypto.PubkeyToAddress(adminKey.PublicKey)
	l, err := chain.NewSimulated(ctx, chain.WithFunded(admin))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, l.Close()) })
	require.True(t, l.HoldsOwnerKey())
	require.NotEqual(t, l.Account(), l.Owner(), "owner and submitter are different accounts")
	hot, ok := chain.KeyOf(l)
	require.True(t, ok)
	testLedgerGoverned(t, l, l.Client(), hot)

	// A payer's admin revokes its own nonces, and nobody else's.
	_, err = l.RegisterIssuer(ctx, big.NewInt(42), admin)
	require.NoError(t, err)
	adminTx, err := chain.NewTransactor(ctx, l.Client(), adminKey, 20*time.Millisecond)
	require.NoError(t, err)
	g := l.Governed()
	_, err = g.Apply(ctx, adminTx, g.RevokeNonce(big.NewInt(42), 3))
	require.NoError(t, err)
	revoked, err := g.IsRevoked(ctx, big.NewInt(42), 3)
	require.NoError(t, err)
	assert.True(t, revoked)
	_, err = g.Apply(ctx, adminTx, g.RevokeNonce(big.NewInt(41), 3))
	require.ErrorIs(t, err, chain.ErrReverted, "another issuer's nonce")
	st, err := l.Issuer(ctx, big.NewInt(42))
	require.NoError(t, err)
	assert.Equal(t, admin, st.Admin)
}

// TestLedgerGovernedJSONRPC: the same through a JSON-RPC node with a cold
// owner: chain deploy returns the owner's actions unsigned, the wallet signs
// them, and an unbound circuit or an unregistered issuer is an owner action
// the Ledger prepares but cannot send.
func TestLedgerGovernedJSONRPC(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	hotKey, err := crypto.GenerateKey()
	require.NoError(t, err)
	ownerKey, err := crypto.GenerateKey()
	require.NoError(t, err)
	owner := crypto.PubkeyToAddress(ownerKey.PublicKey)
	node, err := chain.NewSimulated(ctx, chain.WithKey(hotKey), chain.WithHTTP(freePort(t)), chain.WithFunded(owner))
	require.NoError(t, err)
	t.Cleanup(func() { node.Close() })
	endpoint, _ := node.Network()

	addrs, err := chain.Deploy(ctx, endpoint, hotKey, chain.DeployConfig{Owner: owner, Verifiers: map[chain.Kind]chain.VerifyingKey{triKind: triVK(t)}})
	require.NoError(t, err)
	require.Len(t, addrs.Pending, 2)
	assert.Contains(t, addrs.Pending[0].Summary, "setSubmitter(")
	assert.Contains(t, addrs.Pending[1].Summary, "addCircuit("+chain.CircuitID(triKind).String())
	assert.Equal(t, addrs.Pending[0].Nonce+1, addrs.Pending[1].Nonce)
	for _, u := range addrs.Pending {
		signAndSend(t, node.Client(), u, ownerKey)
	}

	l, err := chain.Dial(ctx, endpoint, chain.DialConfig{Key: hexKey(hotKey), Registry: addrs.Registry.Hex(), Owner: owner.Hex()},
		chain.WithPollInterval(20*time.Millisecond), chain.WithConfirmations(2))
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	require.False(t, l.HoldsOwnerKey())
	require.NoError(t, l.EnsureSubmitter(ctx), "the signed setSubmitter made it a submitter")

	// Another owner expected: refused.
	_, err = chain.Dial(ctx, endpoint, chain.DialConfig{Key: hexKey(hotKey), Registry: addrs.Registry.Hex(), Owner: common.Address{9}.Hex()})
	require.ErrorContains(t, err, "not CHAIN_OWNER")
	// The owner key given must be the owner's.
	_, err = chain.Dial(ctx, endpoint, chain.DialConfig{Key: hexKey(hotKey), Registry: addrs.Registry.Hex()}, chain.WithOwnerKey(hotKey))
	require.Error(t, err)

	// A circuit not yet bound: an owner action, with the command to run.
	err = l.Register(ctx, "tri-v2", triVK(t))
	require.ErrorIs(t, err, chain.ErrOwnerAction)
	assert.Contains(t, err.Error(), "healthagents chain add-circuit tri-v2")
	// Registering an issuer is prepared for the wallet.
	g, err := l.RegisterIssuer(ctx, big.NewInt(41), common.Address{})
	require.NoError(t, err)
	require.NotNil(t, g.Unsigned)
	require.Nil(t, g.Receipt)
	signAndSend(t, node.Client(), *g.Unsigned, ownerKey)

	// Blocks come only with transactions on this node: keep sending some
	// from the owner while Submit waits for its second confirmation.
	stop := make(chan struct{})
	nudger, err := chain.NewTransactor(ctx, node.Client(), ownerKey, 20*time.Millisecond)
	require.NoError(t, err)
	nudge := chain.NewGoverned(node.Client(), addrs.Registry)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				_, _ = nudge.Apply(context.WithoutCancel(ctx), nudger, nudge.RevokeNonce(big.NewInt(1), 1))
			}
		}
	}()
	defer close(stop)
	testLedgerGoverned(t, l, node.Client(), hotKey)

	// The same through the JSON-RPC node in batch mode: two statements in
	// one recordBatch, answered after its second confirmation.
	b, err := chain.Dial(ctx, endpoint, chain.DialConfig{Key: hexKey(hotKey), Registry: addrs.Registry.Hex(), Owner: owner.Hex()},
		chain.WithPollInterval(20*time.Millisecond), chain.WithConfirmations(2), chain.WithAnchor(chain.AnchorBatch, 2, time.Hour))
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	rcs := make([]chain.Receipt, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range rcs {
		wg.Go(func() {
			proof, inputs := proveTriFor(t, triKind, 41, int64(5000+i))
			rcs[i], errs[i] = b.Submit(ctx, triKind, proof, inputs)
		})
	}
	wg.Wait()
	for i := range rcs {
		require.NoError(t, errs[i])
		require.NotNil(t, rcs[i].Batch)
		assert.Equal(t, rcs[0].TxHash, rcs[i].TxHash, "one batch")
		assert.Equal(t, 2, rcs[i].Batch.Size)
	}
	head, err := node.Client().HeaderByNumber(ctx, nil)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, head.Number.Uint64(), rcs[0].BlockNumber+1, "answered after its second confirmation")
	r, err := node.Client().TransactionReceipt(ctx, rcs[0].TxHash)
	require.NoError(t, err)
	ev, err := b.Governed().DecodeBatch(r)
	require.NoError(t, err)
	assert.Equal(t, 0, ev.Root.Cmp(rcs[0].Batch.Root))
}

// testLedgerGoverned runs the checks common to both paths; l's registry has
// triKind bound (or binds it, holding the owner key) and issuer 41
// registered (or registers it).
func testLedgerGoverned(t *testing.T, l *chain.Ledger, client chain.TxBackend, hotKey *ecdsa.PrivateKey) {
	ctx := t.Context()
	require.NoError(t, l.Register(ctx, triKind, triVK(t)))
	bound, err := l.Verifier(ctx, triKind)
	require.NoError(t, err)
	require.NotEqual(t, common.Address{}, bound)
	require.NoError(t, l.Register(ctx, triKind, triVK(t)), "same key: nothing to do")

	// Verifiers are immutable per circuit id.
	other := triVK(t)
	other.IC = append([][2]*big.Int{other.IC[1], other.IC[0]}, other.IC[2:]...)
	err = l.Register(ctx, triKind, other)
	require.ErrorIs(t, err, chain.ErrVerifierMismatch)
	assert.Contains(t, err.Error(), "immutable")
	again, err := l.Verifier(ctx, triKind)
	require.NoError(t, err)
	assert.Equal(t, bound, again)

	proof, inputs := proveTriFor(t, triKind, 41, 1234)
	if l.HoldsOwnerKey() {
		_, err = l.Submit(ctx, triKind, proof, inputs)
		require.ErrorIs(t, err, chain.ErrIssuerNotActive, "issuer not registered yet")
		g, err := l.RegisterIssuer(ctx, big.NewInt(41), common.Address{})
		require.NoError(t, err)
		require.NotNil(t, g.Receipt)
	}
	ok, err := l.Check(ctx, triKind, proof, inputs)
	require.NoError(t, err)
	assert.True(t, ok)

	rc, err := l.Submit(ctx, triKind, proof, inputs)
	require.NoError(t, err)
	assert.True(t, rc.Verified)
	st, err := l.Statement(ctx, rc.TxHash)
	require.NoError(t, err)
	assert.Equal(t, triKind, st.Kind)
	assert.Equal(t, inputs, st.Inputs)
	assert.Equal(t, bound, st.Verifier)
	assert.Equal(t, l.Account(), st.Submitter)

	// A failing proof reverts and records nothing.
	bad := append([]*big.Int{}, inputs...)
	bad[1] = new(big.Int).Add(bad[1], big.NewInt(1))
	rc, err = l.Submit(ctx, triKind, proof, bad)
	require.ErrorIs(t, err, chain.ErrRejected)
	assert.False(t, rc.Verified)
	if rc.TxHash != (common.Hash{}) {
		_, err = l.Statement(ctx, rc.TxHash)
		require.ErrorIs(t, err, chain.ErrReverted, "nothing recorded")
	}
	// A proof naming another circuit id is not sent; an unbound kind is unknown.
	wrongID := append([]*big.Int{}, inputs...)
	wrongID[2] = chain.CircuitID("tri-v9")
	_, err = l.Submit(ctx, triKind, proof, wrongID)
	require.ErrorIs(t, err, chain.ErrRejected)
	_, err = l.Submit(ctx, "tri-v9", proof, inputs)
	require.ErrorIs(t, err, chain.ErrUnknownKind)

	// The hot (submitting) key governs nothing: it cannot register an
	// issuer, add or change a verifier, or make itself a submitter.
	g := l.Governed()
	require.Equal(t, l.Account(), crypto.PubkeyToAddress(hotKey.PublicKey))
	hot, err := chain.NewTransactor(ctx, client, hotKey, 20*time.Millisecond)
	require.NoError(t, err)
	for _, a := range []chain.OwnerAction{
		g.RegisterIssuer(big.NewInt(77), common.Address{}),
		g.AddCircuit(chain.CircuitID("tri-v5"), bound),
		g.AddCircuit(chain.CircuitID(triKind), bound),
		g.SetSubmitter(common.Address{5}, true),
		g.RetireIssuer(big.NewInt(41)),
	} {
		_, err := g.Apply(ctx, hot, a)
		require.ErrorIs(t, err, chain.ErrReverted, a.Summary)
	}
	active, err := g.IsIssuerActive(ctx, big.NewInt(77), nil)
	require.NoError(t, err)
	assert.False(t, active)
}

func signAndSend(t *testing.T, client chain.Backend, u chain.UnsignedTx, key *ecdsa.PrivateKey) {
	t.Helper()
	signed, err := chain.SignUnsigned(u, key)
	require.NoError(t, err)
	require.NoError(t, client.SendTransaction(t.Context(), signed))
	r, err := chain.WaitMinedForTest(t.Context(), client, signed.Hash())
	require.NoError(t, err)
	require.Equal(t, uint64(1), r.Status, u.Summary)
}

func hexKey(k *ecdsa.PrivateKey) string { return hexutil.Encode(crypto.FromECDSA(k)) }
