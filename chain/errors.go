package chain

import (
	"context"
	"errors"
	"fmt"

	"github.com/ethereum/go-ethereum/rpc"
)

var (
	// ErrRejected reports that a proof was not accepted: the verifier contract
	// returned false (Receipt.Verified is false), or the proof or inputs could
	// not even be encoded for it (a negative or over-long number).
	ErrRejected = errors.New("chain: proof rejected")

	// ErrUnavailable reports that the chain could not be reached, or did not
	// answer or mine the transaction before the deadline.
	ErrUnavailable = errors.New("chain: unavailable")

	// ErrUnknownKind reports that no verifier is registered for a statement kind.
	ErrUnknownKind = errors.New("chain: no verifier registered for statement kind")

	// ErrNotFound reports that a transaction is not known to the chain.
	ErrNotFound = errors.New("chain: transaction not found")

	// ErrReverted reports a transaction mined with status 0 for a reason other
	// than those above (for example registering from a non-owner key).
	ErrReverted = errors.New("chain: transaction reverted")

	// ErrVerifierMismatch reports that Register found the statement kind
	// registered to a verifier holding another verifying key: replacing it
	// (Replace) would break every proof made with that key.
	ErrVerifierMismatch = errors.New("chain: the registry holds another verifying key for this statement kind")

	// ErrNotOwner reports a Register from a key that does not own the registry.
	ErrNotOwner = errors.New("chain: not the registry owner")

	// ErrClosed reports a call on a closed Ledger.
	ErrClosed = errors.New("chain: ledger closed")
)

// unavailable classifies an error returned by the JSON-RPC client. An answer
// from the node (a JSON-RPC error object, an HTTP 4xx other than 429) is
// returned as it is; anything showing that the node could not be reached or
// did not answer in time is wrapped with ErrUnavailable.
func unavailable(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrUnavailable) {
		return err
	}
	var httpErr rpc.HTTPError
	if errors.As(err, &httpErr) {
		if httpErr.StatusCode >= 500 || httpErr.StatusCode == 429 {
			return fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		return err
	}
	var rpcErr rpc.Error
	if errors.As(err, &rpcErr) {
		return err
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}
