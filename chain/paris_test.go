package chain_test

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/vm/runtime"
	"github.com/ethereum/go-ethereum/params"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	args, err := fixtureVK(t).ConstructorArgs()
	require.NoError(t, err)
	_, verifier, _, err := runtime.Create(append(common.FromHex(contracts.Groth16VerifierMetaData.Bin), args...), cfg)
	require.NoError(t, err)
	_, registry, _, err := runtime.Create(common.FromHex(contracts.StatementRegistryMetaData.Bin), cfg)
	require.NoError(t, err)
	reg := contracts.NewStatementRegistry()
	var kind [32]byte
	copy(kind[:], fixtureKind)
	_, _, err = runtime.Call(registry, reg.PackRegister(kind, verifier), cfg)
	require.NoError(t, err)

	st := prove(t, 21)
	out, _, err := runtime.Call(registry, reg.PackVerifyAndRecord(kind, st.proof, st.inputs), cfg)
	require.NoError(t, err)
	ok, err := reg.UnpackVerifyAndRecord(out)
	require.NoError(t, err)
	assert.True(t, ok, "honest proof on Paris")

	bad := cloneInputs(st.inputs)
	bad[0].Add(bad[0], big.NewInt(1))
	out, _, err = runtime.Call(registry, reg.PackVerifyAndRecord(kind, st.proof, bad), cfg)
	require.NoError(t, err)
	ok, err = reg.UnpackVerifyAndRecord(out)
	require.NoError(t, err)
	assert.False(t, ok, "changed input on Paris")
}
