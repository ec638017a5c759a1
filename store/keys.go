package store

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/healthagents/healthagents/apikey"
)

// KeyStore keeps API keys, their usage and bootstrap tokens. It implements
// apikey.Store.
type KeyStore struct{ db *DB }

var _ apikey.Store = (*KeyStore)(nil)

// NewKeyStore returns the key store over db.
func NewKeyStore(db *DB) (*KeyStore, error) {
	if db == nil {
		return nil, errors.New("store: nil DB")
	}
	return &KeyStore{db: db}, nil
}

const keyColumns = `id, env, hash, name, tier, scopes, organization, allowed_ips, restricted,
	rate_limit, daily_quota, created_at, expires_at, revoked_at, rotated_to, created_by, lineage`

// InsertKey implements apikey.KeyStore.
func (s *KeyStore) InsertKey(ctx context.Context, k apikey.StoredKey) error {
	return s.insert(ctx, s.db.db, k)
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func (s *KeyStore) insert(ctx context.Context, x execer, k apikey.StoredKey) error {
	_, err := x.ExecContext(ctx, s.db.Rebind(`INSERT INTO api_keys (`+keyColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		k.ID, string(k.Env), hex.EncodeToString(k.Hash[:]), k.Name, string(k.Tier), joinScopes(k.Scopes),
		k.Organization, joinPrefixes(k.AllowedIPs), k.Restricted, k.RateLimit, k.DailyQuota,
		Micros(k.CreatedAt), NullMicros(k.ExpiresAt), NullMicros(k.RevokedAt), k.RotatedTo, k.CreatedBy, k.Lineage)
	if isUniqueViolation(err) {
		return fmt.Errorf("%w: %v", apikey.ErrConflict, err)
	}
	if err != nil {
		return fmt.Errorf("store: inserting key: %w", err)
	}
	return nil
}

type scanner interface{ Scan(dest ...any) error }

func scanKey(r scanner) (apikey.StoredKey, error) {
	var (
		k                    apikey.StoredKey
		env, hash, tier      string
		scopes, ips          string
		created              int64
		expires, revoked     sql.NullInt64
		restricted           bool
		rateLimit, dailyQuot int64
	)
	if err := r.Scan(&k.ID, &env, &hash, &k.Name, &tier, &scopes, &k.Organization, &ips, &restricted,
		&rateLimit, &dailyQuot, &created, &expires, &revoked, &k.RotatedTo, &k.CreatedBy, &k.Lineage); err != nil {
		return k, err
	}
	h, err := hex.DecodeString(hash)
	if err != nil || len(h) != 32 {
		return k, fmt.Errorf("store: key %s has a corrupt hash", k.ID)
	}
	copy(k.Hash[:], h)
	k.Env, k.Tier, k.Restricted = apikey.Env(env), apikey.Tier(tier), restricted
	k.RateLimit, k.DailyQuota = int(rateLimit), int(dailyQuot)
	k.CreatedAt, k.ExpiresAt, k.RevokedAt = FromMicros(created), FromNullMicros(expires), FromNullMicros(revoked)
	k.Scopes = splitScopes(scopes)
	if k.AllowedIPs, err = splitPrefixes(ips); err != nil {
		return k, fmt.Errorf("store: key %s: %w", k.ID, err)
	}
	return k, nil
}

// KeyByID implements apikey.KeyStore.
func (s *KeyStore) KeyByID(ctx context.Context, id string) (apikey.StoredKey, error) {
	row := s.db.db.QueryRowContext(ctx, s.db.Rebind(`SELECT `+keyColumns+` FROM api_keys WHERE id = ?`), id)
	k, err := scanKey(row)
	if errors.Is(err, sql.ErrNoRows) {
		return k, apikey.ErrNotFound
	}
	if err != nil {
		return k, fmt.Errorf("store: reading key: %w", err)
	}
	return k, nil
}

// ListKeys implements apikey.KeyStore.
func (s *KeyStore) ListKeys(ctx context.Context, o apikey.ListOptions) ([]apikey.Key, int, error) {
	where, args := "", []any{}
	if o.Organization != "" {
		where, args = ` WHERE organization = ?`, append(args, o.Organization)
	}
	var total int
	if err := s.db.db.QueryRowContext(ctx, s.db.Rebind(`SELECT COUNT(*) FROM api_keys`+where), args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("store: counting keys: %w", err)
	}
	rows, err := s.db.db.QueryContext(ctx, s.db.Rebind(`SELECT `+keyColumns+` FROM api_keys`+where+
		` ORDER BY created_at, id LIMIT ? OFFSET ?`), append(args, o.Limit, o.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("store: listing keys: %w", err)
	}
	defer rows.Close()
	keys := []apikey.Key{}
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("store: listing keys: %w", err)
		}
		keys = append(keys, k.Key)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("store: listing keys: %w", err)
	}
	return keys, total, nil
}

// RevokeKey implements apikey.KeyStore.
func (s *KeyStore) RevokeKey(ctx context.Context, id string, at time.Time) error {
	res, err := s.db.db.ExecContext(ctx, s.db.Rebind(
		`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?`), Micros(at), id)
	return affectedOne(res, err, "revoking key")
}

// SetAllowedIPs implements apikey.KeyStore.
func (s *KeyStore) SetAllowedIPs(ctx context.Context, id string, ips []netip.Prefix) error {
	res, err := s.db.db.ExecContext(ctx, s.db.Rebind(`UPDATE api_keys SET allowed_ips = ? WHERE id = ?`), joinPrefixes(ips), id)
	return affectedOne(res, err, "setting allow-list")
}

// RotateKey implements apikey.KeyStore.
func (s *KeyStore) RotateKey(ctx context.Context, oldID string, oldExpiry time.Time, next apikey.StoredKey) error {
	return s.db.inTx(ctx, func(tx *sql.Tx) error {
		// The rotated_to = '' condition makes two concurrent rotations of
		// one key yield one successor.
		res, err := tx.ExecContext(ctx, s.db.Rebind(`UPDATE api_keys
			SET expires_at = CASE WHEN expires_at IS NULL OR expires_at > ? THEN ? ELSE expires_at END,
			    rotated_to = ?
			WHERE id = ? AND revoked_at IS NULL AND rotated_to = ''`),
			Micros(oldExpiry), Micros(oldExpiry), next.ID, oldID)
		if err := affectedOne(res, err, "rotating key"); err != nil {
			return err
		}
		return s.insert(ctx, tx, next)
	})
}

// CountKeys implements apikey.BootstrapStore.
func (s *KeyStore) CountKeys(ctx context.Context) (int, error) {
	var n int
	err := s.db.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM api_keys`).Scan(&n)
	return n, err
}

// InsertBootstrapToken implements apikey.BootstrapStore.
func (s *KeyStore) InsertBootstrapToken(ctx context.Context, hash [32]byte, created, expires time.Time) error {
	_, err := s.db.db.ExecContext(ctx, s.db.Rebind(
		`INSERT INTO admin_bootstrap_tokens (hash, created_at, expires_at) VALUES (?, ?, ?)`),
		hex.EncodeToString(hash[:]), Micros(created), Micros(expires))
	return err
}

// ConsumeBootstrapToken implements apikey.BootstrapStore.
func (s *KeyStore) ConsumeBootstrapToken(ctx context.Context, hash [32]byte, now time.Time) error {
	return s.db.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.db.Rebind(`UPDATE admin_bootstrap_tokens SET consumed_at = ?
			WHERE hash = ? AND consumed_at IS NULL AND expires_at > ?`),
			Micros(now), hex.EncodeToString(hash[:]), Micros(now))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return apikey.ErrInvalid
		}
		// One token used closes the door for every other outstanding one.
		_, err = tx.ExecContext(ctx, s.db.Rebind(`UPDATE admin_bootstrap_tokens SET consumed_at = ? WHERE consumed_at IS NULL`), Micros(now))
		return err
	})
}

// AddUsage implements apikey.UsageStore: one transaction, one upsert per
// histogram cell.
func (s *KeyStore) AddUsage(ctx context.Context, counts []apikey.UsageCount) error {
	if len(counts) == 0 {
		return nil
	}
	return s.db.inTx(ctx, func(tx *sql.Tx) error {
		// Rows of keys deleted meanwhile are skipped (WHERE EXISTS) rather
		// than failing the batch: a PostgreSQL error would abort the
		// transaction.
		stmt, err := tx.PrepareContext(ctx, s.db.Rebind(`INSERT INTO api_key_usage (key_id, minute, bucket, requests, errors)
			SELECT CAST(? AS TEXT), CAST(? AS BIGINT), CAST(? AS INTEGER), CAST(? AS BIGINT), CAST(? AS BIGINT)
			WHERE EXISTS (SELECT 1 FROM api_keys WHERE id = ?)
			ON CONFLICT (key_id, minute, bucket) DO UPDATE SET
				requests = api_key_usage.requests + excluded.requests,
				errors = api_key_usage.errors + excluded.errors`))
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, c := range counts {
			if _, err := stmt.ExecContext(ctx, c.KeyID, c.Minute, c.Bucket, c.Requests, c.Errors, c.KeyID); err != nil {
				return err
			}
		}
		return nil
	})
}

// UsageCounts implements apikey.UsageStore.
func (s *KeyStore) UsageCounts(ctx context.Context, keyID string, from, to int64) ([]apikey.UsageCount, error) {
	rows, err := s.db.db.QueryContext(ctx, s.db.Rebind(`SELECT bucket, SUM(requests), SUM(errors) FROM api_key_usage
		WHERE key_id = ? AND minute >= ? AND minute <= ? GROUP BY bucket ORDER BY bucket`), keyID, from, to)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []apikey.UsageCount
	for rows.Next() {
		c := apikey.UsageCount{KeyID: keyID}
		if err := rows.Scan(&c.Bucket, &c.Requests, &c.Errors); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// PruneUsage implements apikey.UsageStore.
func (s *KeyStore) PruneUsage(ctx context.Context, beforeMinute int64) error {
	_, err := s.db.db.ExecContext(ctx, s.db.Rebind(`DELETE FROM api_key_usage WHERE minute < ?`), beforeMinute)
	return err
}

func affectedOne(res sql.Result, err error, what string) error {
	if err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: %s: %w", what, err)
	}
	if n == 0 {
		return apikey.ErrNotFound
	}
	return nil
}

func joinScopes(ss []apikey.Scope) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = string(s)
	}
	return strings.Join(parts, " ")
}

func splitScopes(s string) []apikey.Scope {
	out := []apikey.Scope{}
	for _, f := range strings.Fields(s) {
		out = append(out, apikey.Scope(f))
	}
	return out
}

func joinPrefixes(ps []netip.Prefix) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.String()
	}
	return strings.Join(parts, " ")
}

func splitPrefixes(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Fields(s) {
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("corrupt allow-list entry %q", f)
		}
		out = append(out, p)
	}
	return out, nil
}

// SQLite extended result codes.
const (
	sqliteBusy                 = 5
	sqliteConstraintPrimaryKey = 1555
	sqliteConstraintUnique     = 2067
)

type sqliteCoder interface{ Code() int }

func isUniqueViolation(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == "23505"
	}
	var sc sqliteCoder
	if errors.As(err, &sc) {
		return sc.Code() == sqliteConstraintUnique || sc.Code() == sqliteConstraintPrimaryKey
	}
	return false
}
