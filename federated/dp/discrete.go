package dp

import (
	"crypto/rand"
	"fmt"
	"io"
	"math"
	"math/big"
)

// The discrete Gaussian N_Z(0, sigma^2): P(x) ∝ exp(-x²/(2 sigma²)) on the
// integers, sampled exactly (no floating point) by the rejection sampler of
// Canonne, Kamath and Steinke, "The Discrete Gaussian for Differential
// Privacy" (NeurIPS 2020), Algorithms 1–3: Bernoulli(exp(-γ)) for rational
// γ from uniform integers only, a discrete Laplace proposal of integer
// scale t = floor(sigma)+1, accepted with probability
// exp(-(|y| - sigma²/t)² / (2 sigma²)). Every random bit comes from the
// caller's reader (crypto/rand in the service).
//
// It is the noise of distributed DP (each participant adds its share to
// its quantized update before masking; Kairouz, Liu and Steinke, "The
// Distributed Discrete Gaussian Mechanism for Federated Learning with
// Secure Aggregation", ICML 2021).

var (
	ratOne  = big.NewRat(1, 1)
	ratHalf = big.NewRat(1, 2)
)

// DiscreteGaussianSampler draws from N_Z(0, sigma2) for one variance: the
// proposal's scale t and the acceptance test's constants are computed once,
// not for every draw. A draw changes nothing in it (safe for concurrent
// use).
type DiscreteGaussianSampler struct {
	t         *big.Int // floor(sigma) + 1
	tr        *big.Rat // t
	shift     *big.Rat // sigma²/t
	twoSigma2 *big.Rat // 2 sigma²
}

// NewDiscreteGaussian returns the sampler of N_Z(0, sigma2), sigma2 > 0
// rational.
func NewDiscreteGaussian(sigma2 *big.Rat) (*DiscreteGaussianSampler, error) {
	if sigma2 == nil || sigma2.Sign() <= 0 {
		return nil, fmt.Errorf("%w: discrete Gaussian variance must be positive", ErrInvalid)
	}
	// t = floor(sqrt(sigma2)) + 1, computed on integers.
	t := new(big.Int).Quo(sigma2.Num(), sigma2.Denom()) // floor(sigma2)
	t.Sqrt(t)                                           // floor(sqrt(floor(sigma2))) = floor(sigma)
	t.Add(t, big.NewInt(1))
	tr := new(big.Rat).SetInt(t)
	return &DiscreteGaussianSampler{
		t: t, tr: tr,
		shift:     new(big.Rat).Quo(sigma2, tr),
		twoSigma2: new(big.Rat).Mul(sigma2, big.NewRat(2, 1)),
	}, nil
}

// NewDiscreteGaussianFloat is NewDiscreteGaussian for a variance given as
// a float64 (taken exactly: every float64 is a rational).
func NewDiscreteGaussianFloat(sigma2 float64) (*DiscreteGaussianSampler, error) {
	if !(sigma2 > 0) || math.IsInf(sigma2, 0) {
		return nil, fmt.Errorf("%w: discrete Gaussian variance must be positive and finite", ErrInvalid)
	}
	return NewDiscreteGaussian(new(big.Rat).SetFloat64(sigma2))
}

// Sample draws one value with the randomness of r.
func (d *DiscreteGaussianSampler) Sample(r io.Reader) (*big.Int, error) {
	for {
		y, err := d.laplace(r)
		if err != nil {
			return nil, err
		}
		// γ = (|y| - sigma²/t)² / (2 sigma²)
		g := new(big.Rat).SetInt(new(big.Int).Abs(y))
		g.Sub(g, d.shift)
		g.Mul(g, g)
		g.Quo(g, d.twoSigma2)
		ok, err := bernoulliExp(r, g)
		if err != nil {
			return nil, err
		}
		if ok {
			return y, nil
		}
	}
}

// laplace samples P(y) ∝ exp(-|y|/t) on the integers (Algorithm 2 with
// s = 1).
func (d *DiscreteGaussianSampler) laplace(r io.Reader) (*big.Int, error) {
	t := d.t
	for {
		u, err := rand.Int(r, t)
		if err != nil {
			return nil, err
		}
		keep, err := bernoulliExp(r, new(big.Rat).Quo(new(big.Rat).SetInt(u), d.tr))
		if err != nil {
			return nil, err
		}
		if !keep {
			continue
		}
		v := new(big.Int)
		for {
			a, err := bernoulliExp(r, ratOne)
			if err != nil {
				return nil, err
			}
			if !a {
				break
			}
			v.Add(v, big.NewInt(1))
		}
		y := v.Mul(v, t)
		y.Add(y, u)
		b, err := bernoulli(r, ratHalf)
		if err != nil {
			return nil, err
		}
		if b && y.Sign() == 0 {
			continue
		}
		if b {
			y.Neg(y)
		}
		return y, nil
	}
}

// bernoulli samples Bernoulli(p), p ∈ [0, 1] rational.
func bernoulli(r io.Reader, p *big.Rat) (bool, error) {
	u, err := rand.Int(r, p.Denom())
	if err != nil {
		return false, err
	}
	return u.Cmp(p.Num()) < 0, nil
}

// bernoulliExp samples Bernoulli(exp(-γ)), γ ≥ 0 rational (Algorithm 1).
func bernoulliExp(r io.Reader, gamma *big.Rat) (bool, error) {
	if gamma.Sign() < 0 {
		return false, fmt.Errorf("%w: negative gamma", ErrInvalid)
	}
	g := new(big.Rat).Set(gamma)
	for g.Cmp(ratOne) > 0 { // exp(-γ) = exp(-1)^floor(γ) · exp(-(γ - floor γ))
		ok, err := bernoulliExpSmall(r, ratOne)
		if err != nil || !ok {
			return false, err
		}
		g.Sub(g, ratOne)
	}
	return bernoulliExpSmall(r, g)
}

// bernoulliExpSmall samples Bernoulli(exp(-γ)) for γ ∈ [0, 1]: the
// number of consecutive successes of Bernoulli(γ/k), k = 1, 2, …, is even
// with probability exp(-γ).
func bernoulliExpSmall(r io.Reader, gamma *big.Rat) (bool, error) {
	k := int64(1)
	for {
		a, err := bernoulli(r, new(big.Rat).Quo(gamma, big.NewRat(k, 1)))
		if err != nil {
			return false, err
		}
		if !a {
			return k%2 == 1, nil
		}
		k++
	}
}

// DistributedTau is the τ of Kairouz, Liu and Steinke (2021, Theorem 1 and
// Proposition 14): the sum of n independent N_Z(0, sigma2) (sigma2 each)
// is within τ of N_Z(0, n·sigma2) in the sense their accounting uses,
//
//	τ = 10 · Σ_{k=1}^{n-1} exp(-2π² sigma2 · k/(k+1)).
//
// For the shares this service uses (sigma2 of 10^12 and more, in quantized
// units) it is 0 in float64: the sum is accounted as one discrete Gaussian.
func DistributedTau(sigma2 float64, n int) float64 {
	var tau float64
	for k := 1; k < n; k++ {
		tau += math.Exp(-2 * math.Pi * math.Pi * sigma2 * float64(k) / float64(k+1))
	}
	return 10 * tau
}
