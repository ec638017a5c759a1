package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// LeaseStore keeps leader leases (table leader_leases, migration
// 0013_replicas.sql): among replicas of one database, at most one holds a
// named lease at a time, until it lets it run out. The federated
// coordinator of a task runs on the holder of its lease only.
type LeaseStore struct {
	db  *DB
	now func() time.Time
	// address is what Acquire records as the holder's address (see
	// WithAddress).
	address string
}

// NewLeaseStore returns the lease store over db.
func NewLeaseStore(db *DB) (*LeaseStore, error) {
	if db == nil {
		return nil, errors.New("store: nil DB")
	}
	return &LeaseStore{db: db, now: time.Now}, nil
}

// WithLeaseClock sets the clock (tests).
func (s *LeaseStore) WithLeaseClock(now func() time.Time) *LeaseStore {
	c := *s
	c.now = now
	return &c
}

// WithAddress returns the store whose Acquire records address with the
// lease: the base URL at which the holder serves what the lease guards, so
// that the others can forward to it (Leader). "" records none.
func (s *LeaseStore) WithAddress(address string) *LeaseStore {
	c := *s
	c.address = address
	return &c
}

// Acquire takes the lease name for holder until ttl from now, or renews it
// if holder has it: it succeeds when the lease is free, has run out, or is
// holder's already. It reports whether holder holds the lease now, and its
// epoch, which grows by one each time the lease changes hands (a fencing
// token). One statement does it, so concurrent callers never both succeed.
func (s *LeaseStore) Acquire(ctx context.Context, name, holder string, ttl time.Duration) (held bool, epoch int64, err error) {
	if name == "" || holder == "" || ttl <= 0 {
		return false, 0, errors.New("store: a lease needs a name, a holder and a positive ttl")
	}
	now := s.now()
	if _, err := s.db.db.ExecContext(ctx, s.db.Rebind(`INSERT INTO leader_leases (name, holder, expires_at, epoch, address) VALUES (?, ?, ?, 1, ?)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at, address = excluded.address,
			epoch = CASE WHEN leader_leases.holder = excluded.holder THEN leader_leases.epoch ELSE leader_leases.epoch + 1 END
		WHERE leader_leases.holder = excluded.holder OR leader_leases.expires_at <= ?`),
		name, holder, Micros(now.Add(ttl)), s.address, Micros(now)); err != nil {
		return false, 0, fmt.Errorf("store: taking the lease: %w", err)
	}
	var cur string
	var until int64
	if err := s.db.db.QueryRowContext(ctx, s.db.Rebind(`SELECT holder, expires_at, epoch FROM leader_leases WHERE name = ?`), name).
		Scan(&cur, &until, &epoch); err != nil {
		return false, 0, fmt.Errorf("store: reading the lease: %w", err)
	}
	return cur == holder && until > Micros(now), epoch, nil
}

// Holder returns who holds the lease now ("" when nobody does).
func (s *LeaseStore) Holder(ctx context.Context, name string) (string, error) {
	holder, _, err := s.Leader(ctx, name)
	return holder, err
}

// Leader returns who holds the lease now and the address it advertised
// ("" and "" when nobody does).
func (s *LeaseStore) Leader(ctx context.Context, name string) (holder, address string, err error) {
	err = s.db.db.QueryRowContext(ctx, s.db.Rebind(`SELECT holder, address FROM leader_leases WHERE name = ? AND expires_at > ?`),
		name, Micros(s.now())).Scan(&holder, &address)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", "", fmt.Errorf("store: reading the lease: %w", err)
	}
	return holder, address, nil
}

// Release lets the lease run out now, if holder has it, so that another
// replica takes it over at once (a clean shutdown).
func (s *LeaseStore) Release(ctx context.Context, name, holder string) error {
	if _, err := s.db.db.ExecContext(ctx, s.db.Rebind(`UPDATE leader_leases SET expires_at = 0 WHERE name = ? AND holder = ?`),
		name, holder); err != nil {
		return fmt.Errorf("store: releasing the lease: %w", err)
	}
	return nil
}
