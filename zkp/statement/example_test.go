package statement_test

import (
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/healthagents/healthagents/zkp/statement"
)

// A statement's holder hands its JSON to a third party, who recomputes the
// digest from the opening and compares it with the chain event's.
func Example() {
	s, _ := statement.New(statement.Opening{
		Circuit: "eligibility-v2",
		Fields: []statement.Field{
			{Name: "a", Value: big.NewInt(1)},
			{Name: "b", Value: big.NewInt(2)},
		},
	})
	doc, _ := json.Marshal(s)

	got, err := statement.Parse(doc)
	fmt.Println(err, got.Digest)
	fmt.Println(got) // the opening is never printed
	// Output:
	// <nil> 7853200120776062878684798364095072458815029376092732009249414926327459813530
	// statement{digest 0x115cc0f5e7d690413df64c6b9662e9cf2a3617f2743245519e19607a4417189a, opening{circuit eligibility-v2, 2 fields redacted}}
}
