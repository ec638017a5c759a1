package chain

import (
	"context"
	"crypto/ecdsa"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// DeployCode deploys arbitrary contract creation code (tests only).
func (l *Ledger) DeployCode(ctx context.Context, code []byte) (common.Address, error) {
	return l.deploy(ctx, code)
}

// CallContract runs an eth_call (tests only).
func (l *Ledger) CallContract(ctx context.Context, to common.Address, data []byte) ([]byte, error) {
	return l.call(ctx, to, data)
}

// ConstructorArgs exposes the verifier's constructor arguments (tests only).
func (vk VerifyingKey) ConstructorArgs() ([]byte, error) { return vk.constructorArgs() }

// WaitMinedForTest polls for a receipt (a transaction sent outside a Ledger).
func WaitMinedForTest(ctx context.Context, client Backend, hash common.Hash) (*types.Receipt, error) {
	for {
		r, err := client.TransactionReceipt(ctx, hash)
		if err == nil {
			return r, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// KeyOf returns the Ledger's submitting key (tests only).
func KeyOf(l *Ledger) (*ecdsa.PrivateKey, bool) { return l.tx.key, l.tx.key != nil }

// batcherState reads what f returns of l's batcher under the batcher's
// lock; zero when no batcher was started (tests only).
func batcherState[T any](l *Ledger, f func(b *batcher) T) T {
	l.batchMu.Lock()
	b := l.batcher
	l.batchMu.Unlock()
	if b == nil {
		var zero T
		return zero
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return f(b)
}

// QueuedForTest is how many statements wait for a batch to close (tests only).
func QueuedForTest(l *Ledger) int {
	return batcherState(l, func(b *batcher) int { return len(b.pending) })
}

// AnchoringEstimateForTest is the batcher's moving estimate of a batch's
// anchoring time (zero before the first batch; tests only).
func AnchoringEstimateForTest(l *Ledger) time.Duration {
	return batcherState(l, func(b *batcher) time.Duration { return b.anchoring })
}

// InflightForTest reports whether a batch of l is being anchored (tests
// only).
func InflightForTest(l *Ledger) bool {
	return batcherState(l, func(b *batcher) bool { return b.inflight })
}
