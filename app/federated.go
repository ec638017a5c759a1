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
	Coordinator *federated.Coordinator
	Host        *federated.ParticipantHost
	API         *server.FederatedAPI

	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// deadlineTick is how often the coordinator applies phase deadlines when no
// participant calls in.
const deadlineTick = 5 * time.Second

// OpenFederated builds the coordinator over db with cfg (zero fields take
// the specification's defaults: 3 participants, 30-minute rounds, 100
// rounds, DP with epsilon 0.1 and delta 1e-5), resuming any round kept in
// db, and starts the deadline ticker. Close stops it and the hosted
// participants.
func OpenFederated(ctx context.Context, db *store.DB, cfg federated.Config, logger *slog.Logger) (*Federated, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Logger == nil {
		cfg.Logger = logger
	}
	fs, err := store.NewFederatedStore(db)
	if err != nil {
		return nil, err
	}
	coord, err := federated.NewCoordinator(ctx, fs, cfg)
	if err != nil {
		return nil, fmt.Errorf("federated coordinator: %w", err)
	}
	task := cfg.Task
	if task.Name == "" && len(task.Features) == 0 {
		task = federated.DefaultTask()
	}
	host, err := federated.NewParticipantHost(coord, federated.WithHostTask(task), federated.WithHostLogger(logger))
	if err != nil {
		return nil, err
	}
	orgs, err := store.NewOrganizationStore(db)
	if err != nil {
		host.Close()
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f := &Federated{
		Coordinator: coord, Host: host,
		API:    &server.FederatedAPI{Coordinator: coord, Organizations: orgs, Host: host},
		cancel: cancel, done: make(chan struct{}),
	}
	go func() {
		defer close(f.done)
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
	return f, nil
}

// Close stops the deadline ticker and the hosted participants (each becomes
// a dropout of its round; the round itself is kept in the store).
func (f *Federated) Close() error {
	f.once.Do(func() {
		f.cancel()
		<-f.done
		f.Host.Close()
	})
	return nil
}

// openFederated opens the coordinator on a.DB with the specification's
// settings (DP on: epsilon 0.1, delta 1e-5 over the whole run); Close
// stops it.
func (a *App) openFederated(ctx context.Context, logger *slog.Logger) (*Federated, error) {
	f, err := OpenFederated(ctx, a.DB, federated.Config{}, logger)
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, f)
	return f, nil
}
