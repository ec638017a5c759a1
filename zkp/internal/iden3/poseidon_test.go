package iden3

import (
	"crypto/rand"
	"math/big"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/consensys/gnark/test"
	"github.com/iden3/go-iden3-crypto/poseidon"
	"github.com/stretchr/testify/require"
)

type poseidonCircuit struct {
	In  []frontend.Variable
	Out frontend.Variable `gnark:",public"`
}

func (c *poseidonCircuit) Define(api frontend.API) error {
	api.AssertIsEqual(Poseidon(api, c.In...), c.Out)
	return nil
}

var fieldOrder = ecc.BN254.ScalarField()

func randomField(t *testing.T) *big.Int {
	v, err := rand.Int(rand.Reader, fieldOrder)
	require.NoError(t, err)
	return v
}

// The gadget equals go-iden3-crypto's poseidon.Hash for every width, on
// random inputs and on a wrong output it is unsatisfiable.
func TestPoseidonEqualsIden3(t *testing.T) {
	t.Parallel()
	for n := 1; n <= MaxInputs; n++ {
		in := make([]*big.Int, n)
		for i := range in {
			in[i] = randomField(t)
		}
		want, err := poseidon.Hash(in)
		require.NoError(t, err)
		w := &poseidonCircuit{In: make([]frontend.Variable, n), Out: want}
		for i := range in {
			w.In[i] = in[i]
		}
		circuit := &poseidonCircuit{In: make([]frontend.Variable, n)}
		require.NoError(t, test.IsSolved(circuit, w, fieldOrder), "width %d", n)

		bad := &poseidonCircuit{In: w.In, Out: new(big.Int).Add(want, big.NewInt(1))}
		require.Error(t, test.IsSolved(circuit, bad, fieldOrder), "width %d: a wrong hash must not satisfy", n)
	}
}

func TestPoseidonConstraints(t *testing.T) {
	t.Parallel()
	for _, n := range []int{2, 5, 12, 16} {
		ccs, err := frontend.Compile(fieldOrder, r1cs.NewBuilder, &poseidonCircuit{In: make([]frontend.Variable, n)})
		require.NoError(t, err)
		tw := n + 1
		// the first S-box of state[0] acts on a constant: 3 constraints fewer
		require.Equal(t, 3*(fullRounds*tw+partialRounds[tw-2])-3+1, ccs.GetNbConstraints(), "width %d", n)
	}
}
