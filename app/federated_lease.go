package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/server"
	"github.com/healthagents/healthagents/store"
)

// ErrNotLeader is wrapped by the 503 a replica answers round operations
// with while another replica holds the federated lease.
var ErrNotLeader = errors.New("app: the federated coordinator runs on another replica")

// leasedCoordinator is the federated coordinator of a replica set
// (WithLeaderLease): the replica holding the task's lease runs a
// *federated.Coordinator, resumed from the database when it takes the
// lease; on the others round operations (View, Submit) answer 503 —
// retried, they reach the leader through the load balancer — while Status
// and History are read from the database. It implements
// server.FederatedCoordinator and federated.RoundAPI.
type leasedCoordinator struct {
	leases *store.LeaseStore
	name   string
	holder string
	ttl    time.Duration
	fs     *store.FederatedStore
	cfg    federated.Config
	logger *slog.Logger

	mu        sync.Mutex
	active    *federated.Coordinator
	heldUntil time.Time
	stopRun   func()
	changed   chan struct{} // closed and replaced when leadership changes

	cancel context.CancelFunc
	done   chan struct{}
}

// step takes or renews the lease and becomes leader or follower
// accordingly. An error opening the coordinator as new leader is returned
// (and the lease given up).
func (l *leasedCoordinator) step(ctx context.Context) error {
	now := time.Now()
	held, epoch, err := l.leases.Acquire(ctx, l.name, l.holder, l.ttl)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.logger.Warn("federated lease not renewed", "err", err)
		// Without a renewal the lease runs out at heldUntil; stop leading
		// a little before, so two coordinators never overlap.
		held = l.active != nil && time.Now().Before(l.heldUntil.Add(-l.ttl/3))
	} else if held {
		l.heldUntil = now.Add(l.ttl)
	}
	switch {
	case held && l.active == nil:
		// Every write of this coordinator is fenced by the lease as taken
		// now: once it passes to another replica, the writes are refused.
		coord, err := federated.NewCoordinator(ctx, l.fs.WithLeaseFence(l.name, l.holder, epoch), l.cfg)
		if err != nil {
			_ = l.leases.Release(context.WithoutCancel(ctx), l.name, l.holder)
			return fmt.Errorf("federated coordinator: %w", err)
		}
		// Opening may have taken a while: lead only if the lease is still
		// ours (renewed now), else leave it to whoever took it.
		if still, _, err := l.leases.Acquire(ctx, l.name, l.holder, l.ttl); err != nil || !still {
			l.logger.Warn("federated coordinator: the lease ran out while opening; following", "err", err)
			return nil
		}
		l.heldUntil = time.Now().Add(l.ttl)
		l.active, l.stopRun = coord, runDeadlines(ctx, coord, l.logger)
		l.logger.Info("federated coordinator: this replica leads", "lease", l.name)
		l.notify()
	case !held && l.active != nil:
		l.stopRun()
		l.active, l.stopRun = nil, nil
		l.logger.Info("federated coordinator: another replica leads", "lease", l.name)
		l.notify()
	}
	return nil
}

// notify wakes Changed's waiters. Callers hold l.mu.
func (l *leasedCoordinator) notify() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// start tries the lease every ttl/3, at least every second, until close:
// the leader renews it, a follower takes it as soon as it is free.
func (l *leasedCoordinator) start() {
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel, l.done = cancel, make(chan struct{})
	go func() {
		defer close(l.done)
		t := time.NewTicker(min(l.ttl/3, time.Second))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := l.step(ctx); err != nil && ctx.Err() == nil {
					l.logger.Warn("federated coordinator: taking over failed; retrying", "err", err)
				}
			}
		}
	}()
}

