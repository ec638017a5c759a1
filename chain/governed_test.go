package chain_test

import (
	"errors"
	"math/big"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/chain"
)

// triCircuit has the governed registry's three public inputs
// [issuerKeyHash, digest, circuitId]: X*X == Issuer + Digest + CircuitID.
type triCircuit struct {
	Issuer    frontend.Variable `gnark:",public"`
	Digest    frontend.Variable `gnark:",public"`
	CircuitID frontend.Variable `gnark:",public"`
	X         frontend.Variable
}

func (c *triCircuit) Define(api frontend.API) error {
	api.AssertIsEqual(api.Mul(c.X, c.X), api.Add(c.Issuer, c.Digest, c.CircuitID))
	return nil
}

type triKeys struct {
	vk chain.VerifyingKey
	pk groth16.ProvingKey
	cs interface{}
}

var triSetup = sync.OnceValues(func() (*struct {
	vk  chain.VerifyingKey
	pk  groth16.ProvingKey
	ccs any
}, error) {
	ccs, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, &triCircuit{})
	if err != nil {
		return nil, err
	}
	pk, vk, err := groth16.Setup(ccs)
	if err != nil {
		return nil, err
	}
	cvk, err := chain.VerifyingKeyFromGnark(vk)
	if err != nil {
		return nil, err
	}
	return &struct {
		vk  chain.VerifyingKey
		pk  groth16.ProvingKey
		ccs any
	}{cvk, pk, ccs}, nil
})

// proveTri proves issuer+digest+circuit = x*x for a real 3-input statement.
func proveTri(t *testing.T, issuer, circuitID, x int64) ([8]*big.Int, []*big.Int) {
	t.Helper()
	s, err := triSetup()
	require.NoError(t, err)
	digest := x*x - issuer - circuitID
	w, err := frontend.NewWitness(&triCircuit{Issuer: issuer, Digest: digest, CircuitID: circuitID, X: x}, ecc.BN254.ScalarField())
	require.NoError(t, err)
	p, err := groth16.Prove(s.ccs.(interface {
		// constraint.ConstraintSystem
		GetNbPublicVariables() int
	}).(groth16CS), s.pk, w)
	require.NoError(t, err)
	proof, err := chain.ProofFromGnark(p)
	require.NoError(t, err)
	pub, err := w.Public()
	require.NoError(t, err)
	inputs, err := chain.InputsFromWitness(pub)
	require.NoError(t, err)
	return proof, inputs
}
