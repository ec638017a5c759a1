package federated

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"slices"
	"sync"
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
	PhaseTimeout time.Duration
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
	// Privacy sets the Gaussian mechanism's budget; nil means the
	// specification's (epsilon 0.1, delta 1e-5 over the whole run).
	Privacy *PrivacyConfig
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
	}
	return nil
}

// Coordinator runs federated rounds with secure aggregation. It only ever
// receives public keys, sealed shares, masked vectors and revealed shares
// (see Submission); the one plaintext vector it computes is the sum. It is
// safe for concurrent use; all state changes go through the Store first.
type Coordinator struct {
	cfg   Config
	store Store
	model Model

	mu       sync.Mutex
	round    *RoundState // nil when no round could be opened
	data     *roundData
	history  []ModelVersion
	ledger   *dp.Ledger // nil without DP
	stopped  error      // why no round is open, when round is closed
	taskHash string
	changed  chan struct{} // closed and replaced at every state change
}

// notify wakes everyone waiting on Changed. Callers hold c.mu.
func (c *Coordinator) notify() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Changed returns a channel that is closed at the next state change (a
// submission accepted, a phase change, a round closed or opened). Waiters
// call it again after each wake-up.
func (c *Coordinator) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// Run calls Advance every interval until ctx ends, so that phase deadlines
// take effect even when no participant calls in. It returns ctx's error, or
// the first error of Advance.
func (c *Coordinator) Run(ctx context.Context, interval time.Duration) error {
	if interval <= 0 {
		return fmt.Errorf("%w: run interval must be positive", ErrConfig)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			if err := c.Advance(ctx); err != nil {
				return err
			}
		}
	}
}

// roundData is derived from the round's submission log.
type roundData struct {
	keys        []secagg.PublicKeys
	commitments map[string][]byte
	inbox       map[string][]secagg.EncryptedShare
	inputs      map[string]secagg.MaskedInput
	reveals     map[string][]secagg.RevealedShare
}

func newRoundData() *roundData {
	return &roundData{
		commitments: map[string][]byte{},
		inbox:       map[string][]secagg.EncryptedShare{},
		inputs:      map[string]secagg.MaskedInput{},
		reveals:     map[string][]secagg.RevealedShare{},
	}
}

