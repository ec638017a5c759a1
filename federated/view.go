package federated

import (
	"context"
	"slices"
	"time"

	"github.com/healthagents/healthagents/federated/dp"
	"github.com/healthagents/healthagents/federated/secagg"
)

// RoundView is what an organization sees of the current round: the public
// parameters, the starting model, and what the current phase asks of it.
type RoundView struct {
	Round           int          `json:"round"`
	Phase           Phase        `json:"phase"`
	TaskHash        string       `json:"task_hash"`
	Base            ModelVersion `json:"base"`
	Session         []byte       `json:"session"`
	Dim             int          `json:"dim"`
	ClipNorm        float64      `json:"clip_norm"`
	FracBits        uint         `json:"frac_bits"`
	MaxParticipants int          `json:"max_participants"`
	MaxEvalRecords  int          `json:"max_eval_records"`
	// Proved rounds need a masked input in the proof group with its proof.
	Proved bool `json:"proved,omitempty"`
	// NoiseShare > 0: distributed DP; add N_Z(0, NoiseShare²) to every
	// weight word of the quantized update before masking (RoundState).
	NoiseShare float64 `json:"noise_share,omitempty"`
	// Kind is RoundStatistics in the statistics round (Base then has no
	// Scaling yet), empty in a training round.
	Kind RoundKind `json:"kind,omitempty"`
	// EvalBound is the most held-out records the caller may report (its
	// registered cohort size, at most MaxEvalRecords); 0: MaxEvalRecords.
	EvalBound     int                     `json:"eval_bound,omitempty"`
	Threshold     int                     `json:"threshold,omitempty"`
	PhaseDeadline time.Time               `json:"phase_deadline"`
	Deadline      time.Time               `json:"deadline"`
	Participants  int                     `json:"participants"`     // organizations in the round so far
	Roster        []secagg.PublicKeys     `json:"roster,omitempty"` // from share_keys on
	U2            []string                `json:"u2,omitempty"`     // from masked_input on
	Inbox         []secagg.EncryptedShare `json:"inbox,omitempty"`  // shares addressed to the caller
	U3            []string                `json:"u3,omitempty"`     // in unmasking
	Done          bool                    `json:"done"`             // the caller has answered this phase
	// Previous is how the round before this one ended, when this
	// coordinator saw it end (or started on it).
	Previous *RoundEnd `json:"previous,omitempty"`
}

// RoundEnd is how a round ended: closed (with the version it made, if
// any) or abandoned, and why. Participants report it.
type RoundEnd struct {
	Round        int    `json:"round"`
	Outcome      string `json:"outcome" enum:"closed,abandoned"`
	Reason       string `json:"reason,omitempty" doc:"Why it was abandoned (e.g. 2 organizations advertised keys, 3 needed), or how it closed."`
	ModelVersion string `json:"model_version,omitempty" doc:"The version the round made; absent for an abandoned or evaluation round."`
}

// endOf is how the ended round r ended.
func endOf(r *RoundState) *RoundEnd {
	e := &RoundEnd{Round: r.Number, Outcome: "closed", Reason: r.Outcome, ModelVersion: r.ResultVersion}
	if r.Phase == PhaseAbandoned {
		e.Outcome = "abandoned"
	}
	return e
}

