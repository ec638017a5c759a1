package federated

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/healthagents/healthagents/federated/dp"
	"github.com/healthagents/healthagents/federated/secagg"
)

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
	ended    *RoundEnd  // how the last round that ended here ended
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
	seedCommits map[string]map[string][]byte // proved rounds: by sender, then peer
}

func newRoundData() *roundData {
	return &roundData{
		commitments: map[string][]byte{},
		inbox:       map[string][]secagg.EncryptedShare{},
		inputs:      map[string]secagg.MaskedInput{},
		reveals:     map[string][]secagg.RevealedShare{},
		seedCommits: map[string]map[string][]byte{},
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
	if err := c.resume(ctx, c.cfg.Clock()); err != nil {
		return nil, err
	}
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
	moveMetrics(c.history)
	if sc := c.history[len(c.history)-1].Scaling; sc != nil {
		if _, err := c.cfg.Task.WithScaling(sc); err != nil {
			return fmt.Errorf("%w: the stored learned scaling does not fit the task: %w", ErrStoreMismatch, err)
		}
	}
	if snap.Round == nil {
		return nil
	}
	if snap.Round.TaskHash != c.taskHash {
		return fmt.Errorf("%w: task differs from the stored round's", ErrStoreMismatch)
	}
	c.round, c.data = snap.Round.clone(), newRoundData()
	if !c.round.Phase.Open() {
		c.ended = endOf(c.round)
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
	var z float64
	var stop error
	if next >= c.cfg.MaxRounds {
		stop = fmt.Errorf("%w: %d", ErrMaxRounds, c.cfg.MaxRounds)
	} else if p := c.cfg.Privacy; p != nil {
		z = p.NoiseMultiplier
		if _, err := c.ledger.Check(z); err != nil { // privacy_check
			stop = fmt.Errorf("%w: %w", ErrBudgetExhausted, err)
		}
	}
	if stop != nil && !c.finalEvaluationDue() {
		c.stopped = stop
		return nil
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
		MaxEvalRecords: c.cfg.MaxEvalRecords, NoiseMultiplier: z, Proved: c.cfg.Proofs != nil,
		OpenedAt: now.UTC(), Deadline: now.Add(c.cfg.RoundTimeout).UTC(), Alive: now.UTC(),
	}
	if c.cfg.Task.Learns() && base.Scaling == nil {
		// The scaling is not learned yet: this is the statistics round. It
		// is masked in the 64-bit ring and takes no proof or noise.
		f, err := statsFracBits(c.cfg.MaxParticipants, c.cfg.MaxEvalRecords)
		if err != nil {
			return err
		}
		r.Kind, r.Dim, r.FracBits = RoundStatistics, statsWords*len(c.cfg.Task.learned()), f
		r.NoiseMultiplier, r.Proved = 0, false
	}
	if stop != nil {
		// Training is over: one more round measures the final model.
		r.Kind, r.NoiseMultiplier = RoundEvaluation, 0
	}
	if p := c.cfg.Privacy; p != nil && p.Distributed && r.NoiseMultiplier > 0 {
		r.NoiseShare = noiseShare(r.NoiseMultiplier, r.ClipNorm, r.FracBits, r.Dim-evalWords, c.cfg.MinParticipants)
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

// finalEvaluationDue reports whether training is over with a final model
// no round has evaluated: a trained version (not the initial model, its
// scaling learned if the task learns any), and the last round was not
// already the evaluation round.
func (c *Coordinator) finalEvaluationDue() bool {
	last := c.history[len(c.history)-1]
	return c.round != nil && c.round.Kind != RoundEvaluation && last.Round >= 0 && last.Metrics == nil &&
		(!c.cfg.Task.Learns() || last.Scaling != nil)
}

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
//
// Advance is also the heartbeat: while a round is open it stores the round
// with the time (Config.Heartbeat apart), so a restart knows how long the
// coordinator was down. Only this timer path writes it — reads (Status,
// View, History) never wait on a heartbeat — and each write is bounded by
// half a heartbeat, so a stalled database holds the coordinator's lock for
// that long at most and is reported as an error to the caller's loop.
func (c *Coordinator) Advance(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.cfg.Clock()
	if c.round != nil && c.round.Phase.Open() {
		if err := c.heartbeat(ctx, now); err != nil {
			return err
		}
	}
	return c.advance(ctx, now)
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

// heartbeat stores the open round with Alive = now when the last one is
// Config.Heartbeat old.
func (c *Coordinator) heartbeat(ctx context.Context, now time.Time) error {
	if now.Sub(c.round.Alive) < c.cfg.Heartbeat {
		return nil
	}
	r := c.round.clone()
	r.Alive = now.UTC()
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Heartbeat/2)
	defer cancel()
	if err := c.store.SaveFederated(ctx, Change{Rounds: []*RoundState{r}}); err != nil {
		return fmt.Errorf("federated: saving round %d: %w", r.Number, err)
	}
	c.round = r
	return nil
}

// resume extends the open round's deadlines by the time the coordinator
// was down: since the round's last heartbeat (or save) until now. Phase
// and round times are coordinator uptime, so participants that waited out
// a restart still have the time they had.
func (c *Coordinator) resume(ctx context.Context, now time.Time) error {
	r := c.round
	if r == nil || !r.Phase.Open() || r.Alive.IsZero() {
		return nil
	}
	down := now.Sub(r.Alive)
	if down <= 0 {
		return nil
	}
	next := r.clone()
	next.PhaseDeadline, next.Deadline, next.Alive = r.PhaseDeadline.Add(down), r.Deadline.Add(down), now.UTC()
	if err := c.store.SaveFederated(ctx, Change{Rounds: []*RoundState{next}}); err != nil {
		return fmt.Errorf("federated: saving round %d: %w", r.Number, err)
	}
	c.round = next
	c.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "federated round resumed", slog.Int("round", r.Number), slog.String("phase", string(r.Phase)), slog.Duration("downtime", down))
	return nil
}

// refusedOf counts the round's refused organizations among set (a refusal
// made in an earlier phase is no member of a later phase's set).
func refusedOf(r *RoundState, set []string) int {
	n := 0
	for _, org := range r.Refused {
		if slices.Contains(set, org) {
			n++
		}
	}
	return n
}

func rosterIDs(r *RoundState) []string {
	ids := make([]string, len(r.Roster))
	for i, k := range r.Roster {
		ids[i] = k.ID
	}
	return ids
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
		if n+refusedOf(r, rosterIDs(r)) < len(r.Roster) && !late {
			return false, nil
		}
		if n < enough {
			return true, c.abandon(ctx, now, fmt.Sprintf("%d organizations shared keys, %d needed", n, enough))
		}
		next.U2 = sortedKeys(d.commitments)
		next.Phase = PhaseMaskedInput
	case PhaseMaskedInput:
		n := len(d.inputs)
		if n+refusedOf(r, r.U2) < len(r.U2) && !late {
			return false, nil
		}
		if n < enough {
			return true, c.abandon(ctx, now, fmt.Sprintf("%d survivors sent masked inputs, %d needed", n, enough))
		}
		next.U3 = sortedKeys(d.inputs)
		next.Phase = PhaseUnmasking
	case PhaseUnmasking:
		n := len(d.reveals)
		if n+refusedOf(r, r.U3) < len(r.U3) && !late {
			return false, nil
		}
		if n < r.Threshold {
			return true, c.abandon(ctx, now, fmt.Sprintf("%d survivors answered the unmask request, %d needed", n, r.Threshold))
		}
		return true, c.finish(ctx, now)
	default:
		return false, nil
	}
	next.PhaseDeadline, next.Alive = c.phaseDeadline(next, now), now.UTC()
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
	c.round, c.ended = done, endOf(done)
	c.notify()
	c.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "federated round abandoned", slog.Int("round", done.Number), slog.String("reason", why))
	return c.openNext(ctx, now)
}

// moveMetrics puts figures stored the old way — on the version made by the
// round that measured them, naming the version they measured — on the
// version they measure.
func moveMetrics(h []ModelVersion) {
	for i := range h {
		m := h[i].Metrics
		if m == nil || m.EvaluatedVersion == h[i].Version {
			continue
		}
		for j := range h {
			if h[j].Version == m.EvaluatedVersion && (h[j].Metrics == nil || h[j].Metrics.EvaluatedVersion != h[j].Version) {
				h[i].Metrics, h[j].Metrics = h[j].Metrics, m
				break
			}
		}
	}
}