// NewCoordinator loads the state from store, or creates the initial model,
// the privacy ledger and round 0 when the store is empty.
func NewCoordinator(ctx context.Context, store Store, cfg Config) (*Coordinator, error) {
	if store == nil {
		return nil, fmt.Errorf("%w: nil store", ErrConfig)
	}
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	m, err := cfg.Task.NewModel()
	if err != nil {
		return nil, err
	}
	c := &Coordinator{cfg: cfg, store: store, model: m, taskHash: cfg.Task.Hash(), changed: make(chan struct{})}
	snap, err := store.LoadFederated(ctx)
	if err != nil {
		return nil, fmt.Errorf("federated: loading state: %w", err)
	}
	if snap == nil || len(snap.History) == 0 {
		return c, c.bootstrap(ctx)
	}
	if err := c.restore(snap); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.round == nil || !c.round.Phase.Open() {
		if err := c.openNext(ctx, c.cfg.Clock()); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *Coordinator) bootstrap(ctx context.Context) error {
	w := make([]float64, c.model.NumWeights())
	h, err := ModelHash(w)
	if err != nil {
		return err
	}
	initial := ModelVersion{Version: versionString(0), Round: -1, Hash: h, Contributors: []string{}, Weights: w, CreatedAt: c.cfg.Clock().UTC()}
	var ledger *dp.Ledger
	if p := c.cfg.Privacy; p != nil {
		if ledger, err = dp.NewLedger(p.Budget, dp.DefaultOrders()); err != nil {
			return err
		}
	}
	if err := c.store.SaveFederated(ctx, Change{Model: &initial, Ledger: ledger}); err != nil {
		return fmt.Errorf("federated: saving initial state: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.history, c.ledger = []ModelVersion{initial}, ledger
	return c.openNext(ctx, c.cfg.Clock())
}

func (c *Coordinator) restore(snap *Snapshot) error {
	c.history = snap.History
	c.ledger = snap.Ledger
	if (c.ledger == nil) != (c.cfg.Privacy == nil) {
		return fmt.Errorf("%w: differential privacy on/off differs from the stored run", ErrStoreMismatch)
	}
	if c.ledger != nil && c.ledger.Budget != c.cfg.Privacy.Budget {
		return fmt.Errorf("%w: privacy budget differs from the stored ledger", ErrStoreMismatch)
	}
	if snap.Round == nil {
		return nil
	}
	if snap.Round.TaskHash != c.taskHash {
		return fmt.Errorf("%w: task differs from the stored round's", ErrStoreMismatch)
	}
	c.round, c.data = snap.Round.clone(), newRoundData()
	if !c.round.Phase.Open() {
		return nil
	}
	// Submissions were validated when accepted, against the phase they were
	// sent in; replaying them rebuilds the round's derived data.
	for i := range snap.Submissions {
		s := snap.Submissions[i]
		if s.Round != c.round.Number || s.Org == "" {
			return fmt.Errorf("%w: submission %d belongs to another round", ErrStoreMismatch, i)
		}
		c.apply(&s)
	}
	return nil
}

// openNext opens the round after the current one, if the round limit and
// the privacy budget allow; otherwise it records why not.
func (c *Coordinator) openNext(ctx context.Context, now time.Time) error {
	next := 0
	if c.round != nil {
		next = c.round.Number + 1
	}
	if next >= c.cfg.MaxRounds {
		c.stopped = fmt.Errorf("%w: %d", ErrMaxRounds, c.cfg.MaxRounds)
		return nil
	}
	var z float64
	if p := c.cfg.Privacy; p != nil {
		z = p.NoiseMultiplier
		if _, err := c.ledger.Check(z); err != nil { // privacy_check
			c.stopped = fmt.Errorf("%w: %w", ErrBudgetExhausted, err)
			return nil
		}
	}
	session := make([]byte, secagg.SessionSize)
	if _, err := io.ReadFull(c.cfg.Rand, session); err != nil {
		return fmt.Errorf("federated: session randomness: %w", err)
	}
	base := c.history[len(c.history)-1]
	r := &RoundState{
		Number: next, Phase: PhaseAdvertiseKeys, TaskHash: c.taskHash, BaseVersion: base.Version,
		Session: session, Dim: c.model.NumWeights() + evalWords,
		ClipNorm: c.cfg.ClipNorm, FracBits: c.cfg.FracBits, MaxParticipants: c.cfg.MaxParticipants,
		MaxEvalRecords: c.cfg.MaxEvalRecords, NoiseMultiplier: z,
		OpenedAt: now.UTC(), Deadline: now.Add(c.cfg.RoundTimeout).UTC(),
	}
	r.PhaseDeadline = c.phaseDeadline(r, now)
	if err := c.store.SaveFederated(ctx, Change{Rounds: []*RoundState{r}}); err != nil {
		return fmt.Errorf("federated: saving round %d: %w", next, err)
	}
	c.round, c.data, c.stopped = r, newRoundData(), nil
	c.notify()
	c.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "federated round opened", slog.Int("round", next), slog.String("base", base.Version))
	return nil
}

// evalWords is the number of evaluation counters after the weights in every
// aggregated vector: held-out correct predictions and held-out total.
const evalWords = 2

func (c *Coordinator) phaseDeadline(r *RoundState, now time.Time) time.Time {
	d := now.Add(c.cfg.PhaseTimeout)
	if d.After(r.Deadline) {
		d = r.Deadline
	}
	return d.UTC()
}

// Advance applies the clock: a phase whose deadline passed moves on with the
// participants it has, or the round is abandoned. Every call of the
// coordinator does this first; a server may also call it on a timer.
func (c *Coordinator) Advance(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.advance(ctx, c.cfg.Clock())
}

func (c *Coordinator) advance(ctx context.Context, now time.Time) error {
	for {
		if c.round == nil || !c.round.Phase.Open() {
			if c.stopped != nil {
				return nil
			}
			// The previous round ended but opening the next one failed (a
			// store error): try again.
			return c.openNext(ctx, now)
		}
		moved, err := c.transition(ctx, now)
		if err != nil || !moved {
			return err
		}
	}
}

// transition performs at most one phase change.
func (c *Coordinator) transition(ctx context.Context, now time.Time) (bool, error) {
	r, d := c.round, c.data
	late := !now.Before(r.PhaseDeadline)
	enough := max(r.Threshold, c.cfg.MinParticipants)
	next := r.clone()
	switch r.Phase {
	case PhaseAdvertiseKeys:
		n := len(d.keys)
		if n < c.cfg.TargetParticipants && !late {
			return false, nil
		}
		if n < c.cfg.MinParticipants {
			return true, c.abandon(ctx, now, fmt.Sprintf("%d organizations advertised keys, %d needed", n, c.cfg.MinParticipants))
		}
		next.Roster = slices.Clone(d.keys)
		slices.SortFunc(next.Roster, func(a, b secagg.PublicKeys) int { return cmpString(a.ID, b.ID) })
		next.Threshold = max(c.cfg.MinParticipants, secagg.MinThreshold(n))
		next.Phase = PhaseShareKeys
	case PhaseShareKeys:
		n := len(d.commitments)
		if n < len(r.Roster) && !late {
			return false, nil
		}
		if n < enough {
			return true, c.abandon(ctx, now, fmt.Sprintf("%d organizations shared keys, %d needed", n, enough))
		}
		next.U2 = sortedKeys(d.commitments)
		next.Phase = PhaseMaskedInput
	case PhaseMaskedInput:
		n := len(d.inputs)
		if n < len(r.U2) && !late {
			return false, nil
		}
		if n < enough {
			return true, c.abandon(ctx, now, fmt.Sprintf("%d survivors sent masked inputs, %d needed", n, enough))
		}
		next.U3 = sortedKeys(d.inputs)
		next.Phase = PhaseUnmasking
	case PhaseUnmasking:
		n := len(d.reveals)
		if n < len(r.U3) && !late {
			return false, nil
		}
		if n < r.Threshold {
			return true, c.abandon(ctx, now, fmt.Sprintf("%d survivors answered the unmask request, %d needed", n, r.Threshold))
		}
		return true, c.finish(ctx, now)
	default:
		return false, nil
	}
	next.PhaseDeadline = c.phaseDeadline(next, now)
	if err := c.store.SaveFederated(ctx, Change{Rounds: []*RoundState{next}}); err != nil {
		return false, fmt.Errorf("federated: saving round %d: %w", r.Number, err)
	}
	c.round = next
	c.notify()
	c.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "federated round phase", slog.Int("round", r.Number), slog.String("phase", string(next.Phase)))
	return true, nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// abandon closes the round without a model change and opens the next one.
func (c *Coordinator) abandon(ctx context.Context, now time.Time, why string) error {
	done := c.round.clone()
	done.Phase, done.Outcome = PhaseAbandoned, why
	if err := c.store.SaveFederated(ctx, Change{Rounds: []*RoundState{done}}); err != nil {
		return fmt.Errorf("federated: saving round %d: %w", done.Number, err)
	}
	c.round = done
	c.notify()
	c.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "federated round abandoned", slog.Int("round", done.Number), slog.String("reason", why))
	return c.openNext(ctx, now)
}

// finish unmasks the sum, checks it, applies DP noise, and commits the new
// model version, the ledger and the closed round in one change.
func (c *Coordinator) finish(ctx context.Context, now time.Time) error {
	r, d := c.round, c.data
	tr := secagg.Transcript{
		Params:      secagg.Params{Session: r.Session, Dim: r.Dim},
		Threshold:   r.Threshold,
		Roster:      r.Roster,
		Commitments: make(map[string][]byte, len(r.U2)),
		Inputs:      make(map[string]secagg.MaskedInput, len(r.U3)),
	}
	for _, id := range r.U2 {
		tr.Commitments[id] = d.commitments[id]
	}
	for _, id := range r.U3 {
		tr.Inputs[id] = d.inputs[id]
	}
	for _, id := range sortedKeys(d.reveals) {
		tr.Reveals = append(tr.Reveals, d.reveals[id]...)
	}
	sum, err := secagg.Unmask(ctx, tr)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return c.abandon(ctx, now, "unmasking failed: "+err.Error())
	}
	mv, ledger, err := c.aggregate(r, sum, now)
	if err != nil {
		return c.abandon(ctx, now, err.Error())
	}
	done := r.clone()
	done.Phase, done.ResultVersion = PhaseClosed, mv.Version
	done.Outcome = fmt.Sprintf("closed with %d contributors", len(r.U3))
	if err := c.store.SaveFederated(ctx, Change{Rounds: []*RoundState{done}, Model: mv, Ledger: ledger}); err != nil {
		return fmt.Errorf("federated: saving round %d: %w", r.Number, err)
	}
	c.round, c.ledger = done, ledger
	c.notify()
	c.history = append(c.history, *mv)
	c.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "federated round closed", slog.Int("round", r.Number), slog.String("version", mv.Version), slog.Int("contributors", len(r.U3)))
	return c.openNext(ctx, now)
}

