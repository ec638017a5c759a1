package ceremony_test

import (
	"math/big"
	"os"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/chain"
)

// ganacheKey4 is ganache's fifth deterministic development account
// (.ci/ganache.sh starts five; the other packages' ganache tests use the
// first four, so nonces never collide).
const ganacheKey4 = "add53f9a7e588d003326d1cbf9e4a43c061aadd9bc938c843a79e7b4fd2ad743"

// TestThreePartyCeremonyOnGanache: the keys of a three-party ceremony
// verify on an external node that is not go-ethereum (ganache, started by
// .ci/ganache.sh): their verifier contract, deployed there, accepts a proof
// of the statement and rejects the same proof for another statement.
func TestThreePartyCeremonyOnGanache(t *testing.T) {
	endpoint := os.Getenv("HEALTHAGENTS_TEST_GANACHE")
	if endpoint == "" {
		t.Skip("HEALTHAGENTS_TEST_GANACHE is not set (.ci/ganache.sh starts ganache)")
	}
	ctx := t.Context()
	tr, err := threeParty()
	require.NoError(t, err)
	client, err := ethclient.DialContext(ctx, endpoint)
	require.NoError(t, err)
	defer client.Close()
	key, err := crypto.HexToECDSA(ganacheKey4)
	require.NoError(t, err)
	tx, err := chain.NewTransactor(ctx, client, key, 20*time.Millisecond)
	require.NoError(t, err)
	for _, k := range tr.keys {
		proof, a := prove(t, k.Name, k.PK, 3)
		vk, err := chain.VerifyingKeyFromGnark(k.VK)
		require.NoError(t, err)
		verifier, err := chain.DeployVerifier(ctx, tx, vk)
		require.NoError(t, err, k.Name)
		onchain, err := chain.ProofFromGnark(proof)
		require.NoError(t, err)
		in := publicOf(t, a)
		ok, err := chain.VerifyProofAt(ctx, client, verifier, onchain, in, nil)
		require.NoError(t, err)
		assert.True(t, ok, "%s: the ceremony's keys verify on ganache", k.Name)
		ok, err = chain.VerifyProofAt(ctx, client, verifier, onchain, []*big.Int{new(big.Int).Add(in[0], big.NewInt(1))}, nil)
		require.NoError(t, err)
		assert.False(t, ok, "%s: a proof verifies only its own statement", k.Name)
	}
}
