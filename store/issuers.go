package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/healthagents/healthagents/issuers/issuerdb"
)

// IssuerStore keeps registered payers (table issuers, migration 0014).
type IssuerStore struct {
	db *DB
}

var _ issuerdb.Store = (*IssuerStore)(nil)

// NewIssuerStore returns the issuer store over db.
func NewIssuerStore(db *DB) (*IssuerStore, error) {
	if db == nil {
		return nil, errors.New("store: nil database")
	}
	return &IssuerStore{db: db}, nil
}

// AddIssuer implements issuerdb.Store: it inserts r unless an issuer with its
// id is kept already, and returns the kept one with created false then.
func (s *IssuerStore) AddIssuer(ctx context.Context, r issuerdb.Record) (issuerdb.Record, bool, error) {
	res, err := s.db.SQL().ExecContext(ctx, s.db.Rebind(`INSERT INTO issuers
		(issuer_id, key_hash, name, admin, created_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`),
		r.ID, r.KeyHash, r.Name, r.Admin, Micros(r.CreatedAt))
	if err != nil {
		return issuerdb.Record{}, false, fmt.Errorf("store: adding issuer: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 1 {
		return r, true, nil
	}
	kept, err := s.Issuer(ctx, r.ID)
	return kept, false, err
}

const issuerColumns = `issuer_id, key_hash, name, admin, created_at, retired_at`

func scanIssuer(row interface{ Scan(...any) error }) (issuerdb.Record, error) {
	var r issuerdb.Record
	var created int64
	var retired sql.NullInt64
	if err := row.Scan(&r.ID, &r.KeyHash, &r.Name, &r.Admin, &created, &retired); err != nil {
		return r, err
	}
	r.CreatedAt = FromMicros(created)
	if retired.Valid {
		t := FromMicros(retired.Int64)
		r.RetiredAt = &t
	}
	return r, nil
}

// Issuer implements issuerdb.Store.
func (s *IssuerStore) Issuer(ctx context.Context, id string) (issuerdb.Record, error) {
	r, err := scanIssuer(s.db.SQL().QueryRowContext(ctx, s.db.Rebind(`SELECT `+issuerColumns+` FROM issuers WHERE issuer_id = ?`), id))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return issuerdb.Record{}, issuerdb.ErrNotFound
	case err != nil:
		return issuerdb.Record{}, fmt.Errorf("store: reading issuer: %w", err)
	}
	return r, nil
}

// IssuerByKeyHash implements issuerdb.Store.
func (s *IssuerStore) IssuerByKeyHash(ctx context.Context, keyHash string) (issuerdb.Record, error) {
	r, err := scanIssuer(s.db.SQL().QueryRowContext(ctx, s.db.Rebind(`SELECT `+issuerColumns+` FROM issuers WHERE key_hash = ?`), keyHash))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return issuerdb.Record{}, issuerdb.ErrNotFound
	case err != nil:
		return issuerdb.Record{}, fmt.Errorf("store: reading issuer: %w", err)
	}
	return r, nil
}

// ListIssuers implements issuerdb.Store: every issuer, oldest first.
func (s *IssuerStore) ListIssuers(ctx context.Context) ([]issuerdb.Record, error) {
	rows, err := s.db.SQL().QueryContext(ctx, `SELECT `+issuerColumns+` FROM issuers ORDER BY created_at, issuer_id`)
	if err != nil {
		return nil, fmt.Errorf("store: listing issuers: %w", err)
	}
	defer rows.Close()
	var out []issuerdb.Record
	for rows.Next() {
		r, err := scanIssuer(rows)
		if err != nil {
			return nil, fmt.Errorf("store: listing issuers: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// RetireIssuer implements issuerdb.Store: it sets retired_at once.
func (s *IssuerStore) RetireIssuer(ctx context.Context, id string, at time.Time) error {
	if _, err := s.db.SQL().ExecContext(ctx, s.db.Rebind(`UPDATE issuers SET retired_at = ? WHERE issuer_id = ? AND retired_at IS NULL`),
		Micros(at), id); err != nil {
		return fmt.Errorf("store: retiring issuer: %w", err)
	}
	return nil
}