// aggregate turns the unmasked sum into the next model version. It runs the
// server-side bounds_check and nan_check on the aggregate: a participant that
// masked an out-of-range vector cannot be identified, but its round is refused.
func (c *Coordinator) aggregate(r *RoundState, sum []uint64, now time.Time) (*ModelVersion, *dp.Ledger, error) {
	q, err := secagg.NewQuantizer(r.ClipNorm, r.FracBits, r.MaxParticipants)
	if err != nil {
		return nil, nil, err
	}
	nw := r.Dim - evalWords
	n := float64(len(r.U3))
	update := q.Dequantize(sum[:nw])
	slack := math.Sqrt(float64(nw)) * n * math.Ldexp(1, -int(r.FracBits))
	if err := BoundsCheck(update, n*r.ClipNorm+slack); err != nil {
		return nil, nil, fmt.Errorf("aggregate %w", err)
	}
	correct, total := int64(sum[nw]), int64(sum[nw+1])
	if correct < 0 || total < correct || total > int64(len(r.U3))*int64(r.MaxEvalRecords) {
		return nil, nil, fmt.Errorf("aggregate %w: evaluation counters out of range", ErrBounds)
	}
	var ledger *dp.Ledger
	var spent float64
	if r.NoiseMultiplier > 0 {
		ledger = c.ledger.Clone()
		if err := ledger.Spend(r.Number, r.NoiseMultiplier); err != nil {
			return nil, nil, err
		}
		spent = ledger.Spent()
		var seed [32]byte
		if _, err := io.ReadFull(c.cfg.Rand, seed[:]); err != nil {
			return nil, nil, fmt.Errorf("noise randomness: %w", err)
		}
		dp.AddGaussianNoise(mrand.New(mrand.NewChaCha8(seed)), update, r.NoiseMultiplier*r.ClipNorm)
	}
	base := c.history[len(c.history)-1]
	if base.Version != r.BaseVersion {
		return nil, nil, fmt.Errorf("%w: round %d started from %s, history ends at %s", ErrStoreMismatch, r.Number, r.BaseVersion, base.Version)
	}
	w := slices.Clone(base.Weights)
	for i := range w {
		w[i] += c.cfg.ServerLearningRate * update[i] / n
	}
	if err := NaNCheck(w); err != nil {
		return nil, nil, err
	}
	h, err := ModelHash(w)
	if err != nil {
		return nil, nil, err
	}
	mv := &ModelVersion{
		Version: versionString(len(c.history)), Round: r.Number, Hash: h, Parent: base.Version,
		Contributors: slices.Clone(r.U3), Weights: w, NoiseMultiplier: r.NoiseMultiplier,
		EpsilonSpent: spent, CreatedAt: now.UTC(),
	}
	if total > 0 {
		mv.Metrics = &Metrics{Accuracy: float64(correct) / float64(total), EvalSamples: int(total), EvaluatedVersion: base.Version}
	}
	return mv, ledger, nil
}

