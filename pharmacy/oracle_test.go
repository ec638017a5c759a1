package pharmacy_test

import (
	"context"
	"errors"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/pharmacy"
)

// newChain is go-ethereum's simulated chain (a real EVM) sealing a block
// every 5 ms, with the given accounts funded.
func newChain(t testing.TB, funded ...common.Address) (simulated.Client, func()) {
	t.Helper()
	alloc := types.GenesisAlloc{}
	for _, a := range funded {
		alloc[a] = types.Account{Balance: new(big.Int).Exp(big.NewInt(10), big.NewInt(24), nil)}
	}
	sim := simulated.NewBackend(alloc)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tk := time.NewTicker(5 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
				sim.Commit()
			}
		}
	}()
	var once sync.Once
	closeFn := func() { once.Do(func() { close(stop); <-done; _ = sim.Close() }) }
	t.Cleanup(closeFn)
	return sim.Client(), closeFn
}

func day(s string) time.Time {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return d
}

func TestOracleAttestAndRead(t *testing.T) {
	t.Parallel()
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	c, _ := newChain(t, crypto.PubkeyToAddress(key.PublicKey))
	ctx := t.Context()
	o, err := pharmacy.Deploy(ctx, c, key)
	require.NoError(t, err)

	_, found, err := o.Availability(ctx, "1245319599", "00071015523")
	require.NoError(t, err)
	assert.False(t, found, "nothing attested: not found, never made up")

	rc, err := o.Attest(ctx, healthagents.Availability{PharmacyNPI: "1245319599", NDC: "00071015523", AvailableOn: day("2026-11-24").Add(15 * time.Hour)})
	require.NoError(t, err)
	assert.NotEmpty(t, rc.TxHash)
	assert.Positive(t, rc.BlockNumber)
	r, err := c.TransactionReceipt(ctx, common.HexToHash(rc.TxHash))
	require.NoError(t, err)
	assert.Equal(t, types.ReceiptStatusSuccessful, r.Status)
	require.Len(t, r.Logs, 1, "AvailabilityAttested")

	a, found, err := o.Availability(ctx, "1245319599", "00071015523")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, day("2026-11-24"), a.AvailableOn, "stored as the UTC day")
	assert.Equal(t, crypto.PubkeyToAddress(key.PublicKey).Hex(), a.Attester)
	_, found, err = o.Availability(ctx, "1679576722", "00071015523")
	require.NoError(t, err)
	assert.False(t, found, "another pharmacy")

	// A second Oracle on the same contract reads the same answer.
	o2, err := pharmacy.New(ctx, c, key, o.Address())
	require.NoError(t, err)
	a2, found, err := o2.Availability(ctx, "1245319599", "00071015523")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, a, a2)
}

func TestOracleRefusals(t *testing.T) {
	t.Parallel()
	owner, err := crypto.GenerateKey()
	require.NoError(t, err)
	stranger, err := crypto.GenerateKey()
	require.NoError(t, err)
	c, _ := newChain(t, crypto.PubkeyToAddress(owner.PublicKey), crypto.PubkeyToAddress(stranger.PublicKey))
	ctx := t.Context()
	o, err := pharmacy.Deploy(ctx, c, owner)
	require.NoError(t, err)

	s, err := pharmacy.New(ctx, c, stranger, o.Address())
	require.NoError(t, err)
	_, err = s.Attest(ctx, healthagents.Availability{PharmacyNPI: "1245319599", NDC: "00071015523", AvailableOn: day("2026-11-24")})
	require.ErrorIs(t, err, pharmacy.ErrReverted, "not a writer")

	for _, a := range []healthagents.Availability{
		{PharmacyNPI: "124531959", NDC: "00071015523", AvailableOn: day("2026-11-24")},
		{PharmacyNPI: "1245319599", NDC: "0071015523", AvailableOn: day("2026-11-24")},
		{PharmacyNPI: "1245319599", NDC: "00071015523"},
		{PharmacyNPI: "1245319599", NDC: "00071015523", AvailableOn: day("1970-01-01")},
		{PharmacyNPI: "1245319599", NDC: "00071015523", AvailableOn: day("1969-12-31")},
	} {
		_, err := o.Attest(ctx, a)
		require.ErrorIs(t, err, pharmacy.ErrInvalid)
		require.ErrorIs(t, err, healthagents.ErrInvalidAttestation, "V1 answers it with 400")
	}
	_, _, err = o.Availability(ctx, "1245319599", "0071015523")
	require.ErrorIs(t, err, healthagents.ErrInvalidAttestation)
	_, err = pharmacy.New(ctx, c, owner, common.HexToAddress("0x1234"))
	require.ErrorIs(t, err, pharmacy.ErrNoContract)
}

func TestOracleChainDown(t *testing.T) {
	t.Parallel()
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	c, closeChain := newChain(t, crypto.PubkeyToAddress(key.PublicKey))
	o, err := pharmacy.Deploy(t.Context(), c, key)
	require.NoError(t, err)
	closeChain()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	_, _, err = o.Availability(ctx, "1245319599", "00071015523")
	require.Error(t, err)
	assert.True(t, errors.Is(err, healthagents.ErrChainUnavailable), "%v", err)
}

func BenchmarkAvailability(b *testing.B) {
	key, err := crypto.GenerateKey()
	require.NoError(b, err)
	c, _ := newChain(b, crypto.PubkeyToAddress(key.PublicKey))
	o, err := pharmacy.Deploy(b.Context(), c, key)
	require.NoError(b, err)
	_, err = o.Attest(b.Context(), healthagents.Availability{PharmacyNPI: "1245319599", NDC: "00071015523", AvailableOn: day("2026-11-24")})
	require.NoError(b, err)
	for b.Loop() {
		if _, _, err := o.Availability(b.Context(), "1245319599", "00071015523"); err != nil {
			b.Fatal(err)
		}
	}
}
