package federated

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// ErrUnknownTask is returned for a task id no coordinator runs.
var ErrUnknownTask = errors.New("federated: unknown task")

// ErrTaskExists is returned when a task is started or created under an id
// that runs already.
var ErrTaskExists = errors.New("federated: a task of this id runs already")

// PrivacyStatus is a run's privacy budget and how much of it is spent.
type PrivacyStatus struct {
	Enabled        bool    `json:"enabled"`
	Epsilon        float64 `json:"epsilon,omitempty"`
	Delta          float64 `json:"delta,omitempty"`
	EpsilonSpent   float64 `json:"epsilon_spent"`
	EpsilonLeft    float64 `json:"epsilon_remaining"`
	RoundsReleased int     `json:"rounds_released"`
	// Noise is "central" or "distributed" (PrivacyConfig.Distributed).
	Noise string `json:"noise,omitempty"`
}

// Privacy reports the budget and the spent epsilon of the run.
func (c *Coordinator) Privacy() PrivacyStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ledger == nil {
		return PrivacyStatus{}
	}
	spent := c.ledger.Spent()
	return PrivacyStatus{
		Enabled: true, Epsilon: c.ledger.Budget.Epsilon, Delta: c.ledger.Budget.Delta,
		EpsilonSpent: spent, EpsilonLeft: max(0, c.ledger.Budget.Epsilon-spent), RoundsReleased: len(c.ledger.Entries),
		Noise: c.cfg.Noise(),
	}
}

// Tasks runs several tasks side by side, one Coordinator (with its own
// store, rounds and privacy budget) per task id. Safe for concurrent use.
type Tasks struct {
	mu    sync.Mutex
	coord map[string]*Coordinator
}

// NewTasks returns an empty set of tasks.
func NewTasks() *Tasks { return &Tasks{coord: map[string]*Coordinator{}} }

// Start creates (or resumes from store) the coordinator of task id. The id
// must match the file's and be new.
func (t *Tasks) Start(ctx context.Context, id string, store Store, cfg Config) (*Coordinator, error) {
	if !taskIDPattern.MatchString(id) {
		return nil, fmt.Errorf("%w: task id %q", ErrConfig, id)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, dup := t.coord[id]; dup {
		return nil, fmt.Errorf("%w: %q", ErrTaskExists, id)
	}
	c, err := NewCoordinator(ctx, store, cfg)
	if err != nil {
		return nil, fmt.Errorf("task %q: %w", id, err)
	}
	t.coord[id] = c
	return c, nil
}

// Get returns the coordinator of task id.
func (t *Tasks) Get(id string) (*Coordinator, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.coord[id]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTask, id)
	}
	return c, nil
}

// IDs lists the task ids, sorted.
func (t *Tasks) IDs() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	ids := make([]string, 0, len(t.coord))
	for id := range t.coord {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// TaskSpec is a task with the settings of its run: what an admin creates
// over the API (POST /api/v1/federated/tasks) and the store keeps, so the
// task is reopened at every start.
type TaskSpec struct {
	File      *TaskFile
	Run       RunSettings
	CreatedBy string // the creating key's id
	CreatedAt time.Time
}
