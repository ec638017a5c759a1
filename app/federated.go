package app

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/server"
	"github.com/healthagents/healthagents/store"
)

// Federated is the federated-learning coordinator of the service and what
// serves it over HTTP: the store-backed coordinator, the participants the
// service hosts for root-family submitters, and the organization registry.
type Federated struct {
	// Coordinator is the coordinator this process runs. Under
	// WithLeaderLease it is the one opened at start, nil when another
	// replica held the lease then; API and Host always reach the current
	// one.
	Coordinator *federated.Coordinator
	Host        *federated.ParticipantHost
	API         *server.FederatedAPI

	stop func()
	once sync.Once
}

// deadlineTick is how often the coordinator applies phase deadlines when no
// participant calls in.
const deadlineTick = 5 * time.Second

// FederatedOption configures OpenFederated.
type FederatedOption func(*fedOptions)

type fedOptions struct {
	holder string
	ttl    time.Duration
	// WithReplicaURL
	address string
	// WithTasks
	tasks  []*federated.TaskFile
	base   *federated.RunSettings
	proofs func(cfg *federated.Config) (proofKeysFunc, error)
}

// WithLeaderLease runs the coordinator only while this process holds the
// task's lease in the database (store.LeaseStore, "federated:<task
// hash>"), as holder, renewing it every ttl/3 (at least every second):
// among replicas on one
// database, one coordinator per task. Another replica takes the lease, and
// the coordinator (resumed from the database), over within ttl of the
// holder's death, at once after its Close. holder must differ between
// replicas and should stay the same across a replica's restarts.
func WithLeaderLease(holder string, ttl time.Duration) FederatedOption {
	return func(o *fedOptions) { o.holder, o.ttl = holder, ttl }
}

// WithReplicaURL advertises base (REPLICA_URL: this replica's address as
// the other replicas reach it) with every lease this replica holds, so
// that the others forward the round protocol of its tasks here instead of
// answering 503. Only with WithLeaderLease.
func WithReplicaURL(base string) FederatedOption {
	return func(o *fedOptions) { o.address = base }
}

// OpenFederated builds the coordinator over db with cfg (zero fields take
// the specification's defaults: 3 participants, 30-minute rounds, 100
// rounds, DP with epsilon 0.1 and delta 1e-5), resuming any round kept in
// db, and starts the deadline ticker. Close stops it and the hosted
// participants.
func OpenFederated(ctx context.Context, db *store.DB, cfg federated.Config, logger *slog.Logger, opts ...FederatedOption) (*Federated, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Logger == nil {
		cfg.Logger = logger
	}
	var o fedOptions
	for _, opt := range opts {
		opt(&o)
	}
	fs, err := store.NewFederatedStore(db)
	if err != nil {
		return nil, err
	}
	task := cfg.Task
	if task.Name == "" && len(task.Features) == 0 {
		task = federated.DefaultTask()
	}
	orgs, err := store.NewOrganizationStore(db)
	if err != nil {
		return nil, err
	}
	f, err := openDefaultFederated(ctx, db, fs, cfg, task, orgs, logger, o)
	if err != nil || o.base == nil {
		return f, err
	}
	var leases *store.LeaseStore
	if o.holder != "" {
		if leases, err = store.NewLeaseStore(db); err != nil {
			f.Close()
			return nil, err
		}
		leases = leases.WithAddress(o.address)
	}
	tasks, err := openTasks(ctx, fs, leases, o, task.Name, logger)
	if err != nil {
		f.Close()
		return nil, err
	}
	f.API.Tasks = tasks
	stopDefault := f.stop
	f.stop = func() {
		tasks.close()
		stopDefault()
	}
	return f, nil
}

// openDefaultFederated opens the default task's coordinator (its rows are
// the store's task "").
func openDefaultFederated(ctx context.Context, db *store.DB, fs *store.FederatedStore, cfg federated.Config, task federated.Task,
	orgs federated.OrganizationRegistry, logger *slog.Logger, o fedOptions) (*Federated, error) {
	if o.holder == "" {
		return openSingleFederated(ctx, fs, cfg, task, orgs, logger)
	}
	leases, err := store.NewLeaseStore(db)
	if err != nil {
		return nil, err
	}
	lc := &leasedCoordinator{
		leases: leases.WithAddress(o.address), name: "federated:" + task.Hash(), holder: o.holder, ttl: o.ttl,
		fs: fs, cfg: cfg, logger: logger, changed: make(chan struct{}),
	}
	if err := lc.step(ctx); err != nil {
		return nil, err
	}
	host, err := federated.NewParticipantHost(lc, federated.WithHostTask(task), federated.WithHostLogger(logger))
	if err != nil {
		lc.close()
		return nil, err
	}
	lc.start()
	f := &Federated{Coordinator: lc.current(), Host: host,
		API: &server.FederatedAPI{Coordinator: lc, Organizations: orgs, Host: host}}
	f.stop = func() {
		host.Close()
		lc.close()
	}
	return f, nil
}

