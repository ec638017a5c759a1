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
	Privacy            bool          `json:"privacy"`                       // FEDERATED_DP: on (default), off or distributed
	Distributed        bool          `json:"distributed,omitempty"`         // FEDERATED_DP=distributed: the participants add the noise
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

// SettingError is a run setting that does not parse or is out of range.
// Setting is the environment variable (FEDERATED_EPSILON); callers that
// take the settings elsewhere (the API's task body) name their own field
// for it. It wraps ErrConfig.
type SettingError struct {
	Setting string
	Value   string
	Why     string
}

func (e *SettingError) Error() string {
	return fmt.Sprintf("%v: %s=%q %s", ErrConfig, e.Setting, e.Value, e.Why)
}

// Unwrap makes errors.Is(err, ErrConfig) hold.
func (e *SettingError) Unwrap() error { return ErrConfig }

// SettingsFromEnv reads the FEDERATED_* settings through getenv (os.Getenv
// in a binary). An unset variable takes its default; a set one that does not
// parse or is out of range is a one-line error (*SettingError) naming the
// variable.
func SettingsFromEnv(getenv func(string) string) (RunSettings, error) {
	d := DefaultConfig()
	s := RunSettings{
		TaskFile: strings.TrimSpace(getenv("FEDERATED_TASK")), Privacy: true,
		Epsilon: d.Privacy.Budget.Epsilon, Delta: d.Privacy.Budget.Delta, ClipNorm: d.ClipNorm,
		Rounds: d.MaxRounds, MinParticipants: d.MinParticipants, RoundTimeout: d.RoundTimeout,
	}
	bad := func(name, v, why string) error { return &SettingError{Setting: name, Value: v, Why: why} }
	var ok bool
	if v := strings.TrimSpace(getenv("FEDERATED_DP")); v != "" {
		if strings.EqualFold(v, NoiseDistributed) {
			s.Distributed = true
		} else if s.Privacy, ok = onOff(v); !ok {
			return s, bad("FEDERATED_DP", v, "must be on, off or distributed")
		}
	}
	if v := strings.TrimSpace(getenv("FEDERATED_PROOFS")); v != "" {
		if s.Proofs, ok = onOff(v); !ok {
			return s, bad("FEDERATED_PROOFS", v, "must be on or off")
		}
	}
	floats := []struct {
		name string
		dst  *float64
	}{{"FEDERATED_EPSILON", &s.Epsilon}, {"FEDERATED_DELTA", &s.Delta}, {"FEDERATED_CLIP_NORM", &s.ClipNorm}}
	for _, f := range floats {
		v := strings.TrimSpace(getenv(f.name))
		if v == "" {
			continue
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || !finite(x) {
			return s, bad(f.name, v, floatRule[f.name])
		}
		*f.dst = x
	}
	ints := []struct {
		name string
		dst  *int
	}{{"FEDERATED_ROUNDS", &s.Rounds}, {"FEDERATED_MIN_PARTICIPANTS", &s.MinParticipants}, {"FEDERATED_TARGET_PARTICIPANTS", &s.TargetParticipants}}
	for _, f := range ints {
		v := strings.TrimSpace(getenv(f.name))
		if v == "" {
			continue
		}
		x, err := strconv.Atoi(v)
		if err != nil {
			return s, bad(f.name, v, intRule(f.name))
		}
		*f.dst = x
	}
	if v := strings.TrimSpace(getenv("FEDERATED_ROUND_TIMEOUT")); v != "" {
		x, err := time.ParseDuration(v)
		if err != nil {
			return s, bad("FEDERATED_ROUND_TIMEOUT", v, timeoutRule)
		}
		s.RoundTimeout = x
	}
	return s, s.Validate()
}

// onOff reads an on/off setting.
func onOff(v string) (on, ok bool) {
	switch strings.ToLower(v) {
	case "on", "true", "1":
		return true, true
	case "off", "false", "0":
		return false, true
	}
	return false, false
}

// The rules of the settings, as their errors state them.
var floatRule = map[string]string{
	"FEDERATED_EPSILON":   "must be a number in (0, 100]",
	"FEDERATED_DELTA":     "must be a number in (0, 1)",
	"FEDERATED_CLIP_NORM": "must be a positive number",
}

const timeoutRule = "must be a duration from 1s to 168h, e.g. 30m"

func intMin(name string) int {
	if name == "FEDERATED_ROUNDS" {
		return 1
	}
	return 3
}

func intRule(name string) string {
	return fmt.Sprintf("must be a whole number of at least %d", intMin(name))
}

// Validate checks the ranges of the settings (the task file aside): the
// first one out of range is a *SettingError naming its FEDERATED_*
// variable. With privacy on, the budget must be reachable over Rounds.
func (s RunSettings) Validate() error {
	g := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	bad := func(name, v, why string) error { return &SettingError{Setting: name, Value: v, Why: why} }
	floats := []struct {
		name string
		v    float64
		ok   bool
	}{
		{"FEDERATED_EPSILON", s.Epsilon, s.Epsilon > 0 && s.Epsilon <= 100},
		{"FEDERATED_DELTA", s.Delta, s.Delta > 0 && s.Delta < 1},
		{"FEDERATED_CLIP_NORM", s.ClipNorm, s.ClipNorm > 0 && s.ClipNorm <= 1e6},
	}
	for _, f := range floats {
		if !finite(f.v) || !f.ok {
			return bad(f.name, g(f.v), floatRule[f.name])
		}
	}
	ints := []struct {
		name string
		v    int
	}{{"FEDERATED_ROUNDS", s.Rounds}, {"FEDERATED_MIN_PARTICIPANTS", s.MinParticipants}, {"FEDERATED_TARGET_PARTICIPANTS", s.TargetParticipants}}
	for _, f := range ints {
		if f.name == "FEDERATED_TARGET_PARTICIPANTS" && f.v == 0 {
			continue // unset: no target
		}
		if f.v < intMin(f.name) || f.v > 100000 {
			return bad(f.name, strconv.Itoa(f.v), intRule(f.name))
		}
	}
	if s.RoundTimeout < time.Second || s.RoundTimeout > 7*24*time.Hour {
		return bad("FEDERATED_ROUND_TIMEOUT", s.RoundTimeout.String(), timeoutRule)
	}
	if s.TargetParticipants != 0 && s.TargetParticipants < s.MinParticipants {
		return bad("FEDERATED_TARGET_PARTICIPANTS", strconv.Itoa(s.TargetParticipants), fmt.Sprintf("must not be below FEDERATED_MIN_PARTICIPANTS (%d)", s.MinParticipants))
	}
	if s.Privacy && s.Distributed && s.Proofs {
		return bad("FEDERATED_DP", "distributed", "cannot be combined with FEDERATED_PROOFS=on: the update-bound proof covers the update without its noise")
	}
	if s.Privacy {
		if _, err := dp.CalibrateNoise(dp.Budget{Epsilon: s.Epsilon, Delta: s.Delta}, s.Rounds, dp.DefaultOrders()); err != nil {
			return bad("FEDERATED_EPSILON", g(s.Epsilon), fmt.Sprintf("cannot be met over FEDERATED_ROUNDS=%d: %v", s.Rounds, err))
		}
	}
	return nil
}

// Config returns the coordinator configuration of these settings for task.
func (s RunSettings) Config(task Task) Config {
	c := DefaultConfig()
	c.Task = task
	c.ClipNorm, c.MaxRounds, c.RoundTimeout = s.ClipNorm, s.Rounds, s.RoundTimeout
	c.MinParticipants, c.TargetParticipants = s.MinParticipants, s.TargetParticipants
	if s.Privacy {
		c.Privacy = &PrivacyConfig{Budget: dp.Budget{Epsilon: s.Epsilon, Delta: s.Delta}, Distributed: s.Distributed}
	} else {
		c.Privacy, c.DisablePrivacy = nil, true
	}
	return c
}
