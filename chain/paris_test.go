package chain_test

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/vm/runtime"
	"github.com/ethereum/go-ethereum/params"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/chain/internal/contracts"
)

// parisConfig is an EVM at the Paris fork: no PUSH0 (Shanghai), no
// TSTORE/MCOPY/BLOBHASH (Cancun), as on older development nodes.
func parisConfig() *runtime.Config {
	return &runtime.Config{
		ChainConfig: &params.ChainConfig{
			ChainID:                 big.NewInt(1337),
			HomesteadBlock:          new(big.Int),
			EIP150Block:             new(big.Int),
			EIP155Block:             new(big.Int),
			EIP158Block:             new(big.Int),
			ByzantiumBlock:          new(big.Int),
			ConstantinopleBlock:     new(big.Int),
			PetersburgBlock:         new(big.Int),
			IstanbulBlock:           new(big.Int),
			MuirGlacierBlock:        new(big.Int),
			BerlinBlock:             new(big.Int),
			LondonBlock:             new(big.Int),
			TerminalTotalDifficulty: big.NewInt(0),
		},
		Origin:   common.Address{0xaa},
		GasLimit: 30_000_000,
		Random:   &common.Hash{1},
	}
}

// TestRunsOnParis deploys and runs both contracts on a Paris EVM: the
// bytecode compiled for evmVersion paris must not use later opcodes.
func TestRunsOnParis(t *testing.T) {
	t.Parallel()
	// Control: PUSH0 (Shanghai) fails here, so the check below can fail.
	_, _, _, err := runtime.Create(common.FromHex("0x5f5ff3"), parisConfig())
	require.Error(t, err, "PUSH0 must be invalid on the Paris config")

	cfg := parisConfig()
	cfg.BlockNumber = big.NewInt(1) // an issuer registered in block 0 reads as never registered
	args, err := fixtureVK(t).ConstructorArgs()
	require.NoError(t, err)
	_, verifier, _, err := runtime.Create(append(common.FromHex(contracts.Groth16VerifierMetaData.Bin), args...), cfg)
	require.NoError(t, err)
	reg := contracts.NewGovernedRegistry()
	// Origin is the owner and the submitter.
	_, registry, _, err := runtime.Create(append(common.FromHex(contracts.GovernedRegistryMetaData.Bin), reg.PackConstructor(cfg.Origin)...), cfg)
	require.NoError(t, err)
	id := chain.CircuitID(fixtureKind)
	for _, call := range [][]byte{reg.PackSetSubmitter(cfg.Origin, true), reg.PackAddCircuit(id, verifier),
		reg.PackRegisterIssuer(big.NewInt(fixtureIssuer), common.Address{})} {
		_, _, err = runtime.Call(registry, call, cfg)
		require.NoError(t, err)
	}

	st := prove(t, 21)
	_, _, err = runtime.Call(registry, reg.PackRecord(id, st.proof, st.inputs), cfg)
	require.NoError(t, err, "honest proof recorded on Paris")

	bad := cloneInputs(st.inputs)
	bad[1].Add(bad[1], big.NewInt(1))
	_, _, err = runtime.Call(registry, reg.PackRecord(id, st.proof, bad), cfg)
	require.Error(t, err, "changed input refused on Paris")
}
