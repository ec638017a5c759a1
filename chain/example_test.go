package chain_test

import (
	"context"
	"fmt"

	"github.com/consensys/gnark/logger"

	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/chain/internal/fixture"
)

// Example verifies a gnark Groth16 proof in EVM code on the embedded
// simulated chain and records it in a transaction.
func Example() {
	ctx := context.Background()
	logger.Disable()
	keys, err := fixture.Load("internal/fixture/testdata") // a compiled circuit and its Groth16 keys
	if err != nil {
		panic(err)
	}
	l, err := chain.NewSimulated(ctx)
	if err != nil {
		panic(err)
	}
	defer l.Close()

	vk, err := chain.VerifyingKeyFromGnark(keys.VK)
	if err != nil {
		panic(err)
	}
	if err := l.Register(ctx, "square", vk); err != nil {
		panic(err)
	}

	gnarkProof, publicWitness, err := keys.Prove(6) // proves knowledge of x with x*x = 36, x+1 = 7
	if err != nil {
		panic(err)
	}
	proof, err := chain.ProofFromGnark(gnarkProof)
	if err != nil {
		panic(err)
	}
	inputs, err := chain.InputsFromWitness(publicWitness)
	if err != nil {
		panic(err)
	}

	rc, err := l.Submit(ctx, "square", proof, inputs)
	if err != nil {
		panic(err)
	}
	st, err := l.Statement(ctx, rc.TxHash)
	if err != nil {
		panic(err)
	}
	_, network := l.Network()
	fmt.Println(network, rc.Verified, st.Kind, st.Inputs)
	// Output: simulated true square [36 7]
}
