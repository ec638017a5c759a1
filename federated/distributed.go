package federated

import (
	"fmt"
	"io"
	"math"

	"github.com/healthagents/healthagents/federated/dp"
)

// Distributed DP (PrivacyConfig.Distributed, FEDERATED_DP=distributed):
// every participant adds its share of the noise, a discrete Gaussian on
// each quantized weight word, before it masks its input, so the sum the
// coordinator unmasks is already noised and no party ever sees an
// un-noised aggregate (Kairouz, Liu and Steinke, ICML 2021, the
// distributed discrete Gaussian).
//
// Calibration. One organization's quantized update has L2 norm at most
// Δ = ClipNorm·2^FracBits + √d (d weights; randomized rounding moves each
// word by less than 1). The central mechanism adds N(0, (zΔ)²) per
// coordinate. Here each participant adds N_Z(0, s²) with
//
//	s² = (zΔ)² / (MinParticipants − 1),
//
// so the noise of any MinParticipants − 1 participants alone (the sum
// never has fewer than MinParticipants contributors: smaller rounds are
// abandoned) has variance at least (zΔ)², whatever the organization whose
// privacy is at stake adds or withholds. The sum of independent discrete
// Gaussians is within τ (dp.DistributedTau) of one discrete Gaussian of the
// summed variance, and the discrete Gaussian of variance (zΔ)² satisfies
// the same zero-concentrated DP as the continuous one (ρ = 1/(2z²)); τ is
// 0 in float64 at these variances, so the accountant charges each round
// exactly as for central noise (dp.GaussianRDP with multiplier z).
//
// Trust. The guarantee needs at least MinParticipants − 1 honest
// participants in every round: a participant that adds less than its share
// weakens it for everyone (the masking hides its input, so nobody can
// check). Proved rounds are refused with it: the update-bound proof covers
// the update without its noise.

// maxNoiseShare bounds a share (quantized units): 40 standard deviations
// of it from each of 100 participants stay far inside the 64-bit ring.
const maxNoiseShare = 1e15

// noiseShare is the standard deviation of one participant's share, in
// quantized units, for noise multiplier z.
func noiseShare(z, clip float64, fracBits uint, weights, minParticipants int) float64 {
	delta := clip*math.Ldexp(1, int(fracBits)) + math.Sqrt(float64(weights))
	return z * delta / math.Sqrt(float64(max(minParticipants-1, 1)))
}

// addNoiseShare adds N_Z(0, share²) to each of the first n words of x
// (two's complement), with the randomness of r.
func addNoiseShare(r io.Reader, x []uint64, n int, share float64) error {
	d, err := dp.NewDiscreteGaussianFloat(share * share)
	if err != nil {
		return fmt.Errorf("federated: noise share: %w", err)
	}
	for i := range n {
		e, err := d.Sample(r)
		if err != nil {
			return fmt.Errorf("federated: noise share: %w", err)
		}
		if !e.IsInt64() {
			return fmt.Errorf("federated: noise share out of range")
		}
		x[i] += uint64(e.Int64())
	}
	return nil
}

// noiseSlack is how far the unmasked sum of contributors participants'
// shares may stretch the aggregate's L2 norm, in update units: the norm of
// a Gaussian vector of d coordinates exceeds σ(√d + t) with probability
// below exp(−t²/2); t = 12 makes a false refusal of an honest round a
// 10^-31 event.
func noiseSlack(share float64, fracBits uint, weights, contributors int) float64 {
	sigma := share * math.Sqrt(float64(contributors)) * math.Ldexp(1, -int(fracBits))
	return sigma * (math.Sqrt(float64(weights)) + 12)
}

// Who adds a run's DP noise (PrivacyStatus.Noise, the task API's
// dp_noise).
const (
	NoiseCentral     = "central"     // the coordinator, to the unmasked sum
	NoiseDistributed = "distributed" // each participant, before masking
)

// Noise names who adds the noise of a run of this configuration:
// NoiseCentral, NoiseDistributed, or "" with DP off. A nil Privacy with
// DP on is the default budget, central.
func (c *Config) Noise() string {
	switch {
	case c.DisablePrivacy:
		return ""
	case c.Privacy != nil && c.Privacy.Distributed:
		return NoiseDistributed
	default:
		return NoiseCentral
	}
}
