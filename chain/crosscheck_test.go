package chain_test

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/chain/internal/fixture"
)

// TestCrossCheckGnarkVerifier deploys gnark's own exported Solidity verifier
// for the fixture key (compiled at generate time with the same solc-js) next
// to ours, and checks that both accept the honest proof and both refuse each
// tampered one: ours by returning false, gnark's by reverting.
func TestCrossCheckGnarkVerifier(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	l := shared(t)
	gnarkAddr, err := l.DeployCode(ctx, common.FromHex(fixture.GnarkVerifierMetaData.Bin))
	require.NoError(t, err)
	gv := fixture.NewGnarkVerifier()

	gnarkAccepts := func(t *testing.T, proof [8]*big.Int, inputs []*big.Int) bool {
		t.Helper()
		var raw []byte
		for _, w := range proof {
			raw = append(raw, common.BigToHash(w).Bytes()...)
		}
		_, err := l.CallContract(ctx, gnarkAddr, gv.PackVerifyProof(raw, [2]*big.Int{inputs[0], inputs[1]}))
		if err != nil {
			require.ErrorIs(t, err, chain.ErrReverted, "gnark's verifier signals rejection by reverting")
			return false
		}
		return true
	}

	honest := prove(t, 13)
	// Our encoding of the proof is exactly gnark's MarshalSolidity.
	var words []byte
	for _, w := range honest.proof {
		words = append(words, common.BigToHash(w).Bytes()...)
	}
	require.Equal(t, marshalSolidity(t, honest), words)

	ours, err := l.Check(ctx, fixtureKind, honest.proof, honest.inputs)
	require.NoError(t, err)
	assert.True(t, ours)
	assert.True(t, gnarkAccepts(t, honest.proof, honest.inputs))

	for name, tc := range tamperings(honest) {
		if len(tc.inputs) != 2 {
			continue // gnark's verifier takes exactly uint256[2]
		}
		t.Run(name, func(t *testing.T) {
			ours, err := l.Check(ctx, fixtureKind, tc.proof, tc.inputs)
			require.NoError(t, err)
			assert.False(t, ours, "ours")
			assert.False(t, gnarkAccepts(t, tc.proof, tc.inputs), "gnark's")
		})
	}
}

func marshalSolidity(t *testing.T, st provedStatement) []byte {
	t.Helper()
	m, ok := st.raw.(interface{ MarshalSolidity() []byte })
	require.True(t, ok)
	return m.MarshalSolidity()
}