// Submit validates and records one protocol message of org for the current
// round, then lets the round move on if the message completed a phase.
func (c *Coordinator) Submit(ctx context.Context, org string, s Submission) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.cfg.Clock()
	if err := c.advance(ctx, now); err != nil {
		return err
	}
	s = cloneSubmission(s)
	s.Org = org
	if err := c.validate(org, &s); err != nil {
		return err
	}
	if err := c.store.SaveFederated(ctx, Change{Submission: &s}); err != nil {
		return fmt.Errorf("federated: saving submission: %w", err)
	}
	c.apply(&s)
	c.notify()
	return c.advance(ctx, now)
}

func (c *Coordinator) openRound() (*RoundState, error) {
	if c.round == nil || !c.round.Phase.Open() {
		if c.stopped != nil {
			return nil, fmt.Errorf("%w: %w", ErrNoOpenRound, c.stopped)
		}
		return nil, ErrNoOpenRound
	}
	return c.round, nil
}

// validate checks a submission against the round without changing anything.
func (c *Coordinator) validate(org string, s *Submission) error {
	r, err := c.openRound()
	if err != nil {
		return err
	}
	if s.Round != r.Number {
		return &RoundError{Got: s.Round, Current: r.Number}
	}
	if s.ModelVersion != "" && s.ModelVersion != r.BaseVersion {
		return fmt.Errorf("%w: round %d trains from %s, not %s", ErrStaleModel, r.Number, r.BaseVersion, s.ModelVersion)
	}
	set := 0
	for _, b := range []bool{s.Keys != nil, s.Shares != nil, s.Masked != nil, s.Reveals != nil} {
		if b {
			set++
		}
	}
	if set != 1 {
		return fmt.Errorf("%w: exactly one message per submission", ErrInvalidSubmission)
	}
	d := c.data
	switch {
	case s.Keys != nil:
		if r.Phase != PhaseAdvertiseKeys {
			return fmt.Errorf("%w: keys in phase %s", ErrWrongPhase, r.Phase)
		}
		if s.Keys.ID != org {
			return fmt.Errorf("%w: keys advertised for another organization", ErrInvalidSubmission)
		}
		if err := s.Keys.Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidSubmission, err)
		}
		for _, k := range d.keys {
			if k.ID == org {
				return ErrDuplicate
			}
			if bytes.Equal(k.Cipher, s.Keys.Cipher) || bytes.Equal(k.Mask, s.Keys.Mask) ||
				bytes.Equal(k.Cipher, s.Keys.Mask) || bytes.Equal(k.Mask, s.Keys.Cipher) {
				return fmt.Errorf("%w: public key already advertised", ErrInvalidSubmission)
			}
		}
		if len(d.keys) >= r.MaxParticipants {
			return ErrRoundFull
		}
	case s.Shares != nil:
		if r.Phase != PhaseShareKeys {
			return fmt.Errorf("%w: shares in phase %s", ErrWrongPhase, r.Phase)
		}
		if !slices.ContainsFunc(r.Roster, func(k secagg.PublicKeys) bool { return k.ID == org }) {
			return ErrNotParticipant
		}
		if _, dup := d.commitments[org]; dup {
			return ErrDuplicate
		}
		m := s.Shares
		if m.From != org || len(m.Commitment) != 32 || len(m.Shares) != len(r.Roster)-1 {
			return fmt.Errorf("%w: share message must carry a 32-byte commitment and one share per other participant", ErrInvalidSubmission)
		}
		to := map[string]bool{}
		for _, es := range m.Shares {
			if es.From != org || es.To == org || to[es.To] || len(es.Ciphertext) > 1024 ||
				!slices.ContainsFunc(r.Roster, func(k secagg.PublicKeys) bool { return k.ID == es.To }) {
				return fmt.Errorf("%w: share addressing", ErrInvalidSubmission)
			}
			to[es.To] = true
		}
	case s.Masked != nil:
		if r.Phase != PhaseMaskedInput {
			return fmt.Errorf("%w: masked input in phase %s", ErrWrongPhase, r.Phase)
		}
		if !slices.Contains(r.U2, org) {
			return ErrNotParticipant
		}
		if _, dup := d.inputs[org]; dup {
			return ErrDuplicate
		}
		if len(s.Masked) != r.Dim {
			return fmt.Errorf("%w: masked vector of %d words, round expects %d", ErrInvalidSubmission, len(s.Masked), r.Dim)
		}
	case s.Reveals != nil:
		if r.Phase != PhaseUnmasking {
			return fmt.Errorf("%w: shares revealed in phase %s", ErrWrongPhase, r.Phase)
		}
		if !slices.Contains(r.U3, org) {
			return ErrNotParticipant
		}
		if _, dup := d.reveals[org]; dup {
			return ErrDuplicate
		}
		if len(s.Reveals) != len(r.U2) {
			return fmt.Errorf("%w: one revealed share per key-sharing participant expected", ErrInvalidSubmission)
		}
		// Shamir x of org: its rank in the sorted roster.
		x := 1 + slices.IndexFunc(r.Roster, func(k secagg.PublicKeys) bool { return k.ID == org })
		of := map[string]bool{}
		for _, rs := range s.Reveals {
			want := secagg.MaskKey
			if slices.Contains(r.U3, rs.Of) {
				want = secagg.SelfMask
			}
			if rs.From != org || rs.Kind != want || of[rs.Of] || !slices.Contains(r.U2, rs.Of) {
				return fmt.Errorf("%w: revealed share addressing", ErrInvalidSubmission)
			}
			if _, err := rs.Share.MarshalBinary(); err != nil || int(rs.Share.X) != x {
				return fmt.Errorf("%w: malformed revealed share", ErrInvalidSubmission)
			}
			of[rs.Of] = true
		}
	}
	return nil
}