// openSingleFederated runs the coordinator in this process unconditionally
// (one process per database).
func openSingleFederated(ctx context.Context, fs *store.FederatedStore, cfg federated.Config, task federated.Task,
	orgs federated.OrganizationRegistry, logger *slog.Logger) (*Federated, error) {
	coord, err := federated.NewCoordinator(ctx, fs, cfg)
	if err != nil {
		return nil, fmt.Errorf("federated coordinator: %w", err)
	}
	host, err := federated.NewParticipantHost(coord, federated.WithHostTask(task), federated.WithHostLogger(logger))
	if err != nil {
		return nil, err
	}
	stopRun := runDeadlines(ctx, coord, logger)
	f := &Federated{Coordinator: coord, Host: host,
		API: &server.FederatedAPI{Coordinator: coord, Organizations: orgs, Host: host}}
	f.stop = func() {
		stopRun()
		host.Close()
	}
	return f, nil
}

// runDeadlines applies coord's phase deadlines every deadlineTick until the
// returned stop is called (it waits for the loop to end).
func runDeadlines(ctx context.Context, coord *federated.Coordinator, logger *slog.Logger) (stop func()) {
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for runCtx.Err() == nil {
			if err := coord.Run(runCtx, deadlineTick); err != nil && runCtx.Err() == nil {
				logger.Warn("federated coordinator: applying deadlines failed; retrying", "err", err)
				select {
				case <-runCtx.Done():
				case <-time.After(deadlineTick):
				}
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// Close stops the deadline ticker and the hosted participants (each becomes
// a dropout of its round; the round itself is kept in the store) and, under
// WithLeaderLease, gives the lease up.
func (f *Federated) Close() error {
	f.once.Do(f.stop)
	return nil
}

// federatedLeaseTTL is how long a replica's federated lease lasts without
// renewal: the longest a dead leader's rounds wait for a successor
// (Config.FederatedLease, in tests, replaces it).
const federatedLeaseTTL = 15 * time.Second

// openFederated opens the coordinator on a.DB with the task and run of the
// settings (FEDERATED_TASK and FEDERATED_*; unset, the specification's: the
// diagnosis task, DP on with epsilon 0.1 and delta 1e-5 over 100 rounds),
// under the task's leader lease held as this replica (replicaID); Close
// stops it.
func (a *App) openFederated(ctx context.Context, logger *slog.Logger) (*Federated, error) {
	id, err := replicaID(a.Config.DataDir)
	if err != nil {
		return nil, err
	}
	cfg := a.Config.federatedConfig()
	var proofKeys func(context.Context, string) ([]byte, []byte, error)
	if a.Config.Federated.Proofs {
		if proofKeys, err = federatedProofs(a.Config.DataDir, &cfg, a.Config.federatedKnownKeys()...); err != nil {
			return nil, err
		}
	}
	var more []*federated.TaskFile
	if len(a.Config.FederatedTasks) > 1 {
		more = a.Config.FederatedTasks[1:]
	}
	dataDir, known := a.Config.DataDir, a.Config.federatedKnownKeys()
	ttl := federatedLeaseTTL
	if a.Config.FederatedLease > 0 {
		ttl = a.Config.FederatedLease
	}
	f, err := OpenFederated(ctx, a.DB, cfg, logger, WithLeaderLease(id, ttl), WithReplicaURL(a.Config.ReplicaURL), WithTasks(a.Config.Federated, more...),
		withTaskProofs(func(cfg *federated.Config) (proofKeysFunc, error) { return federatedProofs(dataDir, cfg, known...) }))
	if err != nil {
		return nil, err
	}
	f.API.TaskFile, f.API.Run, f.API.ProofKeys = a.Config.FederatedTask, a.Config.Federated, proofKeys
	a.closers = append(a.closers, f)
	return f, nil
}
