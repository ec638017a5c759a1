package chain_test

import (
	"math/big"
	"os"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/chain"
)

// GanacheEnv names a ganache node started with --wallet.deterministic
// (.ci/ganache.sh); the test skips without it.
const GanacheEnv = "HEALTHAGENTS_TEST_GANACHE"

// ganache's deterministic accounts 0 and 1 (public development keys).
const (
	ganacheKey0 = "4f3edf983ac636a65a842ce7c78d9aa706d3b113bce9c46f30d7d21715b23b1d"
	ganacheKey1 = "6cbed15c793ce57650b9877cf6fa156fbef513c4e6134f022a85b1ffdd59b2a1"
)

// TestGovernedOnGanache runs the governance checks against an external
// node that is not go-ethereum: ganache (npm). Deploy with a cold owner,
// the owner's transactions signed offline, then the Ledger: bind, record,
// a failing proof reverts, the hot key governs nothing.
func TestGovernedOnGanache(t *testing.T) {
	endpoint := os.Getenv(GanacheEnv)
	if endpoint == "" {
		t.Skip(GanacheEnv + " is not set (.ci/ganache.sh starts ganache)")
	}
	ctx := t.Context()
	hotKey, err := crypto.HexToECDSA(ganacheKey0)
	require.NoError(t, err)
	ownerKey, err := crypto.HexToECDSA(ganacheKey1)
	require.NoError(t, err)
	owner := crypto.PubkeyToAddress(ownerKey.PublicKey)
	client, err := ethclient.DialContext(ctx, endpoint)
	require.NoError(t, err)
	defer client.Close()

	addrs, err := chain.Deploy(ctx, endpoint, hotKey, chain.DeployConfig{Owner: owner, Verifiers: map[chain.Kind]chain.VerifyingKey{triKind: triVK(t)}})
	require.NoError(t, err)
	require.Len(t, addrs.Pending, 2)
	for _, u := range addrs.Pending {
		signAndSend(t, client, u, ownerKey)
	}
	l, err := chain.Dial(ctx, endpoint, chain.DialConfig{Key: ganacheKey0, Registry: addrs.Registry.Hex(), Owner: owner.Hex()},
		chain.WithPollInterval(20*time.Millisecond))
	require.NoError(t, err)
	defer l.Close()
	_, network := l.Network()
	t.Logf("ganache: network %s, registry %s", network, addrs.Registry.Hex())
	require.NoError(t, l.EnsureSubmitter(ctx))
	err = l.Register(ctx, "tri-v2", triVK(t))
	require.ErrorIs(t, err, chain.ErrOwnerAction)
	g, err := l.RegisterIssuer(ctx, big.NewInt(41), common.Address{})
	require.NoError(t, err)
	require.NotNil(t, g.Unsigned)
	signAndSend(t, client, *g.Unsigned, ownerKey)
	active, err := l.Governed().IsIssuerActive(ctx, big.NewInt(41), nil)
	require.NoError(t, err)
	assert.True(t, active)
	testLedgerGoverned(t, l, client, hotKey)
}
