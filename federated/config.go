package federated

import (
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/healthagents/healthagents/federated/dp"
	"github.com/healthagents/healthagents/federated/secagg"
)

// Config configures a Coordinator. Zero fields take the defaults of
// DefaultConfig; DefaultConfig itself follows the service specification.
type Config struct {
	Task Task
	// MinParticipants is the fewest organizations a round may close with
	// (never below 3: a sum of two reveals each input to the other).
	MinParticipants int
	// TargetParticipants closes key advertisement early once reached.
	TargetParticipants int
	// MaxParticipants bounds a round; the fixed-point range is proved
	// overflow-free for this many.
	MaxParticipants int
	RoundTimeout    time.Duration
	// PhaseTimeout bounds each of the four phases (default RoundTimeout/4).
	// Both are measured in coordinator uptime: a coordinator that restarts
	// extends the open round's deadlines by the time it was down (see
	// Heartbeat).
	PhaseTimeout time.Duration
	// Heartbeat is how often the open round is stored with the time the
	// coordinator last ran it (RoundState.Alive), so that a restart knows
	// how long it was down (default 5s; the downtime is over-counted by
	// at most this much).
	Heartbeat time.Duration
	// MaxRounds bounds round numbers: rounds 0 .. MaxRounds-1 may run.
	MaxRounds int
	// ClipNorm is the L2 bound of each update (the DP sensitivity).
	ClipNorm float64
	// FracBits is the fixed-point precision of quantized updates.
	FracBits uint
	// ServerLearningRate scales the averaged update (1: plain FedAvg).
	ServerLearningRate float64
	// MaxEvalRecords bounds the held-out count one participant reports.
	MaxEvalRecords int
	// Cohorts, when set, bounds each participant's held-out count further
	// by the cohort size it registered.
	Cohorts CohortSizes
	// Privacy sets the Gaussian mechanism's budget; nil means the
	// specification's (epsilon 0.1, delta 1e-5 over the whole run).
	Privacy *PrivacyConfig
	// Proofs, when set, makes every round a proved one.
	Proofs *ProofConfig
	// DisablePrivacy turns differential privacy off entirely. It must be a
	// deliberate choice: the zero Config has DP on.
	DisablePrivacy bool

	Clock  func() time.Time // default time.Now
	Rand   io.Reader        // default crypto/rand.Reader
	Logger *slog.Logger     // default: silent
}

// PrivacyConfig sets the budget of the whole run. A zero NoiseMultiplier is
// calibrated so that MaxRounds released rounds spend exactly the budget.
type PrivacyConfig struct {
	Budget          dp.Budget
	NoiseMultiplier float64
	// Distributed: the participants add the noise (a discrete Gaussian
	// share each, before masking; see RoundState.NoiseShare), so the
	// coordinator never sees an un-noised sum. Not with Proofs: the
	// update-bound proof covers the update without its noise.
	Distributed bool
}

// DefaultConfig returns the specification's settings: at least 3
// participants, 30-minute rounds, 100 rounds, secure_sum, and DP with
// epsilon 0.1 and delta 1e-5 over the whole run.
func DefaultConfig() Config {
	return Config{
		Task:               DefaultTask(),
		MinParticipants:    3,
		MaxParticipants:    100,
		RoundTimeout:       30 * time.Minute,
		MaxRounds:          100,
		ClipNorm:           1,
		FracBits:           24,
		ServerLearningRate: 1,
		MaxEvalRecords:     1 << 20,
		Privacy:            &PrivacyConfig{Budget: dp.DefaultBudget()},
	}
}

