package iden3

import (
	"math/big"
	"testing"

	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/consensys/gnark/test"
	"github.com/iden3/go-iden3-crypto/babyjub"
	"github.com/stretchr/testify/require"
)

type eddsaCircuit struct {
	A, R8 Point
	S     frontend.Variable
	Msg   frontend.Variable `gnark:",public"`
}

func (c *eddsaCircuit) Define(api frontend.API) error {
	VerifyEdDSAPoseidon(api, c.A, c.R8, c.S, c.Msg)
	return nil
}

func assignment(pk *babyjub.PublicKey, sig *babyjub.Signature, msg *big.Int) *eddsaCircuit {
	return &eddsaCircuit{A: Point{pk.X, pk.Y}, R8: Point{sig.R8.X, sig.R8.Y}, S: sig.S, Msg: msg}
}

// Signatures made by babyjub.SignPoseidon satisfy the gadget; a changed
// message, key, R8 or S does not.
func TestEdDSAPoseidonAgainstIden3(t *testing.T) {
	t.Parallel()
	for range 3 {
		k := babyjub.NewRandPrivKey()
		msg := randomField(t)
		sig := k.SignPoseidon(msg)
		pk := k.Public()
		require.True(t, pk.VerifyPoseidon(msg, sig))
		require.NoError(t, test.IsSolved(&eddsaCircuit{}, assignment(pk, sig, msg), fieldOrder))

		ok := babyjub.NewRandPrivKey()
		other := ok.Public()
		for name, bad := range map[string]*eddsaCircuit{
			"message":       assignment(pk, sig, new(big.Int).Add(msg, big.NewInt(1))),
			"key":           assignment(other, sig, msg),
			"S":             {A: Point{pk.X, pk.Y}, R8: Point{sig.R8.X, sig.R8.Y}, S: new(big.Int).Add(sig.S, big.NewInt(1)), Msg: msg},
			"R8":            {A: Point{pk.X, pk.Y}, R8: Point{other.X, other.Y}, S: sig.S, Msg: msg},
			"off curve key": {A: Point{pk.X, new(big.Int).Add(pk.Y, big.NewInt(1))}, R8: Point{sig.R8.X, sig.R8.Y}, S: sig.S, Msg: msg},
			// S + subgroup order is the same point S·B8 but not a
			// signature iden3 accepts (and above 2^251).
			"S not reduced": {A: Point{pk.X, pk.Y}, R8: Point{sig.R8.X, sig.R8.Y}, S: new(big.Int).Add(sig.S, new(big.Int).Lsh(babyjub.SubOrder, 1)), Msg: msg},
		} {
			require.Error(t, test.IsSolved(&eddsaCircuit{}, bad, fieldOrder), name)
		}
	}
}

func TestEdDSAConstraints(t *testing.T) {
	t.Parallel()
	ccs, err := frontend.Compile(fieldOrder, r1cs.NewBuilder, &eddsaCircuit{})
	require.NoError(t, err)
	t.Logf("EdDSA-Poseidon verification: %d constraints", ccs.GetNbConstraints())
	require.Less(t, ccs.GetNbConstraints(), 7000)
}
