package credential_test

import (
	"encoding/hex"
	"math/big"

	"github.com/iden3/go-iden3-crypto/babyjub"

	"github.com/healthagents/healthagents/credential"
)

// The worked example of docs/credentials.md.
var (
	exampleKeyHex = "0001020304050607080910111213141516171819202122232425262728293031"
	exampleTerms  = credential.Terms{
		MemberID: "W123456789", Salt: "123456789012345678901234567890",
		PayerID: "60054", PlanID: "PPO-GOLD", Status: "active",
		Start: "2026-01-01", End: "2026-12-31",
		Deductible: 1500, DeductibleMet: 1500, Copay: 25,
		Expires: "2026-12-31", Nonce: 7,
		Excluded:  []string{"PROC005"},
		Overrides: map[string]int{"PROC002": 70},
	}
)

func exampleKey() babyjub.PrivateKey {
	var k babyjub.PrivateKey
	b, _ := hex.DecodeString(exampleKeyHex)
	copy(k[:], b)
	return k
}

func dec(s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return v
}
