package chain_test

import (
	"context"
	"fmt"

	"github.com/consensys/gnark/logger"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

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

// ExampleDeploy puts the contracts on an Ethereum node once (what
// `healthagents chain deploy` does) and then dials it with the printed
// registry address, as a server started with CHAIN_ENDPOINT does.
func ExampleDeploy() {
	ctx := context.Background()
	keys, err := fixture.Load("internal/fixture/testdata")
	if err != nil {
		panic(err)
	}
	vk, err := chain.VerifyingKeyFromGnark(keys.VK)
	if err != nil {
		panic(err)
	}
	const endpoint = "http://127.0.0.1:8545"                                          // e.g. geth --dev, anvil, hardhat node
	const keyHex = "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80" // a funded development key
	key, err := crypto.HexToECDSA(keyHex)
	if err != nil {
		panic(err)
	}
	// The registry's owner is a cold wallet: the owner actions that follow
	// the deployment come back unsigned, for the wallet to sign and send.
	owner := common.HexToAddress("0x70997970C51812dc3A010C7d01b50e0d17dc79C8")
	addrs, err := chain.Deploy(ctx, endpoint, key, chain.DeployConfig{Owner: owner, Verifiers: map[chain.Kind]chain.VerifyingKey{"square": vk}})
	if err != nil {
		panic(err)
	}
	fmt.Println("registry:", addrs.Registry.Hex())
	for _, u := range addrs.Pending {
		fmt.Println("for the owner's wallet:", u.Summary, u.RLPHex)
	}

	l, err := chain.Dial(ctx, endpoint, chain.DialConfig{Key: keyHex, Registry: addrs.Registry.Hex(),
		LegacyRegistry: addrs.Legacy.Hex(), Owner: owner.Hex()})
	if err != nil {
		panic(err)
	}
	defer l.Close()
	endpointShown, network := l.Network()
	fmt.Println(endpointShown, network)
}
