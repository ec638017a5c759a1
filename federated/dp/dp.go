package dp

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Errors of the accountant.
var (
	// ErrBudgetExceeded is returned by privacy_check (Ledger.Check) when one
	// more release would take the run past its (epsilon, delta) budget.
	ErrBudgetExceeded = errors.New("dp: privacy budget exceeded")
	ErrInvalid        = errors.New("dp: invalid privacy parameters")
)

// Budget is the (epsilon, delta) guarantee a whole training run must keep.
type Budget struct {
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
}

// DefaultBudget is the service specification's budget: epsilon 0.1, delta 1e-5.
func DefaultBudget() Budget { return Budget{Epsilon: 0.1, Delta: 1e-5} }

// Validate checks 0 < epsilon and 0 < delta < 1.
func (b Budget) Validate() error {
	if !(b.Epsilon > 0) || math.IsInf(b.Epsilon, 0) || !(b.Delta > 0 && b.Delta < 1) {
		return fmt.Errorf("%w: epsilon=%g delta=%g", ErrInvalid, b.Epsilon, b.Delta)
	}
	return nil
}

// DefaultOrders are the Rényi orders the accountant tracks (those of the
// TensorFlow Privacy / Opacus accountants, extended upwards because the
// small budgets this service uses are tightest at large orders).
func DefaultOrders() []float64 {
	o := []float64{1.25, 1.5, 1.75, 2, 2.25, 2.5, 3, 3.5, 4, 4.5}
	for a := 5.0; a <= 64; a++ {
		o = append(o, a)
	}
	return append(o, 80, 96, 128, 192, 256, 384, 512, 768, 1024, 2048, 4096, 8192, 16384, 32768, 65536)
}

// GaussianRDP is the Rényi divergence of order alpha of the Gaussian
// mechanism with L2 sensitivity 1 and noise standard deviation sigma:
// alpha / (2 sigma^2) (Mironov 2017, Proposition 7).
func GaussianRDP(sigma, alpha float64) float64 { return alpha / (2 * sigma * sigma) }

// ToEpsilon converts an RDP curve to (epsilon, delta)-DP with the conversion
// of Balle et al. 2020 (Theorem 21), as used by Opacus:
//
//	eps = rdp(a) + log((a-1)/a) - (log(delta) + log(a)) / (a-1)
//
// minimised over the orders. It returns epsilon and the best order.
func ToEpsilon(orders, rdp []float64, delta float64) (float64, float64) {
	best, bestOrder := math.Inf(1), 0.0
	for i, a := range orders {
		if a <= 1 {
			continue
		}
		e := rdp[i] + math.Log((a-1)/a) - (math.Log(delta)+math.Log(a))/(a-1)
		if e < best {
			best, bestOrder = e, a
		}
	}
	return math.Max(best, 0), bestOrder
}

// EpsilonAfter returns the epsilon spent by rounds releases of the Gaussian
// mechanism with noise multiplier sigma, at the given delta.
func EpsilonAfter(sigma float64, rounds int, delta float64, orders []float64) float64 {
	rdp := make([]float64, len(orders))
	for i, a := range orders {
		rdp[i] = float64(rounds) * GaussianRDP(sigma, a)
	}
	e, _ := ToEpsilon(orders, rdp, delta)
	return e
}

