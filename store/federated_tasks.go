package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/healthagents/healthagents/federated"
)

// ErrTaskExists is returned by CreateTask for an id already kept.
var ErrTaskExists = errors.New("store: a federated task of this id exists")

// CreateTask keeps spec (migration 0015, federated_tasks); ErrTaskExists
// when its id is taken.
func (s *FederatedStore) CreateTask(ctx context.Context, spec federated.TaskSpec) error {
	if spec.File == nil {
		return errors.New("store: federated task without a task file")
	}
	def, err := json.Marshal(spec.File)
	if err != nil {
		return err
	}
	run, err := json.Marshal(spec.Run)
	if err != nil {
		return err
	}
	res, err := s.db.db.ExecContext(ctx, s.db.Rebind(`INSERT INTO federated_tasks (id, definition, settings, created_by, created_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`),
		spec.File.ID, string(def), string(run), spec.CreatedBy, Micros(spec.CreatedAt))
	if err != nil {
		return fmt.Errorf("store: keeping federated task: %w", redactErr(err))
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: keeping federated task: %w", redactErr(err))
	} else if n == 0 {
		return fmt.Errorf("%w: %q", ErrTaskExists, spec.File.ID)
	}
	return nil
}

// Tasks returns the kept tasks, oldest first, each validated again.
func (s *FederatedStore) Tasks(ctx context.Context) ([]federated.TaskSpec, error) {
	rows, err := s.db.db.QueryContext(ctx, `SELECT id, definition, settings, created_by, created_at FROM federated_tasks ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("store: loading federated tasks: %w", redactErr(err))
	}
	defer rows.Close()
	var out []federated.TaskSpec
	for rows.Next() {
		var id, def, run, by string
		var at int64
		if err := rows.Scan(&id, &def, &run, &by, &at); err != nil {
			return nil, fmt.Errorf("store: loading federated tasks: %w", redactErr(err))
		}
		tf, err := federated.ParseTaskFileBytes([]byte(def))
		if err != nil {
			return nil, fmt.Errorf("store: federated task %q: %w", id, err)
		}
		spec := federated.TaskSpec{File: tf, CreatedBy: by, CreatedAt: FromMicros(at)}
		if err := json.Unmarshal([]byte(run), &spec.Run); err != nil {
			return nil, fmt.Errorf("store: federated task %q: settings: %w", id, err)
		}
		out = append(out, spec)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: loading federated tasks: %w", redactErr(err))
	}
	return out, nil
}
