package chain_test

import (
	"crypto/ecdsa"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/verify/verifytest"
)

// proveTri proves a real statement with the governed registry's three
// public inputs [issuer, digest, circuitID] (verifytest's circuit).
func proveTri(t *testing.T, issuer, circuitID, x int64) ([8]*big.Int, []*big.Int) {
	t.Helper()
	return verifytest.Prove(t, big.NewInt(issuer), big.NewInt(x), big.NewInt(circuitID))
}

// TestGovernedRegistry runs the governance checks on the in-process chain and
// through a JSON-RPC endpoint (the external-node path, as TestJSONRPCEndpoint).
func TestGovernedRegistry(t *testing.T) {
	for _, external := range []bool{false, true} {
		t.Run(map[bool]string{false: "embedded", true: "jsonrpc"}[external], func(t *testing.T) {
			testGoverned(t, external)
		})
	}
}

func testGoverned(t *testing.T, external bool) {
	ctx := t.Context()
	ownerKey, err := crypto.GenerateKey()
	require.NoError(t, err)
	hotKey, err := crypto.GenerateKey()
	require.NoError(t, err)
	strangerKey, err := crypto.GenerateKey()
	require.NoError(t, err)
	owner := crypto.PubkeyToAddress(ownerKey.PublicKey)
	hotAddr := crypto.PubkeyToAddress(hotKey.PublicKey)
	opts := []chain.Option{chain.WithKey(hotKey), chain.WithFunded(owner, crypto.PubkeyToAddress(strangerKey.PublicKey))}
	if external {
		opts = append(opts, chain.WithHTTP(freePort(t)))
	}
	// The Ledger's own key (the hot submitter) deploys; the owner is a separate, cold address.
	l, err := chain.NewSimulated(ctx, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, l.Close()) })
	client := l.Client()
	var hot chain.Sender = l
	if external {
		endpoint, _ := l.Network()
		ec, err := ethclient.DialContext(ctx, endpoint)
		require.NoError(t, err)
		t.Cleanup(ec.Close)
		client = ec
		hot = keySender(t, ec, hotKey)
	}
	ownerTx := keySender(t, client, ownerKey)
	stranger := keySender(t, client, strangerKey)

	g, err := chain.DeployGoverned(ctx, hot, client, owner)
	require.NoError(t, err)
	verifier, err := chain.DeployVerifier(ctx, hot, triVK(t))
	require.NoError(t, err)
	const issuer, circuit = 1234567, 7
	issuerBig, circuitBig := big.NewInt(issuer), big.NewInt(circuit)

	// The hot key governs nothing.
	for _, a := range []chain.OwnerAction{g.RegisterIssuer(issuerBig, common.Address{}), g.AddCircuit(circuitBig, verifier),
		g.SetSubmitter(hotAddr, true), g.RevokeNonce(issuerBig, 1)} {
		_, err := g.Apply(ctx, hot, a)
		require.ErrorIs(t, err, chain.ErrReverted, a.Summary)
	}

	// The owner acts through an unsigned transaction signed "offline".
	u, err := g.Unsigned(ctx, owner, g.AddCircuit(circuitBig, verifier))
	require.NoError(t, err)
	assert.Equal(t, owner, u.From)
	assert.Contains(t, u.Summary, "addCircuit(7, ")
	signed, err := chain.SignUnsigned(u, ownerKey)
	require.NoError(t, err)
	require.NoError(t, client.SendTransaction(ctx, signed))
	_, err = chain.WaitMinedForTest(ctx, client, signed.Hash())
	require.NoError(t, err)
	got, err := g.VerifierOf(ctx, circuitBig)
	require.NoError(t, err)
	assert.Equal(t, verifier, got)
	// Immutable: a second addCircuit for the id reverts, even from the owner.
	_, err = g.Apply(ctx, ownerTx, g.AddCircuit(circuitBig, verifier))
	require.ErrorIs(t, err, chain.ErrReverted)

	proof, inputs := proveTri(t, issuer, circuit, 99)
	record, err := g.Record(circuitBig, proof, inputs)
	require.NoError(t, err)
	recordAction := chain.OwnerAction{Summary: "record", Data: record}

	// Not yet a submitter; issuer not yet registered.
	_, err = g.Apply(ctx, hot, recordAction)
	require.ErrorIs(t, err, chain.ErrReverted)
	_, err = g.Apply(ctx, ownerTx, g.SetSubmitter(hotAddr, true))
	require.NoError(t, err)
	_, err = g.Apply(ctx, hot, recordAction)
	require.ErrorIs(t, err, chain.ErrReverted, "unregistered issuer")
	_, err = g.Apply(ctx, ownerTx, g.RegisterIssuer(issuerBig, common.Address{}))
	require.NoError(t, err)

	// A failing proof (digest changed) reverts and records nothing.
	bad := append([]*big.Int{}, inputs...)
	bad[1] = new(big.Int).Add(bad[1], big.NewInt(1))
	badData, err := g.Record(circuitBig, proof, bad)
	require.NoError(t, err)
	_, err = g.Apply(ctx, hot, chain.OwnerAction{Summary: "bad record", Data: badData})
	require.ErrorIs(t, err, chain.ErrReverted)
	// publicInputs[2] must equal the circuit id.
	other, err := g.Record(big.NewInt(8), proof, inputs)
	require.NoError(t, err)
	_, err = g.Apply(ctx, hot, chain.OwnerAction{Summary: "wrong id", Data: other})
	require.ErrorIs(t, err, chain.ErrReverted)
	// An unregistered account cannot record.
	_, err = g.Apply(ctx, stranger, recordAction)
	require.ErrorIs(t, err, chain.ErrReverted)

	r, err := g.Apply(ctx, hot, recordAction)
	require.NoError(t, err)
	t.Logf("record gas used: %d", r.GasUsed)
	rec, err := g.CheckRecorded(r, inputs[1], issuerBig, circuitBig)
	require.NoError(t, err)
	assert.Equal(t, verifier, rec.Verifier)
	assert.Equal(t, hotAddr, rec.Submitter)
	require.Len(t, r.Logs, 1)
	assert.Len(t, r.Logs[0].Topics, 4, "digest, issuer and circuit are indexed")
	_, err = g.CheckRecorded(r, bad[1], issuerBig, circuitBig)
	require.Error(t, err, "a different digest must not match")
	// A log from another address is not the registry's.
	wrong := chain.NewGoverned(client, verifier)
	_, err = wrong.DecodeRecorded(r)
	require.ErrorIs(t, err, chain.ErrNoRecord)
	_, err = g.DecodeRecorded(&types.Receipt{Status: 0})
	require.ErrorIs(t, err, chain.ErrNoRecord)

	// Revocation and retirement.
	revoked, err := g.IsRevoked(ctx, issuerBig, 5)
	require.NoError(t, err)
	assert.False(t, revoked)
	_, err = g.Apply(ctx, ownerTx, g.RevokeNonce(issuerBig, 5))
	require.NoError(t, err)
	revoked, err = g.IsRevoked(ctx, issuerBig, 5)
	require.NoError(t, err)
	assert.True(t, revoked)

	active, err := g.IsIssuerActive(ctx, issuerBig, r.BlockNumber)
	require.NoError(t, err)
	assert.True(t, active)
	ret, err := g.Apply(ctx, ownerTx, g.RetireIssuer(issuerBig))
	require.NoError(t, err)
	active, err = g.IsIssuerActive(ctx, issuerBig, nil)
	require.NoError(t, err)
	assert.False(t, active)
	active, err = g.IsIssuerActive(ctx, issuerBig, r.BlockNumber)
	require.NoError(t, err)
	assert.True(t, active, "history: active at the old record's block")
	assert.Positive(t, ret.BlockNumber.Cmp(r.BlockNumber))
	_, err = g.Apply(ctx, hot, recordAction)
	require.ErrorIs(t, err, chain.ErrReverted, "retired issuer")

	// Several blocks later the record has 3 confirmations and is unchanged.
	confirmed, err := chain.WaitConfirmations(ctx, client, r, 3, 10*time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, r.BlockHash, confirmed.BlockHash)
	_, err = chain.SignUnsigned(chain.UnsignedTx{RLPHex: "0xzz"}, ownerKey)
	require.Error(t, err, "bad hex is an error, not a panic")
}

// keySender sends with key through the shared transaction pipeline (the
// owner's or a stranger's account).
func keySender(t *testing.T, client chain.TxBackend, key *ecdsa.PrivateKey) *chain.Transactor {
	t.Helper()
	tx, err := chain.NewTransactor(t.Context(), client, key, 50*time.Millisecond)
	require.NoError(t, err)
	return tx
}