// close stops renewing, stops the coordinator and releases the lease, so
// another replica takes over at once.
func (l *leasedCoordinator) close() {
	if l.cancel != nil {
		l.cancel()
		<-l.done
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.active != nil {
		l.stopRun()
		l.active, l.stopRun = nil, nil
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := l.leases.Release(ctx, l.name, l.holder); err != nil {
			l.logger.Warn("federated lease not released; another replica takes over when it runs out", "err", err)
		}
	}
}

func (l *leasedCoordinator) current() *federated.Coordinator {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.active
}

// elsewhere is the answer of round operations on a follower.
func elsewhere() error {
	return healthagents.WrapError(healthagents.CodeUnavailable, ErrNotLeader, server.DetailFederatedElsewhere)
}

// LeaderAddress implements server.FederatedLeader: the address the
// replica coordinating the task advertised (REPLICA_URL), or "" when this
// replica coordinates, nobody does, or the leader advertised none.
func (l *leasedCoordinator) LeaderAddress(ctx context.Context) (string, error) {
	if l.current() != nil {
		return "", nil
	}
	holder, addr, err := l.leases.Leader(ctx, l.name)
	if err != nil || holder == l.holder {
		return "", err
	}
	return addr, nil
}

var _ server.FederatedLeader = (*leasedCoordinator)(nil)

// View implements federated.RoundAPI.
func (l *leasedCoordinator) View(ctx context.Context, org string) (*federated.RoundView, error) {
	if c := l.current(); c != nil {
		return c.View(ctx, org)
	}
	return nil, elsewhere()
}

// Submit implements federated.RoundAPI.
func (l *leasedCoordinator) Submit(ctx context.Context, org string, s federated.Submission) error {
	if c := l.current(); c != nil {
		return c.Submit(ctx, org, s)
	}
	return elsewhere()
}

// RefuseInput implements server.FederatedCoordinator: the leader's.
func (l *leasedCoordinator) RefuseInput(ctx context.Context, org string, phase federated.Phase) error {
	if c := l.current(); c != nil {
		return c.RefuseInput(ctx, org, phase)
	}
	return elsewhere()
}

// Changed lets hosted participants wait for the leader's next state
// change, or for a change of leader.
func (l *leasedCoordinator) Changed() <-chan struct{} {
	l.mu.Lock()
	c, own := l.active, l.changed
	l.mu.Unlock()
	if c == nil {
		return own
	}
	theirs := c.Changed()
	out := make(chan struct{})
	go func() {
		select {
		case <-theirs:
		case <-own:
		}
		close(out)
	}()
	return out
}

// History implements server.FederatedCoordinator: the leader's, or the
// model history as the database holds it.
func (l *leasedCoordinator) History(ctx context.Context) ([]federated.ModelVersion, error) {
	if c := l.current(); c != nil {
		return c.History(ctx)
	}
	snap, err := l.fs.LoadFederated(ctx)
	if err != nil {
		return nil, err
	}
	if snap == nil || len(snap.History) == 0 {
		return nil, elsewhere()
	}
	return snap.History, nil
}

// Status implements server.FederatedCoordinator: the leader's, or the
// round as the database holds it (its participants counted from the
// submissions logged so far).
func (l *leasedCoordinator) Status(ctx context.Context) (federated.Status, error) {
	if c := l.current(); c != nil {
		return c.Status(ctx)
	}
	snap, err := l.fs.LoadFederated(ctx)
	if err != nil {
		return federated.Status{}, err
	}
	if snap == nil || len(snap.History) == 0 {
		return federated.Status{}, elsewhere()
	}
	s := federated.Status{Version: snap.History[len(snap.History)-1].Version}
	if r := snap.Round; r != nil {
		s.Round, s.Phase = r.Number, r.Phase
		var orgs []string
		for _, sub := range snap.Submissions {
			if !slices.Contains(orgs, sub.Org) {
				orgs = append(orgs, sub.Org)
			}
		}
		s.Participants = len(orgs)
	}
	return s, nil
}

// replicaIDFile keeps this replica's lease holder id under DATA_DIR, so a
// restarted replica takes its own lease back at once.
const replicaIDFile = "replica.id"

// replicaID returns the id this replica holds leases under: kept in
// DATA_DIR/replica.id (made on first start). Replicas have their own
// DATA_DIR; copying one wholesale to start another would give both one id:
// copy DATA_DIR/zkp only.
func replicaID(dataDir string) (string, error) {
	path := filepath.Join(dataDir, replicaIDFile)
	if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
		return string(b), nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	host, _ := os.Hostname()
	id := fmt.Sprintf("%s-%d-%d", host, os.Getpid(), time.Now().UnixNano())
	if err := WriteFileAtomic(path, []byte(id), 0o600); err != nil {
		return "", fmt.Errorf("keeping the replica id: %w", err)
	}
	return id, nil
}

// Privacy reports the run's privacy budget (GET /api/v1/federated/task):
// the leader's, or the ledger as the database holds it.
func (l *leasedCoordinator) Privacy() federated.PrivacyStatus {
	if c := l.current(); c != nil {
		return c.Privacy()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	snap, err := l.fs.LoadFederated(ctx)
	if err != nil || snap == nil || snap.Ledger == nil {
		return federated.PrivacyStatus{}
	}
	spent := snap.Ledger.Spent()
	return federated.PrivacyStatus{
		Enabled: true, Epsilon: snap.Ledger.Budget.Epsilon, Delta: snap.Ledger.Budget.Delta,
		EpsilonSpent: spent, EpsilonLeft: max(0, snap.Ledger.Budget.Epsilon-spent), RoundsReleased: len(snap.Ledger.Entries),
		Noise: l.cfg.Noise(),
	}
}
