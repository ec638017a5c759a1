package federated

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"slices"
	"time"

	"github.com/healthagents/healthagents/federated/secagg"
	"github.com/healthagents/healthagents/record"
)

// RoundAPI is the part of a coordinator a participant talks to. *Coordinator
// implements it in-process; an HTTP client implements it across the network.
type RoundAPI interface {
	View(ctx context.Context, org string) (*RoundView, error)
	Submit(ctx context.Context, org string, s Submission) error
}

var _ RoundAPI = (*Coordinator)(nil)

// ErrNoProver is returned for a proved round when the participant has no
// ParticipantProofs.
var ErrNoProver = errors.New("federated: the round requires update proofs and this participant has no prover")

// ErrTaskMismatch is returned when the coordinator announces another task.
var ErrTaskMismatch = errors.New("federated: coordinator runs a different task")

// ParticipantConfig configures a Participant. Zero fields take defaults.
type ParticipantConfig struct {
	Org     string    // the organization's identifier, as the coordinator knows it
	Task    Task      // default DefaultTask()
	HeldOut float64   // fraction of records kept for evaluation; default 0.2
	Rand    io.Reader // default crypto/rand.Reader
	// Proofs lets the participant take part in proved rounds; without it
	// such a round is refused with ErrNoProver.
	Proofs *ParticipantProofs
	Logger *slog.Logger // default silent; never receives record data
}

// Participant is a hospital's side of federated training: it trains on its
// own records, clips, runs nan_check and bounds_check, quantizes, masks and
// walks the secure-aggregation phases. Records and secrets stay inside it;
// what it sends is public keys, sealed shares, a masked vector and the
// shares the unmasking phase asks for. A Participant is driven by one
// goroutine at a time.
type Participant struct {
	cfg      ParticipantConfig
	model    Model
	rawTrain Dataset // raw values (rawExamples), for the statistics round
	rawTest  Dataset
	scaling  []LearnedScaling // applied to train and test; nil until learned
	scaled   bool             // train and test are standardized
	train    Dataset
	test     Dataset
	taskHash string

	round  int
	kind   RoundKind // of round
	client *secagg.Client
	// masked is this round's masked input once made: MaskInput runs once
	// per round, so a proof that failed (a proving key not fetched yet) is
	// retried over the same input.
	masked *maskedInput
	sent   map[Phase]*Submission // for resending after a failed Submit
	plain  []uint64              // the last quantized input, kept for tests only
	// taken is 1 + the last round whose sum holds this participant's
	// masked input (0: none yet), for Contributed.
	taken int
}