// CalibrateNoise returns the smallest noise multiplier (to 0.1 %) for which
// rounds releases stay within the budget.
func CalibrateNoise(b Budget, rounds int, orders []float64) (float64, error) {
	if err := b.Validate(); err != nil {
		return 0, err
	}
	if rounds < 1 || len(orders) == 0 {
		return 0, fmt.Errorf("%w: rounds=%d", ErrInvalid, rounds)
	}
	lo, hi := 1e-3, 1.0
	for EpsilonAfter(hi, rounds, b.Delta, orders) > b.Epsilon {
		hi *= 2
		if hi > 1e9 {
			return 0, fmt.Errorf("%w: budget unreachable", ErrInvalid)
		}
	}
	for hi-lo > 1e-3*hi {
		mid := (lo + hi) / 2
		if EpsilonAfter(mid, rounds, b.Delta, orders) > b.Epsilon {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi, nil
}

// LedgerEntry records one release charged to the budget.
type LedgerEntry struct {
	Round           int     `json:"round"`
	NoiseMultiplier float64 `json:"noise_multiplier"`
	EpsilonAfter    float64 `json:"epsilon_after"`
}

// Ledger is the persistent state of the RDP accountant for one training run:
// the budget, the orders tracked, the RDP spent at each order so far and one
// entry per release. It is a plain struct so that a store can marshal it.
type Ledger struct {
	Budget  Budget        `json:"budget"`
	Orders  []float64     `json:"orders"`
	RDP     []float64     `json:"rdp"`
	Entries []LedgerEntry `json:"entries"`
}

// NewLedger starts an empty ledger.
func NewLedger(b Budget, orders []float64) (*Ledger, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	if len(orders) == 0 || slices.ContainsFunc(orders, func(a float64) bool { return !(a > 1) }) {
		return nil, fmt.Errorf("%w: orders must be > 1", ErrInvalid)
	}
	return &Ledger{Budget: b, Orders: slices.Clone(orders), RDP: make([]float64, len(orders))}, nil
}

// Spent returns the epsilon spent so far.
func (l *Ledger) Spent() float64 {
	e, _ := ToEpsilon(l.Orders, l.RDP, l.Budget.Delta)
	return e
}

func (l *Ledger) after(sigma float64) (float64, []float64, error) {
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return 0, nil, fmt.Errorf("%w: noise multiplier %g", ErrInvalid, sigma)
	}
	if len(l.RDP) != len(l.Orders) {
		return 0, nil, fmt.Errorf("%w: corrupt ledger", ErrInvalid)
	}
	next := make([]float64, len(l.Orders))
	for i, a := range l.Orders {
		next[i] = l.RDP[i] + GaussianRDP(sigma, a)
	}
	e, _ := ToEpsilon(l.Orders, next, l.Budget.Delta)
	return e, next, nil
}

// Check is privacy_check: it returns the epsilon the run would have spent
// after one more release with noise multiplier sigma, or ErrBudgetExceeded.
func (l *Ledger) Check(sigma float64) (float64, error) {
	e, _, err := l.after(sigma)
	if err != nil {
		return 0, err
	}
	if e > l.Budget.Epsilon*(1+1e-9) {
		return e, fmt.Errorf("%w: epsilon would reach %.4g of %.4g", ErrBudgetExceeded, e, l.Budget.Epsilon)
	}
	return e, nil
}

// Spend charges one release to the ledger after checking it.
func (l *Ledger) Spend(round int, sigma float64) error {
	e, next, err := l.after(sigma)
	if err != nil {
		return err
	}
	if e > l.Budget.Epsilon*(1+1e-9) {
		return fmt.Errorf("%w: epsilon would reach %.4g of %.4g", ErrBudgetExceeded, e, l.Budget.Epsilon)
	}
	l.RDP = next
	l.Entries = append(l.Entries, LedgerEntry{Round: round, NoiseMultiplier: sigma, EpsilonAfter: e})
	return nil
}

// Clone returns a deep copy.
func (l *Ledger) Clone() *Ledger {
	c := *l
	c.Orders, c.RDP, c.Entries = slices.Clone(l.Orders), slices.Clone(l.RDP), slices.Clone(l.Entries)
	return &c
}

// AddGaussianNoise adds N(0, std^2) to every element of v. The caller passes
// a generator seeded from crypto/rand (see NewNoiseSource). Floating-point
// sampling is the textbook mechanism; its known precision caveats (Mironov
// 2012) are documented in docs/federated-privacy.md.
func AddGaussianNoise(rng *rand.Rand, v []float64, std float64) {
	for i := range v {
		v[i] += std * rng.NormFloat64()
	}
}
