package chain_test

import (
	"context"
	"fmt"
	"math/big"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/consensys/gnark/logger"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/healthagents/healthagents/chain"
)

// statement is a circuit of the registry's shape: public [issuer, digest,
// circuit id], and a secret X with X * (issuer + digest + circuit id) = 1.
type statement struct {
	Issuer, Digest, CircuitID frontend.Variable `gnark:",public"`
	X                         frontend.Variable
}

func (c *statement) Define(api frontend.API) error {
	api.AssertIsEqual(api.Mul(c.X, api.Add(c.Issuer, c.Digest, c.CircuitID)), 1)
	return nil
}

// Example verifies a gnark Groth16 proof in EVM code on the embedded
// simulated chain and records it in the GovernedRegistry.
func Example() {
	ctx := context.Background()
	logger.Disable()
	ccs, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, &statement{})
	if err != nil {
		panic(err)
	}
	pk, gvk, err := groth16.Setup(ccs) // a development setup; production keys come from a ceremony
	if err != nil {
		panic(err)
	}
	l, err := chain.NewSimulated(ctx) // holds the registry owner's key
	if err != nil {
		panic(err)
	}
	defer l.Close()

	const kind chain.Kind = "example-v1"
	vk, err := chain.VerifyingKeyFromGnark(gvk)
	if err != nil {
		panic(err)
	}
	if err := l.Register(ctx, kind, vk); err != nil { // binds a verifier to chain.CircuitID(kind)
		panic(err)
	}
	issuer, digest, id := big.NewInt(42), big.NewInt(36), chain.CircuitID(kind)
	if _, err := l.RegisterIssuer(ctx, issuer, common.Address{}); err != nil {
		panic(err)
	}

	r := ecc.BN254.ScalarField()
	sum := new(big.Int).Add(issuer, digest)
	sum.Mod(sum.Add(sum, id), r)
	w, err := frontend.NewWitness(&statement{Issuer: issuer, Digest: digest, CircuitID: id, X: new(big.Int).ModInverse(sum, r)}, r)
	if err != nil {
		panic(err)
	}
	gnarkProof, err := groth16.Prove(ccs, pk, w)
	if err != nil {
		panic(err)
	}
	publicWitness, err := w.Public()
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

	rc, err := l.Submit(ctx, kind, proof, inputs)
	if err != nil {
		panic(err)
	}
	st, err := l.Statement(ctx, rc.TxHash)
	if err != nil {
		panic(err)
	}
	_, network := l.Network()
	fmt.Println(network, rc.Verified, st.Kind, st.Inputs[0], st.Inputs[1])
	// Output: simulated true example-v1 42 36
}

// ExampleDeploy puts the contracts on an Ethereum node once (what
// `healthagents chain deploy` does) and then dials it with the printed
// registry address, as a server started with CHAIN_ENDPOINT does.
func ExampleDeploy() {
	ctx := context.Background()
	ccs, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, &statement{})
	if err != nil {
		panic(err)
	}
	_, gvk, err := groth16.Setup(ccs)
	if err != nil {
		panic(err)
	}
	vk, err := chain.VerifyingKeyFromGnark(gvk)
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
	addrs, err := chain.Deploy(ctx, endpoint, key, chain.DeployConfig{Owner: owner, Verifiers: map[chain.Kind]chain.VerifyingKey{"example-v1": vk}})
	if err != nil {
		panic(err)
	}
	fmt.Println("registry:", addrs.Registry.Hex())
	for _, u := range addrs.Pending {
		fmt.Println("for the owner's wallet:", u.Summary, u.RLPHex)
	}

	l, err := chain.Dial(ctx, endpoint, chain.DialConfig{Key: keyHex, Registry: addrs.Registry.Hex(), Owner: owner.Hex()})
	if err != nil {
		panic(err)
	}
	defer l.Close()
	endpointShown, network := l.Network()
	fmt.Println(endpointShown, network)
}
