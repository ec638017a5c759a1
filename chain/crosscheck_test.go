package chain_test

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/chain/internal/contracts"
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
	args, err := gnarkVK(t).ConstructorArgs()
	require.NoError(t, err)
	oursAddr, err := l.DeployCode(ctx, append(common.FromHex(contracts.Groth16VerifierMetaData.Bin), args...))
	require.NoError(t, err)
	ov := contracts.NewGroth16Verifier()
	oursAccepts := func(t *testing.T, proof [8]*big.Int, inputs []*big.Int) bool {
		t.Helper()
		out, err := l.CallContract(ctx, oursAddr, ov.PackVerifyProof(proof, inputs))
		require.NoError(t, err, "ours signals rejection by returning false")
		ok, err := ov.UnpackVerifyProof(out)
		require.NoError(t, err)
		return ok
	}

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

	honest := proveGnark(t, 13)
	// Our encoding of the proof is exactly gnark's MarshalSolidity.
	var words []byte
	for _, w := range honest.proof {
		words = append(words, common.BigToHash(w).Bytes()...)
	}
	require.Equal(t, marshalSolidity(t, honest), words)

	assert.True(t, oursAccepts(t, honest.proof, honest.inputs))
	assert.True(t, gnarkAccepts(t, honest.proof, honest.inputs))

	for name, tc := range tamperings(honest) {
		if len(tc.inputs) != 2 {
			continue // gnark's verifier takes exactly uint256[2]
		}
		t.Run(name, func(t *testing.T) {
			assert.False(t, oursAccepts(t, tc.proof, tc.inputs), "ours")
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
