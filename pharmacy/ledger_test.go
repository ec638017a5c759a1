package pharmacy_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/pharmacy"
)

// TestOracleOnLedger runs the oracle on the service's own embedded chain:
// written through the Ledger (its account and nonces, interleaved with the
// Ledger's own transactions), and by a second writer with its own funded
// key whose transactions are mined through Ledger.Client.
func TestOracleOnLedger(t *testing.T) {
	t.Parallel()
	writer, err := crypto.GenerateKey()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	l, err := chain.NewSimulated(ctx, chain.WithFunded(crypto.PubkeyToAddress(writer.PublicKey)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })

	o, err := pharmacy.DeployWith(ctx, l.Client(), l)
	require.NoError(t, err)
	rc, err := o.Attest(ctx, healthagents.Availability{PharmacyNPI: "1245319599", NDC: "00071015523", AvailableOn: day("2026-11-24")})
	require.NoError(t, err)
	assert.NotEmpty(t, rc.TxHash)
	to := l.Account()
	_, err = l.Transact(ctx, &to, nil, 0)
	require.NoError(t, err, "the Ledger's own transaction after the oracle's")
	a, found, err := o.Availability(ctx, "1245319599", "00071015523")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, day("2026-11-24"), a.AvailableOn)
	assert.Equal(t, l.Account().Hex(), a.Attester, "written by the Ledger's account")

	// Another key on the same chain: not a writer until allowed, so its
	// attestation reverts (and was mined or refused, not left pending).
	other, err := pharmacy.New(ctx, l.Client(), writer, o.Address())
	require.NoError(t, err)
	can, err := other.CanWrite(ctx)
	require.NoError(t, err)
	assert.False(t, can)
	can, err = o.CanWrite(ctx)
	require.NoError(t, err)
	assert.True(t, can, "the deployer")
	_, err = other.Attest(ctx, healthagents.Availability{PharmacyNPI: "1679576722", NDC: "00071015523", AvailableOn: day("2026-11-25")})
	require.ErrorIs(t, err, pharmacy.ErrReverted)

	// A Deploy by that key, mined through Ledger.Client.
	own, err := pharmacy.Deploy(ctx, l.Client(), writer)
	require.NoError(t, err)
	_, err = own.Attest(ctx, healthagents.Availability{PharmacyNPI: "1679576722", NDC: "00071015523", AvailableOn: day("2026-11-25")})
	require.NoError(t, err)
	a, found, err = own.Availability(ctx, "1679576722", "00071015523")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, crypto.PubkeyToAddress(writer.PublicKey).Hex(), a.Attester)

	// Reattached by address through the Ledger.
	again, err := pharmacy.NewWith(ctx, l.Client(), l, o.Address())
	require.NoError(t, err)
	_, found, err = again.Availability(ctx, "1245319599", "00071015523")
	require.NoError(t, err)
	assert.True(t, found)
}

// TestOracleAndLedgerConcurrently: attestations through the Ledger and the
// Ledger's own transactions, sent at the same time from one account, all
// get mined (one nonce counter; two would collide).
func TestOracleAndLedgerConcurrently(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	l, err := chain.NewSimulated(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	o, err := pharmacy.DeployWith(ctx, l.Client(), l)
	require.NoError(t, err)

	const n = 6
	ndcs := []string{"00071015523", "00003089421", "00093505601", "00378395077", "00172375860", "00006074954"}
	errs := make(chan error, 2*n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, err := o.Attest(ctx, healthagents.Availability{PharmacyNPI: "1245319599", NDC: ndcs[i], AvailableOn: day("2026-11-24").AddDate(0, 0, i)})
			errs <- err
		})
		wg.Go(func() {
			to := common.Address{byte(i + 1)}
			_, err := l.Transact(ctx, &to, nil, 0)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for i, ndc := range ndcs {
		a, found, err := o.Availability(ctx, "1245319599", ndc)
		require.NoError(t, err)
		require.True(t, found, ndc)
		assert.Equal(t, day("2026-11-24").AddDate(0, 0, i), a.AvailableOn)
	}
}
