package dp

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEpsilonMatchesKnownValues(t *testing.T) {
	t.Parallel()
	orders := DefaultOrders()
	// A single Gaussian release with sigma = sqrt(2 ln(1.25/delta))/eps is
	// (eps, delta)-DP by the classical analysis (Dwork & Roth, Thm A.1, eps<1);
	// the RDP bound must not be looser than that by much and must be monotone.
	delta := 1e-5
	sigma := math.Sqrt(2*math.Log(1.25/delta)) / 0.5
	e1 := EpsilonAfter(sigma, 1, delta, orders)
	assert.Less(t, e1, 0.55)
	assert.Greater(t, e1, 0.3)
	assert.Less(t, EpsilonAfter(sigma, 1, delta, orders), EpsilonAfter(sigma, 2, delta, orders))
	assert.Less(t, EpsilonAfter(2*sigma, 10, delta, orders), EpsilonAfter(sigma, 10, delta, orders))
	// Composition of T rounds at sigma equals one round at sigma/sqrt(T).
	assert.InDelta(t, EpsilonAfter(sigma/math.Sqrt(16), 1, delta, orders), EpsilonAfter(sigma, 16, delta, orders), 1e-9)
}

func TestCalibrateNoise(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		budget Budget
		rounds int
	}{
		{"ok/spec default, 100 rounds", DefaultBudget(), 100},
		{"ok/eps 1, 20 rounds", Budget{1, 1e-5}, 20},
		{"ok/eps 8, 1 round", Budget{8, 1e-5}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			z, err := CalibrateNoise(tc.budget, tc.rounds, DefaultOrders())
			require.NoError(t, err)
			assert.LessOrEqual(t, EpsilonAfter(z, tc.rounds, tc.budget.Delta, DefaultOrders()), tc.budget.Epsilon)
			assert.Greater(t, EpsilonAfter(z*0.99, tc.rounds, tc.budget.Delta, DefaultOrders()), tc.budget.Epsilon)
		})
	}
	_, err := CalibrateNoise(Budget{0, 1e-5}, 1, DefaultOrders())
	require.ErrorIs(t, err, ErrInvalid)
}

func TestLedgerRefusesRoundOverBudget(t *testing.T) {
	t.Parallel()
	b := Budget{Epsilon: 1, Delta: 1e-5}
	z, err := CalibrateNoise(b, 5, DefaultOrders())
	require.NoError(t, err)
	l, err := NewLedger(b, DefaultOrders())
	require.NoError(t, err)
	for r := range 5 {
		_, err := l.Check(z)
		require.NoError(t, err)
		require.NoError(t, l.Spend(r, z))
	}
	assert.LessOrEqual(t, l.Spent(), 1.0)
	_, err = l.Check(z)
	require.ErrorIs(t, err, ErrBudgetExceeded)
	require.ErrorIs(t, l.Spend(5, z), ErrBudgetExceeded)
	assert.Len(t, l.Entries, 5)

	// The ledger survives a marshal round trip and keeps refusing.
	raw, err := json.Marshal(l)
	require.NoError(t, err)
	var back Ledger
	require.NoError(t, json.Unmarshal(raw, &back))
	_, err = back.Check(z)
	require.ErrorIs(t, err, ErrBudgetExceeded)
	assert.InDelta(t, l.Spent(), back.Spent(), 1e-12)
}
