package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/healthagents/healthagents/federated"
)

// FederatedStore keeps a federated coordinator's rounds, their submission
// logs, the model history and the privacy ledger (migrations 0002 and
// 0015), for one task (ForTask). It implements federated.Store.
type FederatedStore struct {
	db    *DB
	task  string      // ForTask; "": the default task
	fence *leaseFence // WithLeaseFence; nil: unfenced
}

// ForTask returns the store of task id over the same database: every
// table is scoped by task (migration 0015), the default task's key being
// "" (the rows of a database from before several tasks ran).
func (s *FederatedStore) ForTask(id string) *FederatedStore {
	return &FederatedStore{db: s.db, task: id, fence: s.fence}
}

// Task is the task key the store reads and writes ("": the default task).
func (s *FederatedStore) Task() string { return s.task }

// leaseFence is a lease a write must still be held under.
type leaseFence struct {
	name, holder string
	epoch        int64
}

// ErrFenced is returned by a fenced FederatedStore's SaveFederated when
// its lease has passed to another holder (or run out): the write is
// refused, so a leader that lost its lease never writes beside its
// successor.
var ErrFenced = errors.New("store: the lease this write was fenced by is no longer held")

// WithLeaseFence returns a store over the same database whose every
// SaveFederated checks, in its own transaction, that holder still holds
// the lease name at epoch (store.LeaseStore) and refuses with ErrFenced
// otherwise. On PostgreSQL the lease row is locked for the transaction
// (FOR SHARE), so it cannot change hands before the write commits; on
// SQLite the transaction holds the database's write lock throughout.
func (s *FederatedStore) WithLeaseFence(name, holder string, epoch int64) *FederatedStore {
	return &FederatedStore{db: s.db, task: s.task, fence: &leaseFence{name: name, holder: holder, epoch: epoch}}
}

// checkFence refuses the transaction unless the fence's lease is held.
func (s *FederatedStore) checkFence(ctx context.Context, tx *sql.Tx) error {
	if s.fence == nil {
		return nil
	}
	q := `SELECT 1 FROM leader_leases WHERE name = ? AND holder = ? AND epoch = ? AND expires_at > ?`
	if s.db.dialect == Postgres {
		q += ` FOR SHARE`
	}
	var one int
	err := tx.QueryRowContext(ctx, s.db.Rebind(q), s.fence.name, s.fence.holder, s.fence.epoch, Micros(time.Now())).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrFenced
	}
	if err != nil {
		return fmt.Errorf("store: checking the lease: %w", err)
	}
	return nil
}

var _ federated.Store = (*FederatedStore)(nil)

// NewFederatedStore returns the federated store over db.
func NewFederatedStore(db *DB) (*FederatedStore, error) {
	if db == nil {
		return nil, errors.New("store: nil DB")
	}
	return &FederatedStore{db: db}, nil
}

// SaveFederated implements federated.Store: the whole change commits in one
// transaction or not at all.
func (s *FederatedStore) SaveFederated(ctx context.Context, ch federated.Change) error {
	now := Micros(time.Now())
	err := s.db.inTx(ctx, func(tx *sql.Tx) error {
		if err := s.checkFence(ctx, tx); err != nil {
			return err
		}
		for _, r := range ch.Rounds {
			body, err := json.Marshal(r)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, s.db.Rebind(`INSERT INTO federated_rounds (task, number, phase, state, updated_at)
				VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (task, number) DO UPDATE SET phase = excluded.phase, state = excluded.state, updated_at = excluded.updated_at`),
				s.task, r.Number, string(r.Phase), string(body), now); err != nil {
				return err
			}
		}
		if sub := ch.Submission; sub != nil {
			body, err := json.Marshal(sub)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, s.db.Rebind(`INSERT INTO federated_submissions (task, round, seq, org, body, created_at)
				SELECT ?, ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ? FROM federated_submissions WHERE task = ? AND round = ?`),
				s.task, sub.Round, sub.Org, string(body), now, s.task, sub.Round); err != nil {
				return err
			}
		}
		if m := ch.Model; m != nil {
			body, err := json.Marshal(m)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, s.db.Rebind(`INSERT INTO federated_models (task, seq, version, round, hash, body, created_at)
				SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, ?, ? FROM federated_models WHERE task = ?`),
				s.task, m.Version, m.Round, m.Hash, string(body), now, s.task); err != nil {
				return err
			}
		}
		if m := ch.Evaluated; m != nil {
			body, err := json.Marshal(m)
			if err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, s.db.Rebind(`UPDATE federated_models SET body = ? WHERE task = ? AND version = ?`), string(body), s.task, m.Version)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			if n != 1 {
				return fmt.Errorf("model version %s: %d stored versions to update, not 1", m.Version, n)
			}
		}
		if l := ch.Ledger; l != nil {
			body, err := json.Marshal(l)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, s.db.Rebind(`INSERT INTO federated_ledger (task, body, updated_at) VALUES (?, ?, ?)
				ON CONFLICT (task) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at`),
				s.task, string(body), now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: saving federated state: %w", redactErr(err))
	}
	return nil
}

