package dp_test

import (
	"errors"
	"fmt"

	"github.com/healthagents/healthagents/federated/dp"
)

// Calibrate the noise for a 10-round run at epsilon 1, then spend it.
func ExampleLedger() {
	budget := dp.Budget{Epsilon: 1, Delta: 1e-5}
	z, err := dp.CalibrateNoise(budget, 10, dp.DefaultOrders())
	if err != nil {
		panic(err)
	}
	ledger, err := dp.NewLedger(budget, dp.DefaultOrders())
	if err != nil {
		panic(err)
	}
	rounds := 0
	for {
		if _, err := ledger.Check(z); errors.Is(err, dp.ErrBudgetExceeded) {
			break
		}
		if err := ledger.Spend(rounds, z); err != nil {
			panic(err)
		}
		rounds++
	}
	fmt.Printf("noise multiplier %.1f pays for %d rounds; spent epsilon <= 1: %v\n", z, rounds, ledger.Spent() <= 1)
	// Output: noise multiplier 12.8 pays for 10 rounds; spent epsilon <= 1: true
}
