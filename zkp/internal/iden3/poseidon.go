package iden3

import (
	"encoding/hex"
	"fmt"
	"math/big"
	"sync"

	"github.com/consensys/gnark/frontend"
)

// MaxInputs is the most inputs one Poseidon call takes.
const MaxInputs = 16

const fullRounds = 8

// partialRounds[t-2] is the number of partial rounds for state width t
// (go-iden3-crypto's NROUNDSP).
var partialRounds = [16]int{56, 57, 56, 60, 60, 63, 64, 63, 60, 66, 60, 65, 70, 60, 64, 68}

// params are one width's constants, decoded once.
type params struct {
	c, s []*big.Int
	m, p [][]*big.Int
}

var (
	paramsOnce [16]sync.Once
	paramsOf   [16]*params
)

func decode(s string) []*big.Int {
	out := make([]*big.Int, len(s)/64)
	for i := range out {
		b, err := hex.DecodeString(s[64*i : 64*i+64])
		if err != nil {
			panic(fmt.Sprintf("iden3: generated constants are not hex: %v", err)) // generated file: cannot happen
		}
		out[i] = new(big.Int).SetBytes(b)
	}
	return out
}

func matrix(flat []*big.Int, t int) [][]*big.Int {
	m := make([][]*big.Int, t)
	for i := range m {
		m[i] = flat[i*t : (i+1)*t]
	}
	return m
}

// constants returns the parameters of state width t (2..17).
func constants(t int) *params {
	i := t - 2
	paramsOnce[i].Do(func() {
		paramsOf[i] = &params{
			c: decode(poseidonC[i]), s: decode(poseidonS[i]),
			m: matrix(decode(poseidonM[i]), t), p: matrix(decode(poseidonP[i]), t),
		}
	})
	return paramsOf[i]
}

// Poseidon returns iden3's Poseidon hash of in (1 to MaxInputs values), as
// poseidon.Hash computes it: 3 constraints per S-box, (8·t + partial
// rounds)·3 in all for t = len(in)+1.
func Poseidon(api frontend.API, in ...frontend.Variable) frontend.Variable {
	if len(in) == 0 || len(in) > MaxInputs {
		panic(fmt.Sprintf("iden3: Poseidon takes 1 to %d inputs, not %d", MaxInputs, len(in)))
	}
	t := len(in) + 1
	k := constants(t)
	nP := partialRounds[t-2]

	state := make([]frontend.Variable, t)
	state[0] = 0
	copy(state[1:], in)
	ark := func(off int) {
		for j := range state {
			state[j] = api.Add(state[j], k.c[off+j])
		}
	}
	sboxAll := func() {
		for j := range state {
			state[j] = pow5(api, state[j])
		}
	}
	mix := func(m [][]*big.Int) {
		next := make([]frontend.Variable, t)
		for i := range t {
			acc := frontend.Variable(0)
			for j := range t {
				acc = api.Add(acc, api.Mul(m[j][i], state[j]))
			}
			next[i] = acc
		}
		state = next
	}

	ark(0)
	for r := range fullRounds/2 - 1 {
		sboxAll()
		ark((r + 1) * t)
		mix(k.m)
	}
	sboxAll()
	ark(fullRounds / 2 * t)
	mix(k.p)

	for r := range nP {
		state[0] = api.Add(pow5(api, state[0]), k.c[(fullRounds/2+1)*t+r])
		base := (2*t - 1) * r
		s0 := frontend.Variable(0)
		for j := range t {
			s0 = api.Add(s0, api.Mul(k.s[base+j], state[j]))
		}
		for j := 1; j < t; j++ {
			state[j] = api.Add(state[j], api.Mul(state[0], k.s[base+t+j-1]))
		}
		state[0] = s0
	}

	for r := range fullRounds/2 - 1 {
		sboxAll()
		ark((fullRounds/2+1)*t + nP + r*t)
		mix(k.m)
	}
	sboxAll()
	mix(k.m)
	return state[0]
}

// pow5 is x⁵ in 3 constraints.
func pow5(api frontend.API, x frontend.Variable) frontend.Variable {
	x2 := api.Mul(x, x)
	x4 := api.Mul(x2, x2)
	return api.Mul(x4, x)
}