// LoadFederated implements federated.Store: the latest round with its
// submission log, the whole model history and the ledger; (nil, nil) when
// the coordinator never saved anything.
func (s *FederatedStore) LoadFederated(ctx context.Context) (*federated.Snapshot, error) {
	snap := &federated.Snapshot{}
	rows, err := s.db.db.QueryContext(ctx, s.db.Rebind(`SELECT body FROM federated_models WHERE task = ? ORDER BY seq`), s.task)
	if err != nil {
		return nil, fmt.Errorf("store: loading model history: %w", redactErr(err))
	}
	if err := scanJSON(rows, func() any {
		snap.History = append(snap.History, federated.ModelVersion{})
		return &snap.History[len(snap.History)-1]
	}); err != nil {
		return nil, fmt.Errorf("store: loading model history: %w", err)
	}
	if len(snap.History) == 0 {
		return nil, nil
	}
	var ledger string
	switch err := s.db.db.QueryRowContext(ctx, s.db.Rebind(`SELECT body FROM federated_ledger WHERE task = ?`), s.task).Scan(&ledger); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, fmt.Errorf("store: loading privacy ledger: %w", redactErr(err))
	default:
		if err := json.Unmarshal([]byte(ledger), &snap.Ledger); err != nil {
			return nil, fmt.Errorf("store: decoding privacy ledger: %w", err)
		}
	}
	var round string
	switch err := s.db.db.QueryRowContext(ctx, s.db.Rebind(`SELECT state FROM federated_rounds WHERE task = ? ORDER BY number DESC LIMIT 1`), s.task).Scan(&round); {
	case errors.Is(err, sql.ErrNoRows):
		return snap, nil
	case err != nil:
		return nil, fmt.Errorf("store: loading round: %w", redactErr(err))
	}
	if err := json.Unmarshal([]byte(round), &snap.Round); err != nil {
		return nil, fmt.Errorf("store: decoding round: %w", err)
	}
	rows, err = s.db.db.QueryContext(ctx, s.db.Rebind(`SELECT body FROM federated_submissions WHERE task = ? AND round = ? ORDER BY seq`), s.task, snap.Round.Number)
	if err != nil {
		return nil, fmt.Errorf("store: loading submissions: %w", redactErr(err))
	}
	if err := scanJSON(rows, func() any {
		snap.Submissions = append(snap.Submissions, federated.Submission{})
		return &snap.Submissions[len(snap.Submissions)-1]
	}); err != nil {
		return nil, fmt.Errorf("store: loading submissions: %w", err)
	}
	return snap, nil
}

// scanJSON decodes the single text column of each row into next().
func scanJSON(rows *sql.Rows, next func() any) error {
	defer rows.Close()
	for rows.Next() {
		var body string
		if err := rows.Scan(&body); err != nil {
			return redactErr(err)
		}
		if err := json.Unmarshal([]byte(body), next()); err != nil {
			return err
		}
	}
	return redactErr(rows.Err())
}
