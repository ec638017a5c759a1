package chain

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/healthagents/healthagents/chain/internal/contracts"
)

// VerifyingKey is a BN254 Groth16 verifying key in the form the
// Groth16Verifier contract takes at deploy time. G2 points are
// [x.imaginary, x.real, y.imaginary, y.real], the order of the EVM pairing
// precompile. IC has one point more than the circuit has public inputs.
type VerifyingKey struct {
	Alpha1 [2]*big.Int
	Beta2  [4]*big.Int
	Gamma2 [4]*big.Int
	Delta2 [4]*big.Int
	IC     [][2]*big.Int
}

// PublicInputs returns the number of public inputs a proof for vk carries.
func (vk VerifyingKey) PublicInputs() int { return len(vk.IC) - 1 }

// constructorArgs packs vk as the verifier's constructor arguments.
func (vk VerifyingKey) constructorArgs() ([]byte, error) {
	if len(vk.IC) < 1 {
		return nil, errors.New("chain: verifying key has no IC points")
	}
	ic := make([]*big.Int, 0, 2*len(vk.IC))
	for _, p := range vk.IC {
		ic = append(ic, p[0], p[1])
	}
	for _, v := range append(append(append(append(ic, vk.Alpha1[:]...), vk.Beta2[:]...), vk.Gamma2[:]...), vk.Delta2[:]...) {
		if v == nil || v.Sign() < 0 || v.BitLen() > 256 {
			return nil, errors.New("chain: verifying key has a missing or out-of-range coordinate")
		}
	}
	verifier := contracts.NewGroth16Verifier().GetABI()
	b, err := verifier.Pack("", vk.Alpha1, vk.Beta2, vk.Gamma2, vk.Delta2, ic)
	if err != nil {
		return nil, fmt.Errorf("chain: encode verifying key: %w", err)
	}
	return b, nil
}

// Hash returns the keccak256 of the ABI-encoded key, the value the deployed
// verifier reports as verifyingKeyHash.
func (vk VerifyingKey) Hash() (common.Hash, error) {
	args, err := vk.constructorArgs()
	if err != nil {
		return common.Hash{}, err
	}
	return crypto.Keccak256Hash(args), nil
}