// NewParticipant prepares the records: labelled ones are standardized and
// split deterministically into training and held-out parts.
func NewParticipant(cfg ParticipantConfig, records []*record.Record) (*Participant, error) {
	if cfg.Task.Name == "" && len(cfg.Task.Features) == 0 {
		cfg.Task = DefaultTask()
	}
	if p := cfg.Proofs; p != nil && (p.Group == nil || p.Prover == nil) {
		return nil, fmt.Errorf("%w: proofs need a group and a prover", ErrConfig)
	}
	if cfg.HeldOut == 0 {
		cfg.HeldOut = 0.2
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Reader
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Org == "" || len(cfg.Org) > secagg.MaxIDLen {
		return nil, fmt.Errorf("%w: organization id is required", ErrConfig)
	}
	if !(cfg.HeldOut > 0 && cfg.HeldOut < 1) {
		return nil, fmt.Errorf("%w: held-out fraction must be in (0, 1)", ErrConfig)
	}
	if err := cfg.Task.Validate(); err != nil {
		return nil, err
	}
	m, err := cfg.Task.NewModel()
	if err != nil {
		return nil, err
	}
	trainRecs, testRecs := SplitHeldOut(records, cfg.HeldOut)
	rawTrain, _, err := cfg.Task.rawExamples(trainRecs)
	if err != nil {
		return nil, err
	}
	rawTest, _, err := cfg.Task.rawExamples(testRecs)
	if err != nil {
		return nil, err
	}
	if rawTrain.Len() == 0 {
		return nil, fmt.Errorf("%w: no labelled records to train on", ErrTask)
	}
	p := &Participant{cfg: cfg, model: m, rawTrain: rawTrain, rawTest: rawTest, taskHash: cfg.Task.Hash(), round: -1}
	if !cfg.Task.Learns() {
		if err := p.setScaling(nil); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// setScaling standardizes the training and held-out values with the
// learned scaling sc (nil for a task that learns none).
func (p *Participant) setScaling(sc []LearnedScaling) error {
	if p.scaled && slices.Equal(sc, p.scaling) {
		return nil
	}
	t := p.cfg.Task
	if t.Learns() {
		var err error
		if t, err = t.WithScaling(sc); err != nil {
			return fmt.Errorf("%w: %w", ErrTaskMismatch, err)
		}
	}
	train, err := t.standardize(p.rawTrain)
	if err != nil {
		return err
	}
	test, err := t.standardize(p.rawTest)
	if err != nil {
		return err
	}
	p.train, p.test, p.scaling, p.scaled = train, test, slices.Clone(sc), true
	return nil
}

// Scaling returns the learned scaling this participant trains with, or nil
// before it learned one (or when its task learns none).
func (p *Participant) Scaling() []LearnedScaling { return slices.Clone(p.scaling) }

// RoundKind is the kind of the round the participant last acted in
// (RoundStatistics or empty for training).
func (p *Participant) RoundKind() RoundKind { return p.kind }

// Org returns the organization identifier.
func (p *Participant) Org() string { return p.cfg.Org }

// Evaluate scores weights on this participant's held-out records.
func (p *Participant) Evaluate(w []float64) (Evaluation, error) {
	if len(w) != p.model.NumWeights() {
		return Evaluation{}, fmt.Errorf("%w: %d weights for a model of %d", ErrMalformedWeights, len(w), p.model.NumWeights())
	}
	if !p.scaled {
		return Evaluation{}, fmt.Errorf("%w: the learned features' scaling is not known yet", ErrTask)
	}
	return Evaluate(p.model, w, p.test), nil
}

// Step does what the current phase asks of this participant, at most once
// per phase, and returns the view it acted on. A participant that missed an
// earlier phase of the round (or restarted, losing its secrets) waits for
// the next round. If a Submit fails, the next Step resends the same message.
func (p *Participant) Step(ctx context.Context, api RoundAPI) (*RoundView, error) {
	v, err := api.View(ctx, p.cfg.Org)
	if err != nil {
		return nil, err
	}
	return v, p.act(ctx, api, v)
}

// act does what v's phase asks of this participant, if anything.
func (p *Participant) act(ctx context.Context, api RoundAPI, v *RoundView) error {
	if v.TaskHash != p.taskHash {
		return ErrTaskMismatch
	}
	if v.Base.Scaling != nil {
		if !p.cfg.Task.Learns() {
			return fmt.Errorf("%w: the model carries a learned scaling, the task learns none", ErrTaskMismatch)
		}
		if err := p.setScaling(v.Base.Scaling); err != nil {
			return err
		}
	}
	if v.Round != p.round {
		p.round, p.kind, p.client, p.masked, p.sent = v.Round, v.Kind, nil, nil, map[Phase]*Submission{}
	}
	if v.Phase == PhaseUnmasking && slices.Contains(v.U3, p.cfg.Org) {
		p.taken = v.Round + 1 // listed among the survivors whose inputs are summed
	}
	if v.Done || !v.Phase.Open() {
		return nil
	}
	s, ok := p.sent[v.Phase]
	if !ok {
		var err error
		if s, err = p.message(ctx, v); err != nil || s == nil {
			return err
		}
		p.sent[v.Phase] = s
	}
	err := api.Submit(ctx, p.cfg.Org, *s)
	if v.Phase == PhaseMaskedInput && (err == nil || errors.Is(err, ErrDuplicate)) {
		p.taken = v.Round + 1
	}
	return err
}

// Contributed reports whether the coordinator took this participant's
// masked input into round's sum: accepted at submission, or listed among
// the round's survivors. A refused input, one sent too late or a round the
// participant did not join does not count. Whether the round then closed
// with a model is the coordinator's to say (its history).
func (p *Participant) Contributed(round int) bool { return p.taken == round+1 }

// message builds this phase's submission, or nil when there is nothing to do.
func (p *Participant) message(ctx context.Context, v *RoundView) (*Submission, error) {
	s := &Submission{Round: v.Round}
	switch v.Phase {
	case PhaseAdvertiseKeys:
		g, err := p.group(v)
		if err != nil {
			return nil, err
		}
		c, err := secagg.NewClient(p.cfg.Rand, p.cfg.Org, secagg.Params{Session: v.Session, Dim: v.Dim, Group: g})
		if err != nil {
			return nil, err
		}
		p.client = c
		k := c.Keys()
		s.Keys = &k
	case PhaseShareKeys:
		if p.client == nil || !slices.ContainsFunc(v.Roster, func(k secagg.PublicKeys) bool { return k.ID == p.cfg.Org }) {
			return nil, nil
		}
		m, err := p.client.ShareKeys(v.Roster, v.Threshold)
		if err != nil {
			return nil, err
		}
		s.Shares = m
		if v.Proved {
			if s.SeedCommitments, err = p.seedCommitments(); err != nil {
				return nil, err
			}
		}
	case PhaseMaskedInput:
		if p.client == nil || !slices.Contains(v.U2, p.cfg.Org) {
			return nil, nil
		}
		if p.masked == nil {
			var x []uint64
			var err error
			if v.Kind == RoundStatistics {
				x, err = p.prepareStats(v)
			} else {
				x, err = p.prepare(ctx, v)
			}
			if err != nil {
				return nil, err
			}
			g, err := p.group(v)
			if err != nil {
				return nil, err
			}
			y, err := p.client.MaskInput(v.U2, v.Inbox, g.Encode(x))
			if err != nil {
				return nil, err
			}
			p.masked = &maskedInput{x: x, y: y}
		}
		x, y := p.masked.x, p.masked.y
		if v.Proved {
			var err error
			if s.Proof, err = p.prove(ctx, v, x, y); err != nil {
				return nil, err
			}
		}
		s.Masked = slices.Clone(y)
		s.ModelVersion = v.Base.Version
		s.SampleCount = p.rawTrain.Len()
	case PhaseUnmasking:
		if p.client == nil || !slices.Contains(v.U3, p.cfg.Org) {
			return nil, nil
		}
		rs, err := p.client.Unmask(v.U3)
		if err != nil {
			return nil, err
		}
		s.Reveals = rs
	default:
		return nil, nil
	}
	return s, nil
}

// maskedInput is a round's quantized input and its masked form.
type maskedInput struct{ x, y []uint64 }

// prepareStats is the statistics round's input: per learned feature, the
// count, sum and sum of squares of this participant's training values (see
// statsWords). Nothing else about its records is in it.
func (p *Participant) prepareStats(v *RoundView) ([]uint64, error) {
	t := p.cfg.Task
	if !t.Learns() || v.Dim != statsWords*len(t.learned()) || v.FracBits < 16 || v.FracBits > 32 {
		return nil, fmt.Errorf("%w: statistics round of dimension %d does not fit the local task", ErrTaskMismatch, v.Dim)
	}
	limit := v.MaxEvalRecords
	if v.EvalBound > 0 {
		limit = min(limit, v.EvalBound)
	}
	x := statsInput(t, p.rawTrain, v.FracBits, limit)
	p.plain = slices.Clone(x)
	return x, nil
}

// prepare trains from the round's base model and produces the quantized
// input: the clipped update followed by the held-out evaluation counters of
// the base model.
func (p *Participant) prepare(ctx context.Context, v *RoundView) ([]uint64, error) {
	if !p.scaled {
		return nil, fmt.Errorf("%w: a training round before the learned features' scaling is known", ErrTaskMismatch)
	}
	base := v.Base.Weights
	nw := p.model.NumWeights()
	if len(base) != nw || v.Dim != nw+evalWords {
		return nil, fmt.Errorf("%w: round dimension %d does not fit the local model", ErrTaskMismatch, v.Dim)
	}
	if h, err := ModelHash(base); err != nil || h != v.Base.Hash {
		return nil, fmt.Errorf("%w: base model does not match its hash", ErrMalformedWeights)
	}
	var seed [32]byte
	if _, err := io.ReadFull(p.cfg.Rand, seed[:]); err != nil {
		return nil, fmt.Errorf("federated: randomness: %w", err)
	}
	rng := mrand.New(mrand.NewChaCha8(seed))
	upd := &Update{Delta: make([]float64, nw)}
	if v.Kind != RoundEvaluation {
		// An evaluation round measures the final model and trains nothing:
		// the update is zero.
		var err error
		if upd, err = Train(ctx, p.model, base, p.train, p.cfg.Task.Training, rng); err != nil {
			return nil, err
		}
	}
	Clip(upd.Delta, v.ClipNorm)
	if err := NaNCheck(upd.Delta); err != nil {
		return nil, err
	}
	if err := BoundsCheck(upd.Delta, v.ClipNorm); err != nil {
		return nil, err
	}
	q, err := secagg.NewQuantizer(v.ClipNorm, v.FracBits, v.MaxParticipants)
	if err != nil {
		return nil, err
	}
	x, err := q.Quantize(upd.Delta, rng)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBounds, err)
	}
	test := p.test
	limit := v.MaxEvalRecords
	if v.EvalBound > 0 {
		limit = min(limit, v.EvalBound)
	}
	if test.Len() > limit {
		test = Dataset{X: test.X[:limit], Y: test.Y[:limit]}
	}
	if v.NoiseShare > 0 && v.Kind != RoundEvaluation {
		// Distributed DP: this participant's share of the noise, on the
		// weights only, before masking (distributed.go).
		if !(v.NoiseShare < maxNoiseShare) {
			return nil, fmt.Errorf("%w: noise share %g out of range", ErrTaskMismatch, v.NoiseShare)
		}
		if err := addNoiseShare(p.cfg.Rand, x, nw, v.NoiseShare); err != nil {
			return nil, err
		}
	}
	ev := evalCounters(Evaluate(p.model, base, test))
	x = append(x, ev[:]...)
	p.plain = slices.Clone(x)
	return x, nil
}

// changeNotifier is the optional capability of a RoundAPI that can tell when
// its state changed (*Coordinator has it), so RunRound need not wait a whole
// poll interval.
type changeNotifier interface {
	Changed() <-chan struct{}
}

// RunRound steps through the round that is current when it is called until
// that round is over, polling every poll interval (or sooner, when api can
// signal changes). It returns the view of the round that follows (or the
// error explaining that none is open) without acting on it: the participant
// has not joined that round, so a caller that stops here leaves no key
// behind for the next round to wait for, and a caller that goes on calls
// RunRound again to join it.
func (p *Participant) RunRound(ctx context.Context, api RoundAPI, poll time.Duration) (*RoundView, error) {
	notifier, _ := api.(changeNotifier)
	start := -1
	for {
		var changed <-chan struct{}
		if notifier != nil {
			changed = notifier.Changed() // taken before View, so no change is missed
		}
		v, err := api.View(ctx, p.cfg.Org)
		if err != nil {
			return nil, err
		}
		if start < 0 {
			start = v.Round
		} else if v.Round != start {
			return v, nil
		}
		if err := p.act(ctx, api, v); err != nil && !errors.Is(err, ErrDuplicate) {
			return v, err
		}
		if !v.Done && v.Phase.Open() && p.round == v.Round && p.sent[v.Phase] != nil {
			// This look answered the phase: look again at once. A
			// coordinator that long-polls holds that look until the phase
			// moves on, so the next phase starts as soon as everyone
			// answered; any other answers done, and the wait below follows.
			continue
		}
		timer := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			timer.Stop()
			return v, ctx.Err()
		case <-changed:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// group is the arithmetic of v's round.
func (p *Participant) group(v *RoundView) (secagg.Group, error) {
	if !v.Proved {
		return secagg.Ring64{}, nil
	}
	if p.cfg.Proofs == nil {
		return nil, ErrNoProver
	}
	return p.cfg.Proofs.Group, nil
}

// seedCommitments commits to the pairwise seed shared with every other
// member of the roster.
func (p *Participant) seedCommitments() (map[string][]byte, error) {
	_, pairs, err := p.client.Seeds()
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(pairs))
	for _, ps := range pairs {
		out[ps.Peer] = p.cfg.Proofs.Group.Commit(nil, &ps.Seed)
	}
	return out, nil
}

// prove proves that y masks x within the round's bounds.
func (p *Participant) prove(ctx context.Context, v *RoundView, x, y []uint64) ([]byte, error) {
	self, pairs, err := p.client.Seeds()
	if err != nil {
		return nil, err
	}
	g := p.cfg.Proofs.Group
	st := &UpdateStatement{
		Weights: v.Dim - evalWords, Extra: evalWords, Masked: y,
		SelfCommitment: g.Commit(v.Session, &self), ClipNorm: v.ClipNorm, FracBits: v.FracBits,
		EvalBound: v.MaxEvalRecords,
	}
	if v.EvalBound > 0 {
		st.EvalBound = min(st.EvalBound, v.EvalBound)
	}
	sec := &UpdateSecret{X: x, SelfSeed: self}
	for _, ps := range pairs {
		if !slices.Contains(v.U2, ps.Peer) {
			continue // dropped before sharing keys: not in the masking
		}
		st.PairCommitments = append(st.PairCommitments, g.Commit(nil, &ps.Seed))
		st.PairPlus = append(st.PairPlus, ps.Plus)
		sec.PairSeeds = append(sec.PairSeeds, ps.Seed)
	}
	return p.cfg.Proofs.Prover.ProveUpdate(ctx, st, sec)
}
