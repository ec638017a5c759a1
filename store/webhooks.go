package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/healthagents/healthagents/webhook"
)

// WebhookStore keeps webhook endpoints, the delivery outbox and its attempts
// (migrations 0004_webhooks.sql, 0009_webhook_claims.sql). It implements
// webhook.Store and webhook.Queue.
type WebhookStore struct {
	db   *DB
	keys keyKeeper
}

var (
	_ webhook.Store = (*WebhookStore)(nil)
	_ webhook.Queue = (*WebhookStore)(nil)
)

// NewWebhookStore returns the webhook store over db.
func NewWebhookStore(db *DB, opts ...KeyOption) (*WebhookStore, error) {
	if db == nil {
		return nil, errors.New("store: nil DB")
	}
	s := &WebhookStore{db: db}
	for _, o := range opts {
		o(&s.keys)
	}
	return s, nil
}

const endpointColumns = `id, owner, url, events, secret, created_at, disabled_at, disabled_reason`

// InsertEndpoint implements webhook.Store. The owner's count and the insert
// happen in one transaction that holds, on PostgreSQL, an advisory lock per
// owner (SQLite's write lock serializes it already), so concurrent inserts
// never take an owner past limit.
func (s *WebhookStore) InsertEndpoint(ctx context.Context, e webhook.StoredEndpoint, limit int) error {
	return s.db.inTx(ctx, func(tx *sql.Tx) error {
		if s.db.dialect == Postgres {
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1, hashtext(current_schema() || ':' || $2))`,
				endpointLockKey, e.Owner); err != nil {
				return fmt.Errorf("store: locking the owner's endpoints: %w", err)
			}
		}
		var n int
		if err := tx.QueryRowContext(ctx, s.db.Rebind(`SELECT COUNT(*) FROM webhook_endpoints WHERE owner = ?`), e.Owner).Scan(&n); err != nil {
			return fmt.Errorf("store: counting webhook endpoints: %w", err)
		}
		if n >= limit {
			return webhook.ErrTooManyEndpoints
		}
		if _, err := tx.ExecContext(ctx, s.db.Rebind(`INSERT INTO webhook_endpoints (`+endpointColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
			e.ID, e.Owner, e.URL, strings.Join(e.Events, " "), e.Secret, Micros(e.CreatedAt),
			NullMicros(e.DisabledAt), e.DisabledReason); err != nil {
			return fmt.Errorf("store: inserting webhook endpoint: %w", err)
		}
		for _, ev := range e.Events {
			if _, err := tx.ExecContext(ctx, s.db.Rebind(`INSERT INTO webhook_subscriptions (event, endpoint_id) VALUES (?, ?)`),
				ev, e.ID); err != nil {
				return fmt.Errorf("store: inserting webhook subscription: %w", err)
			}
		}
		return nil
	})
}

// endpointLockKey is the first half of the PostgreSQL advisory lock that
// serializes the endpoint inserts of one owner ("hook").
const endpointLockKey = 0x686f6f6b

func scanEndpoint(r scanner) (webhook.StoredEndpoint, error) {
	var (
		e        webhook.StoredEndpoint
		events   string
		created  int64
		disabled sql.NullInt64
	)
	if err := r.Scan(&e.ID, &e.Owner, &e.URL, &events, &e.Secret, &created, &disabled, &e.DisabledReason); err != nil {
		return e, err
	}
	e.Events = strings.Fields(events)
	e.CreatedAt, e.DisabledAt = FromMicros(created), FromNullMicros(disabled)
	e.Status = webhook.StatusActive
	if disabled.Valid {
		e.Status = webhook.StatusDisabled
	}
	return e, nil
}

// EndpointByID implements webhook.Store.
func (s *WebhookStore) EndpointByID(ctx context.Context, id string) (webhook.StoredEndpoint, error) {
	e, err := scanEndpoint(s.db.db.QueryRowContext(ctx, s.db.Rebind(`SELECT `+endpointColumns+` FROM webhook_endpoints WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return e, webhook.ErrNotFound
	}
	if err != nil {
		return e, fmt.Errorf("store: reading webhook endpoint: %w", err)
	}
	return e, nil
}

// ListEndpoints implements webhook.Store.
func (s *WebhookStore) ListEndpoints(ctx context.Context, owner string, p webhook.ListParams) ([]webhook.Endpoint, int, error) {
	var total int
	if err := s.db.db.QueryRowContext(ctx, s.db.Rebind(`SELECT COUNT(*) FROM webhook_endpoints WHERE owner = ?`), owner).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("store: counting webhook endpoints: %w", err)
	}
	rows, err := s.db.db.QueryContext(ctx, s.db.Rebind(`SELECT `+endpointColumns+` FROM webhook_endpoints
		WHERE owner = ? ORDER BY created_at, id LIMIT ? OFFSET ?`), owner, p.Limit, p.Offset)
	if err != nil {
		return nil, 0, fmt.Errorf("store: listing webhook endpoints: %w", err)
	}
	defer rows.Close()
	out := []webhook.Endpoint{}
	for rows.Next() {
		e, err := scanEndpoint(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("store: listing webhook endpoints: %w", err)
		}
		out = append(out, e.Endpoint)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("store: listing webhook endpoints: %w", err)
	}
	return out, total, nil
}

// DeleteEndpoint implements webhook.Store: subscriptions, outbox rows and
// attempts go with the endpoint (ON DELETE CASCADE).
func (s *WebhookStore) DeleteEndpoint(ctx context.Context, id string) error {
	res, err := s.db.db.ExecContext(ctx, s.db.Rebind(`DELETE FROM webhook_endpoints WHERE id = ?`), id)
	if err != nil {
		return fmt.Errorf("store: deleting webhook endpoint: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: deleting webhook endpoint: %w", err)
	} else if n == 0 {
		return webhook.ErrNotFound
	}
	return nil
}

// ListAttempts implements webhook.Store.
func (s *WebhookStore) ListAttempts(ctx context.Context, endpointID string, p webhook.ListParams) ([]webhook.Attempt, int, error) {
	var total int
	if err := s.db.db.QueryRowContext(ctx, s.db.Rebind(`SELECT COUNT(*) FROM webhook_attempts WHERE endpoint_id = ?`), endpointID).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("store: counting webhook attempts: %w", err)
	}
	rows, err := s.db.db.QueryContext(ctx, s.db.Rebind(`SELECT id, message_id, endpoint_id, event, attempt, attempted_at,
		status_code, latency_ms, result, error_class, response, next_at
		FROM webhook_attempts WHERE endpoint_id = ? ORDER BY attempted_at DESC, attempt DESC, id DESC LIMIT ? OFFSET ?`),
		endpointID, p.Limit, p.Offset)
	if err != nil {
		return nil, 0, fmt.Errorf("store: listing webhook attempts: %w", err)
	}
	defer rows.Close()
	out := []webhook.Attempt{}
	for rows.Next() {
		var (
			a    webhook.Attempt
			at   int64
			next sql.NullInt64
		)
		if err := rows.Scan(&a.ID, &a.MessageID, &a.EndpointID, &a.Event, &a.Number, &at,
			&a.StatusCode, &a.LatencyMS, &a.Result, &a.Error, &a.Response, &next); err != nil {
			return nil, 0, fmt.Errorf("store: listing webhook attempts: %w", err)
		}
		a.At, a.NextAttempt = FromMicros(at), FromNullMicros(next)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("store: listing webhook attempts: %w", err)
	}
	return out, total, nil
}
