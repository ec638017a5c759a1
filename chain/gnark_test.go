package chain_test

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark/backend/groth16"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/chain"
)

func TestVerifyingKeyFromGnark(t *testing.T) {
	t.Parallel()
	k, err := keys()
	require.NoError(t, err)
	vk, err := chain.VerifyingKeyFromGnark(k.VK)
	require.NoError(t, err)
	assert.Equal(t, 2, vk.PublicInputs())
	assert.Len(t, vk.IC, k.VK.NbPublicWitness()+1)
	h1, err := vk.Hash()
	require.NoError(t, err)
	h2, err := vk.Hash()
	require.NoError(t, err)
	assert.Equal(t, h1, h2)

	t.Run("fail/pedersen commitments", func(t *testing.T) {
		t.Parallel()
		src := k.VK.(*groth16bn254.VerifyingKey)
		withCommit := *src
		withCommit.PublicAndCommitmentCommitted = [][]int{{1}}
		_, err := chain.VerifyingKeyFromGnark(&withCommit)
		require.ErrorIs(t, err, chain.ErrCommitments)
	})
	t.Run("fail/other curve", func(t *testing.T) {
		t.Parallel()
		_, err := chain.VerifyingKeyFromGnark(groth16.NewVerifyingKey(ecc.BLS12_381))
		require.ErrorIs(t, err, chain.ErrCurve)
		_, err = chain.VerifyingKeyFromGnark(nil)
		require.ErrorIs(t, err, chain.ErrCurve)
	})
}

func TestProofFromGnark(t *testing.T) {
	t.Parallel()
	st := proveGnark(t, 9)
	require.Len(t, st.inputs, 2)
	assert.Equal(t, int64(81), st.inputs[0].Int64())
	assert.Equal(t, int64(10), st.inputs[1].Int64())

	t.Run("fail/pedersen commitments", func(t *testing.T) {
		t.Parallel()
		p := *st.raw.(*groth16bn254.Proof)
		p.Commitments = []bn254.G1Affine{{}}
		_, err := chain.ProofFromGnark(&p)
		require.ErrorIs(t, err, chain.ErrCommitments)
	})
	t.Run("fail/other curve", func(t *testing.T) {
		t.Parallel()
		_, err := chain.ProofFromGnark(groth16.NewProof(ecc.BLS12_381))
		require.ErrorIs(t, err, chain.ErrCurve)
	})
	t.Run("fail/nil witness", func(t *testing.T) {
		t.Parallel()
		_, err := chain.InputsFromWitness(nil)
		require.Error(t, err)
	})
}

// committedCircuit uses a Pedersen commitment (what std/rangecheck does).
type committedCircuit struct {
	X frontend.Variable
	Y frontend.Variable `gnark:",public"`
}

func (c *committedCircuit) Define(api frontend.API) error {
	cm, err := api.(frontend.Committer).Commit(c.X)
	if err != nil {
		return err
	}
	api.AssertIsDifferent(cm, 0)
	api.AssertIsEqual(api.Mul(c.X, c.X), c.Y)
	return nil
}

func TestRefusesRealCommitmentCircuit(t *testing.T) {
	t.Parallel()
	cs, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, &committedCircuit{})
	require.NoError(t, err)
	pk, vk, err := groth16.Setup(cs)
	require.NoError(t, err)
	w, err := frontend.NewWitness(&committedCircuit{X: 3, Y: 9}, ecc.BN254.ScalarField())
	require.NoError(t, err)
	proof, err := groth16.Prove(cs, pk, w)
	require.NoError(t, err)
	_, err = chain.VerifyingKeyFromGnark(vk)
	require.ErrorIs(t, err, chain.ErrCommitments)
	_, err = chain.ProofFromGnark(proof)
	require.ErrorIs(t, err, chain.ErrCommitments)
}
