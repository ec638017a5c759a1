package secagg_test

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/healthagents/healthagents/federated/secagg"
)

// Three participants sum their vectors; the aggregator learns only the sum.
func Example() {
	session := make([]byte, secagg.SessionSize)
	if _, err := rand.Read(session); err != nil {
		panic(err)
	}
	params := secagg.Params{Session: session, Dim: 2}
	inputs := map[string][]uint64{"a": {1, 10}, "b": {2, 20}, "c": {3, 30}}
	ids := []string{"a", "b", "c"}

	clients := map[string]*secagg.Client{}
	tr := secagg.Transcript{Params: params, Threshold: 2, Commitments: map[string][]byte{}, Inputs: map[string]secagg.MaskedInput{}}
	for _, id := range ids { // 1. advertise keys
		c, err := secagg.NewClient(rand.Reader, id, params)
		if err != nil {
			panic(err)
		}
		clients[id] = c
		tr.Roster = append(tr.Roster, c.Keys())
	}
	inbox := map[string][]secagg.EncryptedShare{}
	for _, id := range ids { // 2. share keys
		m, err := clients[id].ShareKeys(tr.Roster, tr.Threshold)
		if err != nil {
			panic(err)
		}
		tr.Commitments[id] = m.Commitment
		for _, s := range m.Shares {
			inbox[s.To] = append(inbox[s.To], s)
		}
	}
	for _, id := range ids { // 3. masked input
		y, err := clients[id].MaskInput(ids, inbox[id], inputs[id])
		if err != nil {
			panic(err)
		}
		tr.Inputs[id] = y
	}
	for _, id := range ids { // 4. unmasking
		rs, err := clients[id].Unmask(ids)
		if err != nil {
			panic(err)
		}
		tr.Reveals = append(tr.Reveals, rs...)
	}
	sum, err := secagg.Unmask(context.Background(), tr)
	if err != nil {
		panic(err)
	}
	fmt.Println(sum)
	// Output: [6 60]
}
