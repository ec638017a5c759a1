package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/healthagents/healthagents/webhook"
)

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

// Claim implements webhook.Queue in one transaction:
//
//  1. For each active endpoint, the time its oldest due delivery became due
//     and how many of its deliveries are leased (by anyone) now.
//  2. Slots are handed out one at a time to the least loaded owner (its
//     deliveries in flight plus the slots it got in this claim; ties to
//     the oldest due delivery), and within it to its least loaded endpoint
//     with something due and fewer than p.PerEndpoint in flight. So one
//     owner's backlog, however many endpoints it spans, never keeps another
//     owner's deliveries waiting for more than a free slot.
//  3. Each chosen endpoint's oldest due deliveries are leased. On
//     PostgreSQL the endpoint row is locked first (FOR NO KEY UPDATE, in id
//     order, so claimers never deadlock) and its leased deliveries counted
//     again, so concurrent claimers never exceed p.PerEndpoint; the rows are
//     selected FOR UPDATE SKIP LOCKED. On SQLite the transaction holds the
//     write lock (BEGIN IMMEDIATE) throughout.
//
// The lease written keeps the rows from every other claimer until it runs
// out. The indexes of migration 0009 keep each per-endpoint lookup to the
// few rows it needs, however long an endpoint's backlog.
func (s *WebhookStore) Claim(ctx context.Context, p webhook.ClaimParams) ([]webhook.Job, error) {
	if p.Limit <= 0 || p.PerEndpoint <= 0 {
		return nil, nil
	}
	var jobs []webhook.Job
	err := s.db.inTx(ctx, func(tx *sql.Tx) error {
		jobs = jobs[:0]
		cands, err := s.claimCandidates(ctx, tx, p)
		if err != nil {
			return err
		}
		order, alloc := allocateSlots(cands, p.Limit, p.PerEndpoint)
		ids := make([]string, 0, len(alloc))
		for id := range alloc {
			ids = append(ids, id)
		}
		slices.Sort(ids) // lock order
		byEndpoint := map[string][]webhook.Job{}
		for _, id := range ids {
			js, err := s.claimEndpoint(ctx, tx, p, id, alloc[id])
			if err != nil {
				return err
			}
			byEndpoint[id] = js
		}
		for _, id := range order { // hand them back in turn order
			if js := byEndpoint[id]; len(js) > 0 {
				jobs = append(jobs, js[0])
				byEndpoint[id] = js[1:]
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: claiming webhook deliveries: %w", err)
	}
	return jobs, nil
}

// claimCandidate is an active endpoint with due or leased deliveries.
type claimCandidate struct {
	id, owner string
	due       int64 // oldest due delivery's next_at; valid only if hasDue
	hasDue    bool
	busy      int // deliveries leased now, by anyone
}

func (s *WebhookStore) claimCandidates(ctx context.Context, tx *sql.Tx, p webhook.ClaimParams) ([]claimCandidate, error) {
	now := Micros(p.Now)
	rows, err := tx.QueryContext(ctx, s.db.Rebind(`SELECT id, owner, due, busy FROM (
			SELECT e.id AS id, e.owner AS owner,
				(SELECT d.next_at FROM webhook_deliveries d
					WHERE d.endpoint_id = e.id AND d.state = 'pending' AND d.next_at <= ? AND d.lease_until <= ?
					ORDER BY d.next_at LIMIT 1) AS due,
				(SELECT COUNT(*) FROM webhook_deliveries d
					WHERE d.endpoint_id = e.id AND d.state = 'pending' AND d.lease_until > ?) AS busy
			FROM webhook_endpoints e WHERE e.disabled_at IS NULL) c
		WHERE due IS NOT NULL OR busy > 0`), now, now, now)
	if err != nil {
		return nil, err
	}
	var out []claimCandidate
	for rows.Next() {
		var (
			c   claimCandidate
			due sql.NullInt64
		)
		if err := rows.Scan(&c.id, &c.owner, &due, &c.busy); err != nil {
			rows.Close()
			return nil, err
		}
		c.due, c.hasDue = due.Int64, due.Valid
		out = append(out, c)
	}
	return out, errors.Join(rows.Err(), rows.Close())
}

// allocateSlots hands out up to limit slots, one at a time, each to the
// least loaded owner that has an endpoint with something due and a free
// slot (load: its deliveries in flight, by anyone, plus the slots it got
// so far; ties go to the oldest due delivery), and within that owner to
// its least loaded such endpoint (same rule). So an owner with a backlog
// on many endpoints gets no more slots than an owner with one due
// delivery, and no endpoint more than perEndpoint in flight. It returns
// the endpoint of each slot in hand-out order, and the slots per endpoint.
func allocateSlots(cands []claimCandidate, limit, perEndpoint int) ([]string, map[string]int) {
	type owner struct {
		load int
		due  int64 // oldest due among its endpoints that may take a slot
	}
	owners := map[string]*owner{}
	for _, c := range cands {
		o := owners[c.owner]
		if o == nil {
			o = &owner{due: math.MaxInt64}
			owners[c.owner] = o
		}
		o.load += c.busy
	}
	var order []string
	alloc := map[string]int{}
	for len(order) < limit {
		for _, o := range owners {
			o.due = math.MaxInt64
		}
		open := func(c claimCandidate) bool { return c.hasDue && c.busy+alloc[c.id] < perEndpoint }
		for _, c := range cands {
			if open(c) {
				owners[c.owner].due = min(owners[c.owner].due, c.due)
			}
		}
		best := -1
		for i, c := range cands {
			if !open(c) {
				continue
			}
			if best < 0 || lessLoaded(c, cands[best], owners[c.owner].load, owners[cands[best].owner].load,
				owners[c.owner].due, owners[cands[best].owner].due, alloc) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		c := cands[best]
		order = append(order, c.id)
		alloc[c.id]++
		owners[c.owner].load++
	}
	return order, alloc
}

// lessLoaded orders candidate endpoints for the next slot: owner load,
// owner's oldest due, owner name; then endpoint load, its oldest due, id.
func lessLoaded(a, b claimCandidate, aLoad, bLoad int, aDue, bDue int64, alloc map[string]int) bool {
	if a.owner != b.owner {
		if aLoad != bLoad {
			return aLoad < bLoad
		}
		if aDue != bDue {
			return aDue < bDue
		}
		return a.owner < b.owner
	}
	if la, lb := a.busy+alloc[a.id], b.busy+alloc[b.id]; la != lb {
		return la < lb
	}
	if a.due != b.due {
		return a.due < b.due
	}
	return a.id < b.id
}

// claimEndpoint leases up to n of endpoint id's oldest due deliveries.
func (s *WebhookStore) claimEndpoint(ctx context.Context, tx *sql.Tx, p webhook.ClaimParams, id string, n int) ([]webhook.Job, error) {
	now := Micros(p.Now)
	lock := ""
	if s.db.dialect == Postgres {
		// Another claimer may have leased some of this endpoint's
		// deliveries since step 1: lock the endpoint, then count again.
		// The count is its own statement: under READ COMMITTED it then
		// sees what a claimer we waited for has committed.
		var one, busy int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM webhook_endpoints WHERE id = $1 AND disabled_at IS NULL FOR NO KEY UPDATE`, id).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil // deleted or disabled meanwhile
		}
		if err != nil {
			return nil, err
		}
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM webhook_deliveries
			WHERE endpoint_id = $1 AND state = 'pending' AND lease_until > $2`, id, now).Scan(&busy); err != nil {
			return nil, err
		}
		n = min(n, p.PerEndpoint-busy)
		if n <= 0 {
			return nil, nil
		}
		lock = ` FOR UPDATE OF d SKIP LOCKED`
	}
	rows, err := tx.QueryContext(ctx, s.db.Rebind(`SELECT d.message_id, d.endpoint_id, d.event, d.payload, d.attempts,
			e.url, e.secret, e.failing_since
		FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
		WHERE d.endpoint_id = ? AND d.state = 'pending' AND d.next_at <= ? AND d.lease_until <= ? AND e.disabled_at IS NULL
		ORDER BY d.next_at, d.message_id LIMIT ?`+lock), id, now, now, n)
	if err != nil {
		return nil, err
	}
	var jobs []webhook.Job
	for rows.Next() {
		var (
			j       webhook.Job
			payload string
			failing sql.NullInt64
		)
		if err := rows.Scan(&j.MessageID, &j.EndpointID, &j.Event, &payload, &j.Attempts, &j.URL, &j.Secret, &failing); err != nil {
			rows.Close()
			return nil, err
		}
		j.Payload, j.FailingSince, j.LeaseUntil = []byte(payload), FromNullMicros(failing), p.LeaseUntil
		jobs = append(jobs, j)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	for _, j := range jobs {
		if _, err := tx.ExecContext(ctx, s.db.Rebind(`UPDATE webhook_deliveries SET lease_holder = ?, lease_until = ?
			WHERE message_id = ? AND endpoint_id = ?`), p.Holder, Micros(p.LeaseUntil), j.MessageID, j.EndpointID); err != nil {
			return nil, err
		}
	}
	return jobs, nil
}

// Prune implements webhook.Queue. Pending messages of an active endpoint
// are never pruned.
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
		// A disabled endpoint gets nothing more; its undelivered messages
		// go once it has been disabled for the retention period.
		res, err = tx.ExecContext(ctx, s.db.Rebind(`DELETE FROM webhook_deliveries
			WHERE state = 'pending' AND endpoint_id IN (
				SELECT id FROM webhook_endpoints WHERE disabled_at IS NOT NULL AND disabled_at < ?)`), Micros(before))
		if err != nil {
			return err
		}
		p, _ := res.RowsAffected()
		n = a + d + p
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
	lost := false
	err := s.db.inTx(ctx, func(tx *sql.Tx) error {
		lost = false
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
			// disabled endpoint's undelivered messages stay pending (a
			// re-enable would deliver them) until Prune drops them, one
			// retention period after the endpoint was disabled.
			state, next = "failed", now
			if o.Disable != "" {
				state = "pending"
			}
		}
		var finished sql.NullInt64
		if state != "pending" {
			finished = sql.NullInt64{Int64: now, Valid: true}
		}
		res, err := tx.ExecContext(ctx, s.db.Rebind(`UPDATE webhook_deliveries
			SET state = ?, attempts = attempts + 1, next_at = ?, lease_holder = '', lease_until = 0, finished_at = ?
			WHERE message_id = ? AND endpoint_id = ? AND lease_holder = ? AND state = 'pending'`),
			state, next, finished, j.MessageID, j.EndpointID, o.Holder)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			// The lease ran out and another holder took the delivery (or
			// the endpoint is gone): the attempt stays on record, but the
			// delivery and the endpoint are the new holder's to update.
			lost = true
			return nil
		}
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
	if lost {
		return fmt.Errorf("store: recording webhook attempt of %s: %w", j.MessageID, webhook.ErrLeaseLost)
	}
	return nil
}
