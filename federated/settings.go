package federated

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/healthagents/healthagents/federated/dp"
)

// RunSettings are the settings of one training run that an operator sets
// from the environment (see SettingsFromEnv). Zero values take the defaults
// of DefaultConfig.
type RunSettings struct {
	TaskFile           string        `json:"-"`                             // FEDERATED_TASK: path(s) of the task file(s)
	Privacy            bool          `json:"privacy"`                       // FEDERATED_DP: on (default) or off
	Epsilon            float64       `json:"epsilon,omitempty"`             // FEDERATED_EPSILON
	Delta              float64       `json:"delta,omitempty"`               // FEDERATED_DELTA
	ClipNorm           float64       `json:"clip_norm"`                     // FEDERATED_CLIP_NORM
	Rounds             int           `json:"rounds"`                        // FEDERATED_ROUNDS
	MinParticipants    int           `json:"min_participants"`              // FEDERATED_MIN_PARTICIPANTS
	TargetParticipants int           `json:"target_participants,omitempty"` // FEDERATED_TARGET_PARTICIPANTS
	RoundTimeout       time.Duration `json:"round_timeout"`                 // FEDERATED_ROUND_TIMEOUT (Go duration, e.g. 30m)
	// Proofs (FEDERATED_PROOFS: on or off, the default) makes every round
	// a proved one: each masked update carries a proof that it is within
	// the clip bound (package federated/normproof; the caller wires it).
	Proofs bool `json:"proofs"`
}

// SettingsFromEnv reads the FEDERATED_* settings through getenv (os.Getenv
// in a binary). An unset variable takes its default; a set one that does not
// parse or is out of range is a one-line error naming the variable.
func SettingsFromEnv(getenv func(string) string) (RunSettings, error) {
	d := DefaultConfig()
	s := RunSettings{
		TaskFile: strings.TrimSpace(getenv("FEDERATED_TASK")), Privacy: true,
		Epsilon: d.Privacy.Budget.Epsilon, Delta: d.Privacy.Budget.Delta, ClipNorm: d.ClipNorm,
		Rounds: d.MaxRounds, MinParticipants: d.MinParticipants, RoundTimeout: d.RoundTimeout,
	}
	bad := func(name, v, why string) error {
		return fmt.Errorf("%w: %s=%q %s", ErrConfig, name, v, why)
	}
	if v := strings.TrimSpace(getenv("FEDERATED_DP")); v != "" {
		switch strings.ToLower(v) {
		case "on", "true", "1":
			s.Privacy = true
		case "off", "false", "0":
			s.Privacy = false
		default:
			return s, bad("FEDERATED_DP", v, "must be on or off")
		}
	}
	if v := strings.TrimSpace(getenv("FEDERATED_PROOFS")); v != "" {
		switch strings.ToLower(v) {
		case "on", "true", "1":
			s.Proofs = true
		case "off", "false", "0":
			s.Proofs = false
		default:
			return s, bad("FEDERATED_PROOFS", v, "must be on or off")
		}
	}
	floats := []struct {
		name string
		dst  *float64
		ok   func(float64) bool
		why  string
	}{
		{"FEDERATED_EPSILON", &s.Epsilon, func(f float64) bool { return f > 0 && f <= 100 }, "must be a number in (0, 100]"},
		{"FEDERATED_DELTA", &s.Delta, func(f float64) bool { return f > 0 && f < 1 }, "must be a number in (0, 1)"},
		{"FEDERATED_CLIP_NORM", &s.ClipNorm, func(f float64) bool { return f > 0 && f <= 1e6 }, "must be a positive number"},
	}
	for _, f := range floats {
		v := strings.TrimSpace(getenv(f.name))
		if v == "" {
			continue
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || !finite(x) || !f.ok(x) {
			return s, bad(f.name, v, f.why)
		}
		*f.dst = x
	}
	ints := []struct {
		name string
		dst  *int
		min  int
	}{
		{"FEDERATED_ROUNDS", &s.Rounds, 1},
		{"FEDERATED_MIN_PARTICIPANTS", &s.MinParticipants, 3},
		{"FEDERATED_TARGET_PARTICIPANTS", &s.TargetParticipants, 3},
	}
	for _, f := range ints {
		v := strings.TrimSpace(getenv(f.name))
		if v == "" {
			continue
		}
		x, err := strconv.Atoi(v)
		if err != nil || x < f.min || x > 100000 {
			return s, bad(f.name, v, fmt.Sprintf("must be a whole number of at least %d", f.min))
		}
		*f.dst = x
	}
	if v := strings.TrimSpace(getenv("FEDERATED_ROUND_TIMEOUT")); v != "" {
		x, err := time.ParseDuration(v)
		if err != nil || x < time.Second || x > 7*24*time.Hour {
			return s, bad("FEDERATED_ROUND_TIMEOUT", v, "must be a duration from 1s to 168h, e.g. 30m")
		}
		s.RoundTimeout = x
	}
	if s.TargetParticipants != 0 && s.TargetParticipants < s.MinParticipants {
		return s, bad("FEDERATED_TARGET_PARTICIPANTS", strconv.Itoa(s.TargetParticipants), fmt.Sprintf("must not be below FEDERATED_MIN_PARTICIPANTS (%d)", s.MinParticipants))
	}
	if s.Privacy {
		if _, err := dp.CalibrateNoise(dp.Budget{Epsilon: s.Epsilon, Delta: s.Delta}, s.Rounds, dp.DefaultOrders()); err != nil {
			return s, bad("FEDERATED_EPSILON", strconv.FormatFloat(s.Epsilon, 'g', -1, 64), fmt.Sprintf("cannot be met over FEDERATED_ROUNDS=%d: %v", s.Rounds, err))
		}
	}
	return s, nil
}

// Config returns the coordinator configuration of these settings for task.
func (s RunSettings) Config(task Task) Config {
	c := DefaultConfig()
	c.Task = task
	c.ClipNorm, c.MaxRounds, c.RoundTimeout = s.ClipNorm, s.Rounds, s.RoundTimeout
	c.MinParticipants, c.TargetParticipants = s.MinParticipants, s.TargetParticipants
	if s.Privacy {
		c.Privacy = &PrivacyConfig{Budget: dp.Budget{Epsilon: s.Epsilon, Delta: s.Delta}}
	} else {
		c.Privacy, c.DisablePrivacy = nil, true
	}
	return c
}
