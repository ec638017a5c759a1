package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// Claim states of IdempotencyStore.Claim.
const (
	IdemClaimed = "claimed" // the caller runs the request and must Complete or Release
	IdemRunning = "running" // another attempt (maybe on another replica) is running it
	IdemDone    = "done"    // answer holds the first attempt's answer
)

// IdempotencyStore keeps Idempotency-Key answers in the database, so a
// retry after a restart or on another replica replays the first answer.
// Answers are sealed (they may hold a new API key); ids are hashed.
type IdempotencyStore struct {
	db     *DB
	sealer Sealer
	now    func() time.Time
}

// NewIdempotencyStore returns the store over db; sealer (the service's
// keyring) seals every kept answer.
func NewIdempotencyStore(db *DB, sealer Sealer) (*IdempotencyStore, error) {
	if db == nil || sealer == nil {
		return nil, errors.New("store: idempotency store needs a database and a sealer")
	}
	return &IdempotencyStore{db: db, sealer: sealer, now: time.Now}, nil
}

func idemID(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// Claim records that the first attempt of id runs now, leased for ttl (a
// claim whose process died is taken over once the lease ends). When an
// unexpired record exists it reports it instead: running, or done with the
// first answer and the hash of the first request's body.
func (s *IdempotencyStore) Claim(ctx context.Context, id string, ttl time.Duration) (state string, bodyHash [32]byte, answer []byte, err error) {
	key, now := idemID(id), s.now()
	res, err := s.db.SQL().ExecContext(ctx, s.db.Rebind(`INSERT INTO idempotency_answers (id, state, expires_at) VALUES (?, 'running', ?)
		ON CONFLICT (id) DO NOTHING`), key, Micros(now.Add(ttl)))
	if err != nil {
		return "", bodyHash, nil, fmt.Errorf("store: idempotency claim: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return IdemClaimed, bodyHash, nil, nil
	}
	// An expired record is taken over by whoever updates it first.
	res, err = s.db.SQL().ExecContext(ctx, s.db.Rebind(`UPDATE idempotency_answers SET state = 'running', body_hash = '', answer = '', expires_at = ?
		WHERE id = ? AND expires_at < ?`), Micros(now.Add(ttl)), key, Micros(now))
	if err != nil {
		return "", bodyHash, nil, fmt.Errorf("store: idempotency claim: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return IdemClaimed, bodyHash, nil, nil
	}
	var st, hashHex, sealed string
	err = s.db.SQL().QueryRowContext(ctx, s.db.Rebind(`SELECT state, body_hash, answer FROM idempotency_answers WHERE id = ?`), key).Scan(&st, &hashHex, &sealed)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return s.Claim(ctx, id, ttl) // released in between: try again
	case err != nil:
		return "", bodyHash, nil, fmt.Errorf("store: idempotency read: %w", err)
	}
	if st != IdemDone {
		return IdemRunning, bodyHash, nil, nil
	}
	if b, err := hex.DecodeString(hashHex); err == nil && len(b) == 32 {
		copy(bodyHash[:], b)
	}
	answer, err = s.sealer.Decrypt([]byte(sealed), 0)
	if err != nil {
		return "", bodyHash, nil, fmt.Errorf("store: idempotency answer cannot be opened: %w", err)
	}
	return IdemDone, bodyHash, answer, nil
}

// Complete keeps the first attempt's answer for replay for keep.
func (s *IdempotencyStore) Complete(ctx context.Context, id string, bodyHash [32]byte, answer []byte, keep time.Duration) error {
	sealed, err := s.sealer.Encrypt(answer)
	if err != nil {
		return fmt.Errorf("store: idempotency seal: %w", err)
	}
	_, err = s.db.SQL().ExecContext(ctx, s.db.Rebind(`UPDATE idempotency_answers SET state = 'done', body_hash = ?, answer = ?, expires_at = ? WHERE id = ?`),
		hex.EncodeToString(bodyHash[:]), string(sealed), Micros(s.now().Add(keep)), idemID(id))
	if err != nil {
		return fmt.Errorf("store: idempotency complete: %w", err)
	}
	return nil
}

// Release drops a claim whose answer is not kept (a 5xx, 429 or 409: worth
// retrying afresh).
func (s *IdempotencyStore) Release(ctx context.Context, id string) error {
	_, err := s.db.SQL().ExecContext(ctx, s.db.Rebind(`DELETE FROM idempotency_answers WHERE id = ? AND state = 'running'`), idemID(id))
	if err != nil {
		return fmt.Errorf("store: idempotency release: %w", err)
	}
	return nil
}

// PruneIdempotency deletes expired answers.
func (s *IdempotencyStore) PruneIdempotency(ctx context.Context) (int64, error) {
	res, err := s.db.SQL().ExecContext(ctx, s.db.Rebind(`DELETE FROM idempotency_answers WHERE expires_at < ?`), Micros(s.now()))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