// View returns the current round as org sees it.
func (c *Coordinator) View(ctx context.Context, org string) (*RoundView, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.advance(ctx, c.cfg.Clock()); err != nil {
		return nil, err
	}
	r, err := c.openRound()
	if err != nil {
		return nil, err
	}
	d := c.data
	v := &RoundView{
		Round: r.Number, Phase: r.Phase, TaskHash: r.TaskHash, Base: c.history[len(c.history)-1],
		Session: r.Session, Dim: r.Dim, ClipNorm: r.ClipNorm, FracBits: r.FracBits,
		MaxParticipants: r.MaxParticipants, MaxEvalRecords: r.MaxEvalRecords, Threshold: r.Threshold, Proved: r.Proved, Kind: r.Kind, NoiseShare: r.NoiseShare,
		PhaseDeadline: r.PhaseDeadline, Deadline: r.Deadline, Participants: participants(r, d),
	}
	if v.EvalBound, err = c.evalBound(ctx, r, org); err != nil {
		return nil, err
	}
	if c.ended != nil && c.ended.Round == r.Number-1 {
		e := *c.ended
		v.Previous = &e
	}
	// The view shares no memory with the coordinator's state.
	v.Base.Weights = slices.Clone(v.Base.Weights)
	v.Base.Contributors = slices.Clone(v.Base.Contributors)
	v.Base.Scaling = slices.Clone(v.Base.Scaling)
	v.Session = slices.Clone(v.Session)
	switch r.Phase {
	case PhaseAdvertiseKeys:
		v.Done = slices.ContainsFunc(d.keys, func(k secagg.PublicKeys) bool { return k.ID == org })
	case PhaseShareKeys:
		v.Roster = cloneKeys(r.Roster)
		_, v.Done = d.commitments[org]
	case PhaseMaskedInput:
		v.Roster, v.U2 = cloneKeys(r.Roster), slices.Clone(r.U2)
		if slices.Contains(r.U2, org) {
			for _, es := range d.inbox[org] {
				if slices.Contains(r.U2, es.From) {
					es.Ciphertext = slices.Clone(es.Ciphertext)
					v.Inbox = append(v.Inbox, es)
				}
			}
		}
		_, v.Done = d.inputs[org]
		v.Done = v.Done || slices.Contains(r.Refused, org) // nothing more it can send
	case PhaseUnmasking:
		v.Roster, v.U2, v.U3 = cloneKeys(r.Roster), slices.Clone(r.U2), slices.Clone(r.U3)
		_, v.Done = d.reveals[org]
	}
	return v, nil
}

func cloneKeys(ks []secagg.PublicKeys) []secagg.PublicKeys {
	out := make([]secagg.PublicKeys, len(ks))
	for i, k := range ks {
		out[i] = secagg.PublicKeys{ID: k.ID, Cipher: slices.Clone(k.Cipher), Mask: slices.Clone(k.Mask)}
	}
	return out
}
func participants(r *RoundState, d *roundData) int {
	switch r.Phase {
	case PhaseAdvertiseKeys:
		return len(d.keys)
	case PhaseShareKeys:
		return len(r.Roster)
	case PhaseMaskedInput:
		return len(r.U2)
	default:
		return len(r.U3)
	}
}

// Status is a summary of the coordinator for /status.
type Status struct {
	Round        int    `json:"current_round"`
	Phase        Phase  `json:"phase"`
	Participants int    `json:"participants"`
	Version      string `json:"model_version"`
	Stopped      string `json:"stopped,omitempty"`
}

// Status reports the current round and its participant count.
func (c *Coordinator) Status(ctx context.Context) (Status, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.advance(ctx, c.cfg.Clock()); err != nil {
		return Status{}, err
	}
	s := Status{Version: c.history[len(c.history)-1].Version}
	if c.round != nil {
		s.Round, s.Phase = c.round.Number, c.round.Phase
		if c.round.Phase.Open() {
			s.Participants = participants(c.round, c.data)
		}
	}
	if c.stopped != nil {
		s.Stopped = c.stopped.Error()
	}
	return s, nil
}

// Model returns the latest model version.
func (c *Coordinator) Model(ctx context.Context) (ModelVersion, error) {
	h, err := c.History(ctx)
	if err != nil {
		return ModelVersion{}, err
	}
	return h[len(h)-1], nil
}

// History returns a copy of the model history, oldest first.
func (c *Coordinator) History(ctx context.Context) ([]ModelVersion, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.advance(ctx, c.cfg.Clock()); err != nil {
		return nil, err
	}
	out := slices.Clone(c.history)
	for i := range out {
		out[i].Weights = slices.Clone(out[i].Weights)
		out[i].Contributors = slices.Clone(out[i].Contributors)
		out[i].Scaling = slices.Clone(out[i].Scaling)
		if m := out[i].Metrics; m != nil {
			mc := *m
			out[i].Metrics = &mc
		}
	}
	return out, nil
}

// Ledger returns a copy of the privacy ledger, or nil without DP.
func (c *Coordinator) Ledger(ctx context.Context) (*dp.Ledger, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ledger == nil {
		return nil, nil
	}
	return c.ledger.Clone(), nil
}
