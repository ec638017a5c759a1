package federated

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/healthagents/healthagents/record"
)

// Errors of ParticipantHost.
var (
	// ErrAlreadyHosted: the organization's hosted participant already
	// takes part in the round.
	ErrAlreadyHosted = errors.New("federated: the organization already takes part in this round")
	// ErrRoundOver: the hosted participant's round moved on.
	ErrRoundOver = errors.New("federated: the hosted participant's round is over")
	// ErrHostClosed is returned by Join after Close.
	ErrHostClosed = errors.New("federated: participant host closed")
)

// ParticipantHost runs, inside the service, the Participant of an
// organization that submitted encrypted records to POST
// /submit-federated-update: it trains on the decrypted records and walks the
// round's secure-aggregation phases against the coordinator. Records and
// the participant's secrets stay in memory only; a service restart makes
// the hosted participant a dropout of its round. Each hosted participant
// takes part in the one round it joined, then ends.
type ParticipantHost struct {
	api    RoundAPI
	task   Task
	poll   time.Duration
	logger *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	hosted map[string]int // organization → round
	closed bool
}

// HostOption configures a ParticipantHost.
type HostOption func(*ParticipantHost) error

// WithHostTask sets the diagnosis task (default DefaultTask); it
// must be the coordinator's.
func WithHostTask(t Task) HostOption {
	return func(h *ParticipantHost) error { h.task = t; return nil }
}

// WithHostPoll sets how often a hosted participant looks at the round when
// the coordinator cannot signal changes (default 1 s).
func WithHostPoll(d time.Duration) HostOption {
	return func(h *ParticipantHost) error {
		if d <= 0 {
			return errors.New("federated: host poll interval must be positive")
		}
		h.poll = d
		return nil
	}
}

// WithHostLogger sets the logger of step failures (never record data).
func WithHostLogger(l *slog.Logger) HostOption {
	return func(h *ParticipantHost) error { h.logger = l; return nil }
}

// NewParticipantHost returns a host of participants against api (usually
// the *Coordinator itself). It starts a goroutine per Join;
// Close stops them.
func NewParticipantHost(api RoundAPI, opts ...HostOption) (*ParticipantHost, error) {
	if api == nil {
		return nil, errors.New("federated: participant host needs a RoundAPI")
	}
	h := &ParticipantHost{api: api, task: DefaultTask(), poll: time.Second, hosted: map[string]int{}}
	for _, o := range opts {
		if err := o(h); err != nil {
			return nil, err
		}
	}
	if h.logger == nil {
		h.logger = slog.New(slog.DiscardHandler)
	}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	return h, nil
}

// Join prepares org's participant on recs, advertises its keys for round
// and leaves it running until that round ends. A second Join of org while
// its participant runs is refused.
func (h *ParticipantHost) Join(ctx context.Context, org string, round int, recs []*record.Record) (*HostedJoin, error) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, ErrHostClosed
	}
	if _, ok := h.hosted[org]; ok {
		h.mu.Unlock()
		return nil, ErrAlreadyHosted
	}
	h.hosted[org] = round
	h.mu.Unlock()
	release := func() {
		h.mu.Lock()
		delete(h.hosted, org)
		h.mu.Unlock()
	}
	p, err := NewParticipant(ParticipantConfig{Org: org, Task: h.task, Logger: h.logger}, recs)
	if err != nil {
		release()
		return nil, err // ErrTask: no record carries a label of the task
	}
	g := &pinnedRound{api: h.api, round: round}
	v, err := p.Step(ctx, g)
	if err == nil && (v.Round != round || v.Phase != PhaseAdvertiseKeys || v.Done) {
		err = fmt.Errorf("%w: round %d moved on before the keys were advertised", ErrWrongPhase, round)
	}
	if err != nil {
		release()
		return nil, err
	}
	labelled := len(recs)
	if _, skipped, err := h.task.Examples(recs); err == nil {
		labelled -= skipped
	}
	res := &HostedJoin{Round: round, Participants: v.Participants + 1, ModelHash: v.Base.Hash, ModelVersion: v.Base.Version, Records: labelled}
	// The phase after the keys, read before org's participant runs: the
	// round cannot close without org's next message, so only a phase
	// deadline can end it in between.
	res.Phase = PhaseClosed
	after, err := h.api.View(ctx, org)
	switch {
	case err == nil && after.Round == round:
		res.Participants, res.Phase = after.Participants, after.Phase
	case err == nil && after.Previous != nil && after.Previous.Round == round:
		res.Phase = Phase(after.Previous.Outcome) // closed or abandoned
	}
	// Otherwise the round ended out of view; PhaseClosed says that it
	// takes no more participants (its outcome: GET …/rounds/{round}).
	// Never the advertise_keys of the view before the keys: a caller would
	// submit to a round that is gone.
	h.wg.Add(1)
	go h.run(p, g, release)
	return res, nil
}

// HostedJoin is what Join reports: the round joined, the organizations in
// it, the model trained from, the round's phase and how many of the records
// carried a label of the task.
type HostedJoin struct {
	Round        int
	Participants int
	ModelHash    string
	ModelVersion string
	Phase        Phase
	Records      int
}

// Hosted returns how many participants are running.
func (h *ParticipantHost) Hosted() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.hosted)
}

func (h *ParticipantHost) run(p *Participant, g *pinnedRound, release func()) {
	defer h.wg.Done()
	defer release()
	notifier, _ := h.api.(changeNotifier)
	for {
		var changed <-chan struct{}
		if notifier != nil {
			changed = notifier.Changed() // before Step, so no change is missed
		}
		v, err := p.Step(h.ctx, g)
		switch {
		case h.ctx.Err() != nil, errors.Is(err, ErrRoundOver), errors.Is(err, ErrNoOpenRound):
			return
		case err == nil && v.Round != g.round:
			return
		case err != nil && !errors.Is(err, ErrDuplicate):
			h.logger.Warn("hosted federated participant: step failed; retrying", "round", g.round, "err", err)
		}
		t := time.NewTimer(h.poll)
		select {
		case <-h.ctx.Done():
		case <-changed:
		case <-t.C:
		}
		t.Stop()
	}
}

// Close stops every hosted participant (each becomes a dropout of its
// round) and waits for them.
func (h *ParticipantHost) Close() error {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.cancel()
	h.wg.Wait()
	return nil
}

// pinnedRound lets a hosted participant act in one round only: a message
// for any later round is dropped before it reaches the coordinator.
type pinnedRound struct {
	api   RoundAPI
	round int
}

func (p *pinnedRound) View(ctx context.Context, org string) (*RoundView, error) {
	return p.api.View(ctx, org)
}

func (p *pinnedRound) Submit(ctx context.Context, org string, s Submission) error {
	if s.Round != p.round {
		return ErrRoundOver
	}
	return p.api.Submit(ctx, org, s)
}
