package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/ethereum/go-ethereum/common"
)

// NonceStore allocates chain nonces across replicas (table chain_nonces,
// migration 0013_replicas.sql): replicas that sign with the same
// CHAIN_PRIVATE_KEY never sign two transactions with one nonce. It
// implements chain.NonceSource (asserted in chain's tests; store does
// not import chain).
//
// Each allocation is one transaction that holds the account's lock while
// the chain transaction is sent: on PostgreSQL a transaction-scoped
// advisory lock on (chain, account); on SQLite the database's write lock
// (every transaction begins IMMEDIATE), which is a file lock, so processes
// sharing the file are serialized too. Sending takes milliseconds (the
// wait for the block happens after the lock is released).
type NonceStore struct{ db *DB }

// NewNonceStore returns the nonce allocator over db.
func NewNonceStore(db *DB) (*NonceStore, error) {
	if db == nil {
		return nil, errors.New("store: nil DB")
	}
	return &NonceStore{db: db}, nil
}

// nonceLockKey is the first half of the PostgreSQL advisory lock of an
// account's nonces.
const nonceLockKey = 0x6e6f6e63 // "nonc"

// WithNonce implements chain.NonceSource.
func (s *NonceStore) WithNonce(ctx context.Context, chainID uint64, account common.Address,
	pending func(context.Context) (uint64, error), send func(nonce uint64) error) error {
	if chainID > math.MaxInt64 {
		return errors.New("store: chain id out of range")
	}
	acct := strings.ToLower(account.Hex())
	var sendErr error
	err := s.db.inTx(ctx, func(tx *sql.Tx) error {
		if s.db.dialect == Postgres {
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1, hashtext(current_schema() || ':' || $2))`,
				nonceLockKey, fmt.Sprintf("%d:%s", chainID, acct)); err != nil {
				return fmt.Errorf("store: locking the account's nonces: %w", err)
			}
		}
		var next int64
		err := tx.QueryRowContext(ctx, s.db.Rebind(`SELECT next FROM chain_nonces WHERE chain_id = ? AND account = ?`),
			int64(chainID), acct).Scan(&next)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("store: reading the account's nonce: %w", err)
		}
		p, err := pending(ctx)
		if err != nil {
			sendErr = err
			return err
		}
		nonce := max(p, uint64(next))
		if nonce >= math.MaxInt64 {
			return errors.New("store: nonce out of range")
		}
		if err := send(nonce); err != nil {
			sendErr = err
			return err
		}
		if _, err := tx.ExecContext(ctx, s.db.Rebind(`INSERT INTO chain_nonces (chain_id, account, next) VALUES (?, ?, ?)
			ON CONFLICT (chain_id, account) DO UPDATE SET next = excluded.next`), int64(chainID), acct, int64(nonce+1)); err != nil {
			return fmt.Errorf("store: recording the account's nonce: %w", err)
		}
		return nil
	})
	if sendErr != nil {
		return sendErr
	}
	return err
}

// Forget implements chain.NonceSource: the next allocation asks the node.
func (s *NonceStore) Forget(ctx context.Context, chainID uint64, account common.Address) error {
	if chainID > math.MaxInt64 {
		return errors.New("store: chain id out of range")
	}
	if _, err := s.db.db.ExecContext(ctx, s.db.Rebind(`DELETE FROM chain_nonces WHERE chain_id = ? AND account = ?`),
		int64(chainID), strings.ToLower(account.Hex())); err != nil {
		return fmt.Errorf("store: forgetting the account's nonce: %w", err)
	}
	return nil
}
