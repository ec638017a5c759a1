package federated

import (
	"fmt"
	"time"
)

// Metrics are held-out evaluation figures reported by the participants
// through the secure sum (so no hospital's own figure is revealed). They
// measure the model version named by EvaluatedVersion — the round's starting
// model — because a round's new model can only be evaluated in the next round.
type Metrics struct {
	Accuracy    float64 `json:"accuracy"`
	EvalSamples int     `json:"eval_samples"`
	// Participants is how many contributors evaluated at least one record;
	// MeanAccuracy and AccuracyStdDev are the unweighted mean and the
	// (population) standard deviation of their accuracies, computed from the
	// secure sum without revealing any one of them.
	Participants     int     `json:"participants,omitempty"`
	MeanAccuracy     float64 `json:"mean_accuracy,omitempty"`
	AccuracyStdDev   float64 `json:"accuracy_stddev,omitempty"`
	EvaluatedVersion string  `json:"evaluated_version"`
}

// ModelVersion is one entry of the append-only model history.
type ModelVersion struct {
	Version      string    `json:"version"` // "1.0.0" initial, then "1.0.N"
	Round        int       `json:"round"`   // the round that produced it; -1 for the initial model
	Hash         string    `json:"hash"`    // ModelHash(Weights)
	Parent       string    `json:"parent,omitempty"`
	Contributors []string  `json:"contributors"`
	Metrics      *Metrics  `json:"metrics,omitempty"`
	Weights      []float64 `json:"weights"`
	// NoiseMultiplier of the Gaussian mechanism used (0: no DP), and the
	// privacy spent by the whole run once this version was released.
	NoiseMultiplier float64 `json:"noise_multiplier"`
	EpsilonSpent    float64 `json:"epsilon_spent"`
	// Scaling is the learned features' scaling, set by the statistics round
	// of a task with learned features and carried by every later version:
	// the weights are only meaningful with the standardization they were
	// trained with.
	Scaling   []LearnedScaling `json:"scaling,omitempty"`
	CreatedAt time.Time        `json:"created_at"`
}

func versionString(n int) string { return fmt.Sprintf("1.0.%d", n) }

// LatestMetrics returns the metrics of the latest measured version (they
// name it), or nil when no round has measured one yet. A version is
// measured by the round after it (the round's evaluation words score its
// starting model), the final one by the evaluation round.
func LatestMetrics(history []ModelVersion) *Metrics {
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Metrics != nil {
			m := *history[i].Metrics
			return &m
		}
	}
	return nil
}
