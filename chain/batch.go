package chain

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/healthagents/healthagents/chain/internal/contracts"
)

// Batches on the GovernedRegistry (docs/statement.md, "Batches"): one
// recordBatch(root, size, circuitIds) transaction records the Poseidon
// Merkle root of many statements; its BatchRecorded event is what a third
// party finds in the decision's receipt.

// MaxBatch is the registry's MAX_BATCH: the most statements one batch anchors.
const MaxBatch = 1024

// BatchRecorded is a decoded BatchRecorded event.
type BatchRecorded struct {
	Root       *big.Int
	Size       uint64
	CircuitIDs []*big.Int // strictly increasing
	Submitter  common.Address
	TxHash     common.Hash
	Block      uint64
}

// Covers reports whether circuitID is among the batch's circuit ids.
func (b BatchRecorded) Covers(circuitID *big.Int) bool {
	return slices.ContainsFunc(b.CircuitIDs, func(c *big.Int) bool { return c.Cmp(circuitID) == 0 })
}

// ErrNoBatch means a receipt holds no BatchRecorded event from the registry.
var ErrNoBatch = errors.New("chain: receipt has no BatchRecorded event from the registry")

// RecordBatch is a submitter's call data for one batch: its root, size and
// circuit ids (sorted and without repeats here, as the registry requires).
func (g *Governed) RecordBatch(root *big.Int, size int, circuitIDs []*big.Int) ([]byte, error) {
	ids := slices.Clone(circuitIDs)
	slices.SortFunc(ids, func(a, b *big.Int) int { return a.Cmp(b) })
	ids = slices.CompactFunc(ids, func(a, b *big.Int) bool { return a.Cmp(b) == 0 })
	return g.abi.TryPackRecordBatch(root, big.NewInt(int64(size)), ids)
}

// DecodeBatch finds the BatchRecorded event emitted by this registry (logs
// from any other address are ignored) in a successful receipt.
func (g *Governed) DecodeBatch(r *types.Receipt) (BatchRecorded, error) {
	if r == nil || r.Status != types.ReceiptStatusSuccessful {
		return BatchRecorded{}, fmt.Errorf("%w (transaction failed or missing)", ErrNoBatch)
	}
	id := g.abi.GetABI().Events["BatchRecorded"].ID
	for _, lg := range r.Logs {
		if lg.Address != g.addr || len(lg.Topics) == 0 || lg.Topics[0] != id {
			continue
		}
		ev, err := g.abi.UnpackBatchRecordedEvent(lg)
		if err != nil {
			return BatchRecorded{}, fmt.Errorf("chain: decode BatchRecorded: %w", err)
		}
		if !ev.Size.IsUint64() {
			return BatchRecorded{}, errors.New("chain: BatchRecorded size out of range")
		}
		return BatchRecorded{Root: ev.Root, Size: ev.Size.Uint64(), CircuitIDs: ev.CircuitIds, Submitter: ev.Submitter,
			TxHash: r.TxHash, Block: r.BlockNumber.Uint64()}, nil
	}
	return BatchRecorded{}, ErrNoBatch
}

// RecordBatchCall is a decoded recordBatch(root, size, circuitIds) call.
type RecordBatchCall struct {
	Root, Size *big.Int
	CircuitIDs []*big.Int
}

// ErrNotRecordBatchCall means a transaction's input is not a
// GovernedRegistry recordBatch call.
var ErrNotRecordBatchCall = errors.New("chain: transaction input is not a registry recordBatch call")

// DecodeRecordBatchCall decodes a transaction's input as a recordBatch call.
func DecodeRecordBatchCall(data []byte) (RecordBatchCall, error) {
	m, ok := contracts.NewGovernedRegistry().GetABI().Methods["recordBatch"]
	if !ok || len(data) < 4 || string(data[:4]) != string(m.ID) {
		return RecordBatchCall{}, ErrNotRecordBatchCall
	}
	vals, err := m.Inputs.Unpack(data[4:])
	if err != nil || len(vals) != 3 {
		return RecordBatchCall{}, fmt.Errorf("%w: %v", ErrNotRecordBatchCall, err)
	}
	root, ok1 := vals[0].(*big.Int)
	size, ok2 := vals[1].(*big.Int)
	ids, ok3 := vals[2].([]*big.Int)
	if !ok1 || !ok2 || !ok3 {
		return RecordBatchCall{}, ErrNotRecordBatchCall
	}
	return RecordBatchCall{Root: root, Size: size, CircuitIDs: ids}, nil
}

// BatchRecordedIn is the block in which root was recorded as a batch root,
// 0 when never (latest state).
func (r *RegistryView) BatchRecordedIn(ctx context.Context, root *big.Int) (uint64, error) {
	out, err := r.call(ctx, r.abi.PackBatchRecordedIn(root), nil)
	if err != nil {
		return 0, err
	}
	b, err := r.abi.UnpackBatchRecordedIn(out)
	if err != nil {
		return 0, err
	}
	if !b.IsUint64() {
		return 0, errors.New("chain: batch block out of range")
	}
	return b.Uint64(), nil
}

// SupportsBatches reports whether the registry has recordBatch: a
// GovernedRegistry deployed before batch anchoring answers batchRecordedIn
// with a revert (no such function).
func (g *Governed) SupportsBatches(ctx context.Context) (bool, error) {
	out, err := g.call(ctx, g.abi.PackBatchRecordedIn(big.NewInt(1)), nil)
	if err == nil {
		return len(out) == 32, nil
	}
	if revertData(err) != nil || !errors.Is(unavailable(err), ErrUnavailable) {
		return false, nil
	}
	return false, err
}
