package store

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/healthagents/healthagents/webhook"
)

// WebhookStore keeps webhook endpoints, the delivery outbox and its attempts
// (migration 0004_webhooks.sql). It implements webhook.Store and
// webhook.Queue.
type WebhookStore struct{ db *DB }

var (
	_ webhook.Store = (*WebhookStore)(nil)
	_ webhook.Queue = (*WebhookStore)(nil)
)

// NewWebhookStore returns the webhook store over db.
func NewWebhookStore(db *DB) (*WebhookStore, error) {
	if db == nil {
		return nil, errors.New("store: nil DB")
	}
	return &WebhookStore{db: db}, nil
}

const endpointColumns = `id, owner, url, events, secret, created_at, disabled_at, disabled_reason`

// InsertEndpoint implements webhook.Store.
func (s *WebhookStore) InsertEndpoint(ctx context.Context, e webhook.StoredEndpoint) error {
	return s.db.inTx(ctx, func(tx *sql.Tx) error {
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

// Enqueue implements webhook.Store: one INSERT … SELECT writes a row per
// active subscribed endpoint, atomically.
func (s *WebhookStore) Enqueue(ctx context.Context, m webhook.Message) (int, error) {
	return enqueue(ctx, s.db, s.db.db, m)
}

// enqueue writes m's outbox rows through x: the pool, or a transaction
// that also writes the result m reports.
func enqueue(ctx context.Context, db *DB, x execer, m webhook.Message) (int, error) {
	now := Micros(m.CreatedAt)
	res, err := x.ExecContext(ctx, db.Rebind(`INSERT INTO webhook_deliveries
		(message_id, endpoint_id, event, payload, state, attempts, next_at, lease_holder, lease_until, created_at)
		SELECT CAST(? AS TEXT), e.id, CAST(? AS TEXT), CAST(? AS TEXT), 'pending', 0, CAST(? AS BIGINT), '', 0, CAST(? AS BIGINT)
		FROM webhook_endpoints e JOIN webhook_subscriptions sub ON sub.endpoint_id = e.id
		WHERE sub.event = ? AND e.disabled_at IS NULL AND (CAST(? AS TEXT) = '' OR e.owner = ?)`),
		m.ID, m.Event, string(m.Payload), now, now, m.Event, m.Owner, m.Owner)
	if err != nil {
		return 0, fmt.Errorf("store: enqueueing webhook message: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("store: enqueueing webhook message: %w", err)
	}
	return int(n), nil
}

// PseudonymKey implements webhook.Store.
func (s *WebhookStore) PseudonymKey(ctx context.Context, candidate []byte) ([]byte, error) {
	if _, err := s.db.db.ExecContext(ctx, s.db.Rebind(`INSERT INTO webhook_settings (name, value) VALUES ('pseudonym_key', ?)
		ON CONFLICT (name) DO NOTHING`), hex.EncodeToString(candidate)); err != nil {
		return nil, fmt.Errorf("store: storing the pseudonym key: %w", err)
	}
	var v string
	if err := s.db.db.QueryRowContext(ctx, `SELECT value FROM webhook_settings WHERE name = 'pseudonym_key'`).Scan(&v); err != nil {
		return nil, fmt.Errorf("store: reading the pseudonym key: %w", err)
	}
	key, err := hex.DecodeString(v)
	if err != nil {
		return nil, errors.New("store: the stored pseudonym key is corrupt")
	}
	return key, nil
}

// Claim implements webhook.Queue. On PostgreSQL the due rows are selected
// FOR UPDATE SKIP LOCKED, so concurrent claimers take disjoint sets without
// waiting; on SQLite the transaction holds the write lock (BEGIN IMMEDIATE).
// Either way the lease written here keeps the rows from every other claimer
// until it expires.
func (s *WebhookStore) Claim(ctx context.Context, holder string, now, leaseUntil time.Time, limit int) ([]webhook.Job, error) {
	var jobs []webhook.Job
	lock := ""
	if s.db.dialect == Postgres {
		lock = ` FOR UPDATE OF d SKIP LOCKED`
	}
	err := s.db.inTx(ctx, func(tx *sql.Tx) error {
		jobs = jobs[:0]
		rows, err := tx.QueryContext(ctx, s.db.Rebind(`SELECT d.message_id, d.endpoint_id, d.event, d.payload, d.attempts,
			e.url, e.secret, e.failing_since
			FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
			WHERE d.state = 'pending' AND d.next_at <= ? AND d.lease_until <= ? AND e.disabled_at IS NULL
			ORDER BY d.next_at LIMIT ?`+lock), Micros(now), Micros(now), limit)
		if err != nil {
			return err
		}
		for rows.Next() {
			var (
				j       webhook.Job
				payload string
				failing sql.NullInt64
			)
			if err := rows.Scan(&j.MessageID, &j.EndpointID, &j.Event, &payload, &j.Attempts, &j.URL, &j.Secret, &failing); err != nil {
				rows.Close()
				return err
			}
			j.Payload, j.FailingSince = []byte(payload), FromNullMicros(failing)
			jobs = append(jobs, j)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
		for _, j := range jobs {
			if _, err := tx.ExecContext(ctx, s.db.Rebind(`UPDATE webhook_deliveries SET lease_holder = ?, lease_until = ?
				WHERE message_id = ? AND endpoint_id = ?`), holder, Micros(leaseUntil), j.MessageID, j.EndpointID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: claiming webhook deliveries: %w", err)
	}
	return jobs, nil
}

// Prune implements webhook.Queue. Pending messages are never pruned.
func (s *WebhookStore) Prune(ctx context.Context, before time.Time) (int, error) {
	var n int64
	err := s.db.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.db.Rebind(`DELETE FROM webhook_attempts WHERE attempted_at < ?`), Micros(before))
		if err != nil {
			return err
		}
		a, _ := res.RowsAffected()
		res, err = tx.ExecContext(ctx, s.db.Rebind(`DELETE FROM webhook_deliveries
			WHERE state IN ('delivered', 'failed') AND finished_at < ?`), Micros(before))
		if err != nil {
			return err
		}
		d, _ := res.RowsAffected()
		n = a + d
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: pruning webhook outbox: %w", err)
	}
	return int(n), nil
}

// Finish implements webhook.Queue.
func (s *WebhookStore) Finish(ctx context.Context, o webhook.Outcome) error {
	a, j, now := o.Attempt, o.Job, Micros(o.Now)
	err := s.db.inTx(ctx, func(tx *sql.Tx) error {
		// An endpoint deleted meanwhile takes its rows with it: skip.
		if _, err := tx.ExecContext(ctx, s.db.Rebind(`INSERT INTO webhook_attempts (id, message_id, endpoint_id, event, attempt,
			attempted_at, status_code, latency_ms, result, error_class, response, next_at)
			SELECT CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS INTEGER),
				CAST(? AS BIGINT), CAST(? AS INTEGER), CAST(? AS BIGINT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS BIGINT)
			WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = ?)`),
			a.ID, a.MessageID, a.EndpointID, a.Event, a.Number, Micros(a.At), a.StatusCode, a.LatencyMS,
			a.Result, a.Error, a.Response, NullMicros(a.NextAttempt), a.EndpointID); err != nil {
			return err
		}
		state, next := "pending", Micros(o.NextAt)
		switch {
		case o.Delivered:
			state, next = "delivered", now
		case o.NextAt.IsZero():
			// No retry left, or the endpoint is being disabled: a
			// disabled endpoint's undelivered messages stay pending, so
			// re-enabling it would deliver them.
			state, next = "failed", now
			if o.Disable != "" {
				state = "pending"
			}
		}
		var finished sql.NullInt64
		if state != "pending" {
			finished = sql.NullInt64{Int64: now, Valid: true}
		}
		if _, err := tx.ExecContext(ctx, s.db.Rebind(`UPDATE webhook_deliveries
			SET state = ?, attempts = attempts + 1, next_at = ?, lease_holder = '', lease_until = 0, finished_at = ?
			WHERE message_id = ? AND endpoint_id = ? AND lease_holder = ?`),
			state, next, finished, j.MessageID, j.EndpointID, o.Holder); err != nil {
			return err
		}
		var err error
		switch {
		case o.Delivered:
			_, err = tx.ExecContext(ctx, s.db.Rebind(`UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ?`), j.EndpointID)
		case o.Disable != "":
			_, err = tx.ExecContext(ctx, s.db.Rebind(`UPDATE webhook_endpoints
				SET disabled_at = COALESCE(disabled_at, ?), disabled_reason = ?, failing_since = COALESCE(failing_since, ?)
				WHERE id = ?`), now, o.Disable, Micros(a.At), j.EndpointID)
		default:
			_, err = tx.ExecContext(ctx, s.db.Rebind(`UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, ?) WHERE id = ?`),
				Micros(a.At), j.EndpointID)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("store: recording webhook attempt: %w", err)
	}
	return nil
}
