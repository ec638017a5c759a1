package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/healthagents/healthagents/audit"
)

// AuditStore keeps the access audit log (migration 0007_audit_log.*.sql).
// It implements audit.Store. It has no update or delete, and the database
// refuses both with triggers.
type AuditStore struct {
	db   *DB
	keys keyKeeper
}

var _ audit.Store = (*AuditStore)(nil)

// NewAuditStore returns the audit store over db. Give it the
// WithKeySealer the WebhookStore has: the two share the pseudonym key.
func NewAuditStore(db *DB, opts ...KeyOption) (*AuditStore, error) {
	if db == nil {
		return nil, errors.New("store: nil DB")
	}
	s := &AuditStore{db: db}
	for _, o := range opts {
		o(&s.keys)
	}
	return s, nil
}

// auditLockKey is the first half of the PostgreSQL advisory lock that
// serializes appends; the second is a hash of the current schema.
const auditLockKey = 0x61756469 // "audi"

const auditColumns = `seq, at, actor_type, key_id, organization, client_ip, action, patient_ref, resource, records, outcome, status, request_id, prev_hash, hash`

// Append implements audit.Store. On PostgreSQL the transaction takes a
// transaction-scoped advisory lock before it reads the head; on SQLite it
// holds the write lock from BEGIN IMMEDIATE. Either way one appender at a
// time reads the last entry and chains after it, so sequence numbers have
// no gaps and every prev_hash is its predecessor's hash.
func (s *AuditStore) Append(ctx context.Context, es []audit.Entry) ([]audit.Entry, error) {
	out := make([]audit.Entry, 0, len(es))
	err := s.db.inTx(ctx, func(tx *sql.Tx) error {
		if s.db.dialect == Postgres {
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))`, auditLockKey); err != nil {
				return fmt.Errorf("store: audit lock: %w", err)
			}
		}
		var (
			seq  int64
			hash string
		)
		err := tx.QueryRowContext(ctx, `SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1`).Scan(&seq, &hash)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("store: reading the audit head: %w", err)
		}
		c := audit.NewChainer(seq, hash)
		for _, e := range es {
			e, err := c.Next(e)
			if err != nil {
				return fmt.Errorf("store: chaining audit entry: %w", err)
			}
			if _, err := tx.ExecContext(ctx, s.db.Rebind(`INSERT INTO audit_log (`+auditColumns+`)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
				e.Seq, Micros(e.Time), e.ActorType, e.KeyID, e.Organization, e.ClientIP, e.Action,
				e.PatientRef, e.Resource, e.Records, e.Outcome, e.Status, e.RequestID, e.PrevHash, e.Hash); err != nil {
				return fmt.Errorf("store: writing audit entry: %w", err)
			}
			out = append(out, e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func scanAudit(r scanner) (audit.Entry, error) {
	var (
		e  audit.Entry
		at int64
	)
	err := r.Scan(&e.Seq, &at, &e.ActorType, &e.KeyID, &e.Organization, &e.ClientIP, &e.Action,
		&e.PatientRef, &e.Resource, &e.Records, &e.Outcome, &e.Status, &e.RequestID, &e.PrevHash, &e.Hash)
	e.Time = FromMicros(at)
	return e, err
}

// List implements audit.Store.
func (s *AuditStore) List(ctx context.Context, f audit.Filter) ([]audit.Entry, int, error) {
	var (
		where []string
		args  []any
	)
	add := func(cond string, v any) {
		where = append(where, cond)
		args = append(args, v)
	}
	if f.PatientRef != "" {
		add("patient_ref = ?", f.PatientRef)
	}
	if f.KeyID != "" {
		add("key_id = ?", f.KeyID)
	}
	if f.Organization != "" {
		add("organization = ?", f.Organization)
	}
	if !f.From.IsZero() {
		add("at >= ?", Micros(f.From))
	}
	if !f.To.IsZero() {
		add("at < ?", Micros(f.To))
	}
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	var total int
	if err := s.db.db.QueryRowContext(ctx, s.db.Rebind(`SELECT COUNT(*) FROM audit_log`+cond), args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("store: counting audit entries: %w", err)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 10
	}
	rows, err := s.db.db.QueryContext(ctx, s.db.Rebind(`SELECT `+auditColumns+` FROM audit_log`+cond+` ORDER BY seq LIMIT ? OFFSET ?`),
		append(args, limit, f.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("store: listing audit entries: %w", err)
	}
	defer rows.Close()
	out := []audit.Entry{}
	for rows.Next() {
		e, err := scanAudit(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("store: listing audit entries: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("store: listing audit entries: %w", err)
	}
	return out, total, nil
}

// auditScanPage is how many entries Scan reads per query.
const auditScanPage = 1000

// Scan implements audit.Store, reading the log in pages by sequence number
// so no query holds the whole log.
func (s *AuditStore) Scan(ctx context.Context, fn func(audit.Entry) error) error {
	after := int64(-1 << 62)
	for {
		rows, err := s.db.db.QueryContext(ctx, s.db.Rebind(`SELECT `+auditColumns+` FROM audit_log WHERE seq > ? ORDER BY seq LIMIT ?`), after, auditScanPage)
		if err != nil {
			return fmt.Errorf("store: reading audit entries: %w", err)
		}
		var page []audit.Entry
		for rows.Next() {
			e, err := scanAudit(rows)
			if err != nil {
				rows.Close()
				return fmt.Errorf("store: reading audit entries: %w", err)
			}
			page = append(page, e)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return fmt.Errorf("store: reading audit entries: %w", err)
		}
		for _, e := range page {
			if err := fn(e); err != nil {
				return err
			}
			after = e.Seq
		}
		if len(page) < auditScanPage {
			return nil
		}
	}
}

// PseudonymKey implements audit.Store with the key webhook payloads are
// derived from (webhook_settings.pseudonym_key), so the patient_id of a
// webhook event is webhook.OwnerPseudonym(patient_ref, owner) of the entry
// of the access that emitted it.
func (s *AuditStore) PseudonymKey(ctx context.Context, candidate []byte) ([]byte, error) {
	return (&WebhookStore{db: s.db, keys: s.keys}).PseudonymKey(ctx, candidate)
}
