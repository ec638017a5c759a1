package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/server"
	"github.com/healthagents/healthagents/store"
)

// proofKeysFunc serves a proved run's keys (server.FederatedAPI.ProofKeys).
type proofKeysFunc = func(ctx context.Context, shape string) (pk, vk []byte, err error)

// WithTasks runs further tasks beside the default one: files (the
// FEDERATED_TASK files after the first) and every task admins created
// over the API (kept in the database, reopened here). Each has its own
// coordinator, rounds, store rows and privacy budget; base is the settings
// of the files' runs and the defaults of created tasks. Without it
// POST /api/v1/federated/tasks answers 503.
func WithTasks(base federated.RunSettings, files ...*federated.TaskFile) FederatedOption {
	return func(o *fedOptions) { o.tasks, o.base = files, &base }
}

// withTaskProofs sets up the proof keys of a proved task's run
// (federatedProofs over DATA_DIR).
func withTaskProofs(fn func(cfg *federated.Config) (proofKeysFunc, error)) FederatedOption {
	return func(o *fedOptions) { o.proofs = fn }
}

// federatedTasks are the tasks run beside the default one; it implements
// server.FederatedTasks. Under a leader lease each task's coordinator runs
// under its own lease ("federated:task:<id>"), so among replicas one
// coordinator runs per task; a task another replica created is opened
// here when first asked for.
type federatedTasks struct {
	fs        *store.FederatedStore
	leases    *store.LeaseStore // nil: one process per database, no lease
	holder    string
	ttl       time.Duration
	logger    *slog.Logger
	proofs    func(cfg *federated.Config) (proofKeysFunc, error)
	defaultID string

	mu   sync.Mutex
	runs map[string]*taskEntry
}

type taskEntry struct {
	run  *server.FederatedTaskRun
	stop func()
}

var _ server.FederatedTasks = (*federatedTasks)(nil)

// open starts the coordinator of spec (resumed from its rows). Callers
// hold t.mu.
func (t *federatedTasks) open(ctx context.Context, spec federated.TaskSpec, source string) error {
	id := spec.File.ID
	cfg := spec.Run.Config(spec.File.Task())
	cfg.Logger = t.logger.With("task", id)
	var keys proofKeysFunc
	if spec.Run.Proofs && t.proofs != nil {
		var err error
		if keys, err = t.proofs(&cfg); err != nil {
			return fmt.Errorf("federated task %q: %w", id, err)
		}
	}
	fs := t.fs.ForTask(id)
	run := &server.FederatedTaskRun{ID: id, TaskFile: spec.File, Run: spec.Run, ProofKeys: keys, Source: source, CreatedAt: spec.CreatedAt}
	var stop func()
	if t.leases == nil {
		coord, err := federated.NewCoordinator(ctx, fs, cfg)
		if err != nil {
			return fmt.Errorf("federated task %q: %w", id, err)
		}
		run.Coordinator, stop = coord, runDeadlines(ctx, coord, cfg.Logger)
	} else {
		lc := &leasedCoordinator{
			leases: t.leases, name: "federated:task:" + id, holder: t.holder, ttl: t.ttl,
			fs: fs, cfg: cfg, logger: cfg.Logger, changed: make(chan struct{}),
		}
		if err := lc.step(ctx); err != nil {
			return fmt.Errorf("federated task %q: %w", id, err)
		}
		lc.start()
		run.Coordinator, stop = lc, lc.close
	}
	t.runs[id] = &taskEntry{run: run, stop: stop}
	return nil
}

// refresh opens the created tasks kept in the database that do not run
// here yet (another replica created them). Callers hold t.mu.
func (t *federatedTasks) refresh(ctx context.Context) error {
	specs, err := t.fs.Tasks(ctx)
	if err != nil {
		return err
	}
	for _, spec := range specs {
		if _, ok := t.runs[spec.File.ID]; ok || spec.File.ID == t.defaultID {
			continue
		}
		if err := t.open(ctx, spec, "api"); err != nil {
			return err
		}
	}
	return nil
}

// Task implements server.FederatedTasks.
func (t *federatedTasks) Task(ctx context.Context, id string) (*server.FederatedTaskRun, bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.runs[id]; ok {
		return e.run, true, nil
	}
	if err := t.refresh(ctx); err != nil {
		return nil, false, err
	}
	e, ok := t.runs[id]
	if !ok {
		return nil, false, nil
	}
	return e.run, true, nil
}

// Tasks implements server.FederatedTasks.
func (t *federatedTasks) Tasks(ctx context.Context) ([]*server.FederatedTaskRun, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.refresh(ctx); err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(t.runs))
	for id := range t.runs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make([]*server.FederatedTaskRun, 0, len(ids))
	for _, id := range ids {
		out = append(out, t.runs[id].run)
	}
	return out, nil
}

// CreateTask implements server.FederatedTasks: the task is kept, then
// started.
func (t *federatedTasks) CreateTask(ctx context.Context, spec federated.TaskSpec) (*server.FederatedTaskRun, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	id := spec.File.ID
	if _, ok := t.runs[id]; ok || id == t.defaultID {
		return nil, fmt.Errorf("%w: %q", federated.ErrTaskExists, id)
	}
	if err := t.fs.CreateTask(ctx, spec); errors.Is(err, store.ErrTaskExists) {
		return nil, fmt.Errorf("%w: %q", federated.ErrTaskExists, id)
	} else if err != nil {
		return nil, err
	}
	if err := t.open(ctx, spec, "api"); err != nil {
		return nil, err
	}
	t.logger.Info("federated task created", "task", id, "by", spec.CreatedBy)
	return t.runs[id].run, nil
}

// close stops every task's coordinator (giving its lease up).
func (t *federatedTasks) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, e := range t.runs {
		e.stop()
	}
	t.runs = map[string]*taskEntry{}
}

// openTasks starts the further tasks of WithTasks beside the default task
// defaultID.
func openTasks(ctx context.Context, fs *store.FederatedStore, leases *store.LeaseStore, o fedOptions, defaultID string, logger *slog.Logger) (*federatedTasks, error) {
	t := &federatedTasks{fs: fs, leases: leases, holder: o.holder, ttl: o.ttl, logger: logger, proofs: o.proofs,
		defaultID: defaultID, runs: map[string]*taskEntry{}}
	for _, tf := range o.tasks {
		if _, dup := t.runs[tf.ID]; dup || tf.ID == defaultID {
			t.close()
			return nil, fmt.Errorf("FEDERATED_TASK: task id %q is given twice", tf.ID)
		}
		if err := t.open(ctx, federated.TaskSpec{File: tf, Run: *o.base}, "config"); err != nil {
			t.close()
			return nil, err
		}
	}
	specs, err := fs.Tasks(ctx)
	if err != nil {
		t.close()
		return nil, err
	}
	for _, spec := range specs {
		if _, dup := t.runs[spec.File.ID]; dup || spec.File.ID == defaultID {
			t.close()
			return nil, fmt.Errorf("FEDERATED_TASK: task %q was also created over the API (POST /api/v1/federated/tasks); give the file another id", spec.File.ID)
		}
	}
	if err := t.refresh(ctx); err != nil {
		t.close()
		return nil, err
	}
	return t, nil
}