// apply records a validated submission in memory.
func (c *Coordinator) apply(s *Submission) {
	d := c.data
	switch {
	case s.Keys != nil:
		d.keys = append(d.keys, *s.Keys)
	case s.Shares != nil:
		d.commitments[s.Org] = s.Shares.Commitment
		for _, es := range s.Shares.Shares {
			d.inbox[es.To] = append(slices.Clip(d.inbox[es.To]), es)
		}
	case s.Masked != nil:
		d.inputs[s.Org] = s.Masked
	case s.Reveals != nil:
		d.reveals[s.Org] = s.Reveals
	}
}

// RoundView is what an organization sees of the current round: the public
// parameters, the starting model, and what the current phase asks of it.
type RoundView struct {
	Round           int                     `json:"round"`
	Phase           Phase                   `json:"phase"`
	TaskHash        string                  `json:"task_hash"`
	Base            ModelVersion            `json:"base"`
	Session         []byte                  `json:"session"`
	Dim             int                     `json:"dim"`
	ClipNorm        float64                 `json:"clip_norm"`
	FracBits        uint                    `json:"frac_bits"`
	MaxParticipants int                     `json:"max_participants"`
	MaxEvalRecords  int                     `json:"max_eval_records"`
	Threshold       int                     `json:"threshold,omitempty"`
	PhaseDeadline   time.Time               `json:"phase_deadline"`
	Deadline        time.Time               `json:"deadline"`
	Participants    int                     `json:"participants"`     // organizations in the round so far
	Roster          []secagg.PublicKeys     `json:"roster,omitempty"` // from share_keys on
	U2              []string                `json:"u2,omitempty"`     // from masked_input on
	Inbox           []secagg.EncryptedShare `json:"inbox,omitempty"`  // shares addressed to the caller
	U3              []string                `json:"u3,omitempty"`     // in unmasking
	Done            bool                    `json:"done"`             // the caller has answered this phase
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
		MaxParticipants: r.MaxParticipants, MaxEvalRecords: r.MaxEvalRecords, Threshold: r.Threshold,
		PhaseDeadline: r.PhaseDeadline, Deadline: r.Deadline, Participants: participants(r, d),
	}
	// The view shares no memory with the coordinator's state.
	v.Base.Weights = slices.Clone(v.Base.Weights)
	v.Base.Contributors = slices.Clone(v.Base.Contributors)
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

// cloneSubmission copies everything a caller could still mutate after
// handing the submission over.
func cloneSubmission(s Submission) Submission {
	if s.Keys != nil {
		k := cloneKeys([]secagg.PublicKeys{*s.Keys})[0]
		s.Keys = &k
	}
	if s.Shares != nil {
		m := *s.Shares
		m.Commitment = slices.Clone(m.Commitment)
		m.Shares = slices.Clone(m.Shares)
		for i := range m.Shares {
			m.Shares[i].Ciphertext = slices.Clone(m.Shares[i].Ciphertext)
		}
		s.Shares = &m
	}
	s.Masked = slices.Clone(s.Masked)
	if s.Reveals != nil {
		s.Reveals = slices.Clone(s.Reveals)
		for i := range s.Reveals {
			s.Reveals[i].Share.Y = slices.Clone(s.Reveals[i].Share.Y)
		}
	}
	return s
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

// evalCounters returns the two counter words for an evaluation.
func evalCounters(e Evaluation) [evalWords]uint64 {
	return [evalWords]uint64{uint64(e.Correct), uint64(e.Total)}
}
