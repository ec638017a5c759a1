package dp

import (
	"math"
	"math/big"
	mrand "math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seeded is a reproducible randomness source for the statistical tests.
func seeded(seed byte) *mrand.ChaCha8 {
	var s [32]byte
	s[0] = seed
	return mrand.NewChaCha8(s)
}

// exactMoments are P(0) and the variance of N_Z(0, sigma2), summed
// directly over the integers within 40 sigma.
func exactMoments(sigma2 float64) (p0, variance float64) {
	k := int(40*math.Sqrt(sigma2)) + 2
	var z, m2 float64
	for x := -k; x <= k; x++ {
		w := math.Exp(-float64(x*x) / (2 * sigma2))
		z += w
		m2 += float64(x*x) * w
	}
	return 1 / z, m2 / z
}

// TestDiscreteGaussianMatchesItsDefinition: over 40 000 draws, the
// frequency of 0, the mean and the variance are those of N_Z(0, sigma2)
// summed exactly from its definition, within five standard errors.
func TestDiscreteGaussianMatchesItsDefinition(t *testing.T) {
	t.Parallel()
	for i, sigma2 := range []float64{0.25, 1, 9, 2.5e5} {
		r := seeded(byte(i + 1))
		d, err := NewDiscreteGaussianFloat(sigma2)
		require.NoError(t, err)
		const n = 40000
		var zeros, sum, sum2 float64
		for range n {
			x, err := d.Sample(r)
			require.NoError(t, err)
			f, _ := new(big.Float).SetInt(x).Float64()
			if x.Sign() == 0 {
				zeros++
			}
			sum += f
			sum2 += f * f
		}
		p0, v := exactMoments(sigma2)
		se := func(sd float64) float64 { return 5 * sd / math.Sqrt(n) }
		assert.InDelta(t, p0, zeros/n, se(math.Sqrt(p0*(1-p0))), "P(0) at sigma2=%g", sigma2)
		assert.InDelta(t, 0, sum/n, se(math.Sqrt(v)), "mean at sigma2=%g", sigma2)
		// Var of x² is 2v² for a Gaussian; a little more for small sigma.
		assert.InDelta(t, v, sum2/n, se(math.Sqrt(3)*v), "variance at sigma2=%g", sigma2)
	}
}

// TestDiscreteGaussianLargeVariance: the service's shares are around
// 10^17 (quantized units); the sampler's variance is right there too.
func TestDiscreteGaussianLargeVariance(t *testing.T) {
	t.Parallel()
	const sigma2, n = 3e17, 4000
	r := seeded(9)
	d, err := NewDiscreteGaussianFloat(sigma2)
	require.NoError(t, err)
	var sum2 float64
	for range n {
		x, err := d.Sample(r)
		require.NoError(t, err)
		f, _ := new(big.Float).SetInt(x).Float64()
		sum2 += f * f
	}
	assert.InDelta(t, 1, sum2/n/sigma2, 5*math.Sqrt(2.0/n))
}

// TestBernoulliExp: Bernoulli(exp(-γ)) from uniform integers only, for γ
// below, at and above 1.
func TestBernoulliExp(t *testing.T) {
	t.Parallel()
	r := seeded(3)
	for _, g := range []*big.Rat{big.NewRat(0, 1), big.NewRat(3, 10), big.NewRat(1, 1), big.NewRat(5, 2)} {
		const n = 20000
		hits := 0
		for range n {
			ok, err := bernoulliExp(r, g)
			require.NoError(t, err)
			if ok {
				hits++
			}
		}
		gf, _ := g.Float64()
		p := math.Exp(-gf)
		assert.InDelta(t, p, float64(hits)/n, 5*math.Sqrt(p*(1-p)/n)+1e-9, "gamma=%v", g)
	}
}

func TestDiscreteGaussianRefusesBadVariance(t *testing.T) {
	t.Parallel()
	for _, v := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		_, err := NewDiscreteGaussianFloat(v)
		assert.ErrorIs(t, err, ErrInvalid, "%v", v)
	}
	_, err := NewDiscreteGaussian(big.NewRat(0, 1))
	assert.ErrorIs(t, err, ErrInvalid)
}

func TestDistributedTau(t *testing.T) {
	t.Parallel()
	assert.Zero(t, DistributedTau(1e12, 100), "the service's shares: no correction")
	assert.Positive(t, DistributedTau(0.1, 3))
	assert.Zero(t, DistributedTau(0.1, 1), "one share is exactly a discrete Gaussian")
}