func (c *Config) fill() error {
	d := DefaultConfig()
	if c.Task.Name == "" && len(c.Task.Features) == 0 {
		c.Task = d.Task
	}
	setInt := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	setInt(&c.MinParticipants, d.MinParticipants)
	setInt(&c.TargetParticipants, c.MinParticipants)
	setInt(&c.MaxParticipants, d.MaxParticipants)
	setInt(&c.MaxRounds, d.MaxRounds)
	setInt(&c.MaxEvalRecords, d.MaxEvalRecords)
	if c.RoundTimeout == 0 {
		c.RoundTimeout = d.RoundTimeout
	}
	if c.PhaseTimeout == 0 {
		c.PhaseTimeout = c.RoundTimeout / 4
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = 5 * time.Second
	}
	if c.ClipNorm == 0 {
		c.ClipNorm = d.ClipNorm
	}
	if c.FracBits == 0 {
		c.FracBits = d.FracBits
	}
	if c.ServerLearningRate == 0 {
		c.ServerLearningRate = d.ServerLearningRate
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.Rand == nil {
		c.Rand = rand.Reader
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if err := c.Task.Validate(); err != nil {
		return err
	}
	switch {
	case c.MinParticipants < 3:
		return fmt.Errorf("%w: min participants %d < 3", ErrConfig, c.MinParticipants)
	case c.TargetParticipants < c.MinParticipants || c.MaxParticipants < c.TargetParticipants:
		return fmt.Errorf("%w: need min <= target <= max participants", ErrConfig)
	case c.RoundTimeout <= 0 || c.PhaseTimeout <= 0 || c.MaxRounds < 1:
		return fmt.Errorf("%w: timeouts and max rounds must be positive", ErrConfig)
	case !(c.ClipNorm > 0) || !(c.ServerLearningRate > 0) || c.MaxEvalRecords < 1 || c.MaxEvalRecords > 1<<30:
		return fmt.Errorf("%w: clip norm, server learning rate and eval bound must be positive", ErrConfig)
	}
	if _, err := secagg.NewQuantizer(c.ClipNorm, c.FracBits, c.MaxParticipants); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if c.Task.Learns() {
		if _, err := statsFracBits(c.MaxParticipants, c.MaxEvalRecords); err != nil {
			return err
		}
		if c.MaxRounds < 2 {
			return fmt.Errorf("%w: a task with learned features needs at least 2 rounds (FEDERATED_ROUNDS; the first learns the scaling)", ErrConfig)
		}
	}
	if p := c.Proofs; p != nil && (p.Group == nil || p.Verifier == nil) {
		return fmt.Errorf("%w: proofs need a group and a verifier", ErrConfig)
	}
	if c.Proofs != nil && !c.DisablePrivacy && c.Privacy != nil && c.Privacy.Distributed {
		return fmt.Errorf("%w: distributed noise cannot be combined with proved rounds (the proof bounds the update without its noise)", ErrConfig)
	}
	switch {
	case c.DisablePrivacy:
		c.Privacy = nil
	case c.Privacy == nil:
		c.Privacy = &PrivacyConfig{Budget: dp.DefaultBudget()}
	default:
		p := *c.Privacy // never write to the caller's struct
		c.Privacy = &p
	}
	if c.Privacy != nil {
		p := c.Privacy
		if err := p.Budget.Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrConfig, err)
		}
		if p.NoiseMultiplier == 0 {
			z, err := dp.CalibrateNoise(p.Budget, c.MaxRounds, dp.DefaultOrders())
			if err != nil {
				return fmt.Errorf("%w: %w", ErrConfig, err)
			}
			p.NoiseMultiplier = z
		}
		if !(p.NoiseMultiplier > 0) {
			return fmt.Errorf("%w: noise multiplier must be positive", ErrConfig)
		}
		if p.Distributed && !(noiseShare(p.NoiseMultiplier, c.ClipNorm, c.FracBits, 0, c.MinParticipants) < maxNoiseShare) {
			return fmt.Errorf("%w: distributed noise shares of this budget and clip norm would overflow the 64-bit sum; lower the clip norm or raise epsilon", ErrConfig)
		}
	}
	return nil
}

// Coordinator runs federated rounds with secure aggregation. It only ever
