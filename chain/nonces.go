package chain

import (
	"context"
	"errors"

	"github.com/ethereum/go-ethereum/common"
)

// NonceSource allocates the nonces of a signing account across every
// process that signs with it: replicas of the service sharing one
// CHAIN_PRIVATE_KEY. Without one, a Transactor keeps its nonce in memory,
// which is right for one process per key only: two replicas reading the
// same pending nonce would sign two transactions with it, and one would be
// refused ("nonce too low") or replace the other.
//
// *store.NonceStore is one (a row per account, locked by a PostgreSQL
// advisory lock or SQLite's write lock).
type NonceSource interface {
	// WithNonce holds the account's lock, shared by every process, from
	// choosing the nonce until send returns: the nonce is the larger of
	// the node's pending nonce (pending) and the one after the last nonce
	// send accepted through this source. When send returns nil the nonce
	// is recorded as used; when it fails nothing is recorded. Its error is
	// send's, or one wrapping the source's failure.
	WithNonce(ctx context.Context, chainID uint64, account common.Address,
		pending func(context.Context) (uint64, error), send func(nonce uint64) error) error
	// Forget drops what the source remembers of the account, so that the
	// next nonce is the node's pending one again: a transaction that was
	// sent but never mined (dropped by the node) must not leave a gap.
	Forget(ctx context.Context, chainID uint64, account common.Address) error
}

// WithNonceSource makes the Ledger's transactions (its submitting key's
// and, with WithOwnerKey, the owner's) take their nonces from ns, so that
// several processes may sign with the same keys. The service passes its
// database (store.NonceStore) when CHAIN_ENDPOINT is set.
func WithNonceSource(ns NonceSource) Option {
	return func(o *options) error {
		if ns == nil {
			return errors.New("chain: nil nonce source")
		}
		o.nonces = ns
		return nil
	}
}

// SetNonceSource makes t take its nonces from ns (nil: in memory), for a
// Transactor made by NewTransactor that shares its key with other
// processes. Call it before the first transaction.
func (t *Transactor) SetNonceSource(ns NonceSource) {
	t.nonceMu.Lock()
	t.nonces = ns
	t.nonceMu.Unlock()
}
