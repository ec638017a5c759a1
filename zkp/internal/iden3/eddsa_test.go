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
	for range 8 {
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

// TestEdDSAConstraints: issue 30 brought the check from 5 657 constraints
// to 3 155 (fixed-base S·B8, signed-digit h·8A in the Montgomery form);
// more is a regression.
func TestEdDSAConstraints(t *testing.T) {
	t.Parallel()
	ccs, err := frontend.Compile(fieldOrder, r1cs.NewBuilder, &eddsaCircuit{})
	require.NoError(t, err)
	t.Logf("EdDSA-Poseidon verification: %d constraints", ccs.GetNbConstraints())
	require.LessOrEqual(t, ccs.GetNbConstraints(), 3200)
}

// TestEdDSASmallOrderKeyRefused: under a key A of small order iden3's
// check S·B8 = R8 + 8·h·A holds for any message with R8 = S·B8 (8·A is the
// identity); the gadget refuses such keys.
func TestEdDSASmallOrderKeyRefused(t *testing.T) {
	t.Parallel()
	s := big.NewInt(987654321)
	r8 := new(babyjub.Point).Mul(s, babyjub.B8)
	// (0, 1) is the identity, (0, −1) of order 2; SubOrder·P for a point P
	// off the subgroup is of order 4 or 8.
	p, err := babyjub.PointFromSignAndY(false, big.NewInt(7))
	require.NoError(t, err)
	keys := []*babyjub.Point{{X: big.NewInt(0), Y: big.NewInt(1)}, {X: big.NewInt(0), Y: new(big.Int).Sub(fieldOrder, big.NewInt(1))},
		new(babyjub.Point).Mul(babyjub.SubOrder, p)}
	for _, a := range keys {
		pk := babyjub.PublicKey(*a)
		sig := &babyjub.Signature{R8: r8, S: s}
		require.True(t, pk.VerifyPoseidon(big.NewInt(42), sig), "iden3 accepts")
		require.Error(t, test.IsSolved(&eddsaCircuit{}, assignment(&pk, sig, big.NewInt(42)), fieldOrder), "the gadget refuses")
	}
}

type scalarMulCircuit struct {
	T    Point
	K    frontend.Variable
	Want Point
	Base Point
	S    frontend.Variable
}

func (c *scalarMulCircuit) Define(api frontend.API) error {
	got := scalarMul(api, c.T, api.ToBinary(c.K))
	api.AssertIsEqual(got.X, c.Want.X)
	api.AssertIsEqual(got.Y, c.Want.Y)
	fixed := fixedBaseMul(api, api.ToBinary(c.S, SBits))
	api.AssertIsEqual(fixed.X, c.Base.X)
	api.AssertIsEqual(fixed.Y, c.Base.Y)
	return nil
}

// TestScalarMulsAgainstIden3: both multiplications equal babyjub's for
// scalars at the edges (0, 1, 2, the subgroup order and around it, the
// largest field element, S's largest) and random ones, odd and even.
func TestScalarMulsAgainstIden3(t *testing.T) {
	t.Parallel()
	l := babyjub.SubOrder
	maxS := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), SBits), big.NewInt(1))
	ks := []*big.Int{big.NewInt(0), big.NewInt(1), big.NewInt(2), big.NewInt(3), new(big.Int).Sub(l, big.NewInt(1)), l,
		new(big.Int).Add(l, big.NewInt(1)), new(big.Int).Sub(fieldOrder, big.NewInt(1))}
	for range 4 {
		ks = append(ks, randomField(t))
	}
	for i, k := range ks {
		tp := new(babyjub.Point).Mul(randomField(t), babyjub.B8)
		s := new(big.Int).Mod(k, new(big.Int).Add(maxS, big.NewInt(1)))
		if i == len(ks)-1 {
			s = maxS
		}
		want := new(babyjub.Point).Mul(k, tp)
		base := new(babyjub.Point).Mul(s, babyjub.B8)
		require.NoError(t, test.IsSolved(&scalarMulCircuit{}, &scalarMulCircuit{T: Point{tp.X, tp.Y}, K: k, Want: Point{want.X, want.Y},
			Base: Point{base.X, base.Y}, S: s}, fieldOrder), "k = %s", k)
		wrong := new(babyjub.Point).Mul(new(big.Int).Add(k, big.NewInt(1)), tp)
		require.Error(t, test.IsSolved(&scalarMulCircuit{}, &scalarMulCircuit{T: Point{tp.X, tp.Y}, K: k, Want: Point{wrong.X, wrong.Y},
			Base: Point{base.X, base.Y}, S: s}, fieldOrder), "k = %s", k)
	}
}
