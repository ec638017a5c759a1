package chain_test

import (
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzCheck feeds arbitrary proof words and inputs, untrusted data from an
// API caller, to the verifier contract: it must answer false without an
// error (and never true, since forging is infeasible) and never panic.
func FuzzCheck(f *testing.F) {
	st := prove(f, 17)
	var seed []byte
	for _, w := range st.proof {
		seed = append(seed, w.FillBytes(make([]byte, 32))...)
	}
	for _, in := range st.inputs {
		seed = append(seed, in.FillBytes(make([]byte, 32))...)
	}
	seed[5] ^= 1
	f.Add(seed)
	f.Add(make([]byte, 0))
	f.Add(make([]byte, 320))
	f.Fuzz(func(t *testing.T, data []byte) {
		l := shared(t)
		var proof [8]*big.Int
		for i := range proof {
			proof[i] = word(data, i)
		}
		var inputs []*big.Int
		for i := 8; i*32 < len(data) && i < 16; i++ {
			inputs = append(inputs, word(data, i))
		}
		ok, err := l.Check(t.Context(), fixtureKind, proof, inputs)
		require.NoError(t, err)
		require.False(t, ok)
	})
}

// word returns the i-th 32-byte big-endian word of data, zero-padded.
func word(data []byte, i int) *big.Int {
	var w [32]byte
	if i*32 < len(data) {
		copy(w[:], data[i*32:])
	}
	return new(big.Int).SetBytes(w[:])
}
