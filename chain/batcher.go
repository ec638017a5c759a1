package chain

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/core/types"

	"github.com/healthagents/healthagents/zkp/statement"
)

// Anchoring in batches (docs/decisions/batch-anchoring.md): in AnchorBatch
// mode Submit verifies the proof itself (an eth_call to the verifier bound to
// the circuit id) and checks the issuer active, then queues the statement's
// leaf; a batch closes at its size or its window after its earliest
// statement reached Submit (the checks run inside the window); if that
// statement found no batch in flight, the window runs from its decision's
// start instead, less the time a batch takes to be anchored (closeAt: such a
// decision is answered about the window after its proof began, its proof and
// the batch's own transaction included). One recordBatch transaction records the batch's Poseidon Merkle root, and
// every statement of the batch is answered once that transaction is mined
// (and confirmed) with its place in the batch (Receipt.Batch). The queue is
// in memory: a process that stops before a batch is anchored answered
// nothing for its statements.

// AnchorMode says how Submit records statements.
type AnchorMode string

const (
	// AnchorEach records every statement in its own registry transaction
	// (record): the registry verifies the proof.
	AnchorEach AnchorMode = "each"
	// AnchorBatch verifies every proof by eth_call and records many
	// statements' Merkle root in one registry transaction (recordBatch).
	AnchorBatch AnchorMode = "batch"
)

// Defaults of WithAnchor's batch size and window.
const (
	DefaultBatchSize   = 128
	DefaultBatchWindow = 200 * time.Millisecond
)

// ParseAnchorMode reads "each" or "batch".
func ParseAnchorMode(s string) (AnchorMode, error) {
	switch m := AnchorMode(s); m {
	case AnchorEach, AnchorBatch:
		return m, nil
	}
	return "", fmt.Errorf("chain: anchor mode %q is neither %q nor %q", s, AnchorEach, AnchorBatch)
}

// WithAnchor sets how Submit records statements (default AnchorEach). In
// AnchorBatch mode a batch closes at size statements (1..MaxBatch) or window
// after its first statement arrived (when no batch was in flight at that
// arrival: the window after its decision's start, WithDecisionStart, less
// the time a batch takes to be anchored: closeAt),
// whichever comes first; one batch is in flight at a time per Ledger, and
// the next one collects meanwhile.
func WithAnchor(mode AnchorMode, size int, window time.Duration) Option {
	return func(o *options) error {
		if _, err := ParseAnchorMode(string(mode)); err != nil {
			return err
		}
		if mode == AnchorBatch {
			if size < 1 || size > MaxBatch {
				return fmt.Errorf("chain: batch size %d outside 1..%d", size, MaxBatch)
			}
			if window <= 0 {
				return errors.New("chain: batch window must be positive")
			}
		}
		o.anchor, o.batchSize, o.batchWindow = mode, size, window
		return nil
	}
}

// Anchor returns the Ledger's anchoring mode, batch size and window (the
// size and window are zero in AnchorEach mode).
func (l *Ledger) Anchor() (mode AnchorMode, size int, window time.Duration) {
	if l.opts.anchor != AnchorBatch {
		return AnchorEach, 0, 0
	}
	return AnchorBatch, l.opts.batchSize, l.opts.batchWindow
}

// AnchorName is the anchoring mode's name, "each" or "batch": what GET
// /status reports, for a caller (package server) that imports no chain
// type.
func (l *Ledger) AnchorName() string {
	m, _, _ := l.Anchor()
	return string(m)
}

// ErrBatchFailed reports that the batch holding a statement was not
// anchored (its transaction failed, reverted, or recorded something else):
// nothing of it is verified. The error also wraps the cause.
var ErrBatchFailed = errors.New("chain: the batch was not anchored")

// waiter is one statement queued for a batch.
type waiter struct {
	leaf      *big.Int
	circuitID *big.Int
	// at is when Submit was handed the statement, before its proof and
	// issuer were checked: a batch's window runs from its earliest
	// statement's, so those checks are made inside the window a statement
	// waits anyway, not added to it.
	at time.Time
	// start is when the decision's work began (WithDecisionStart: its
	// proof's start), at or before at, if the batcher was idle (no batch
	// in flight, none collecting) from then until the statement was
	// queued; else, or when not given, at.
	start time.Time
	// alone says whether the decision is still the only one on its
	// replica (WithDecisionAlone; nil: always): once not, start no longer
	// counts (windowStart).
	alone func() bool
	// idle: no batch was in flight when the statement was queued (see
	// closeAt).
	idle bool
	done chan struct{}
	rc   Receipt
	err  error
}

// batcher collects the Ledger's statements into batches and anchors them,
// one at a time.
type batcher struct {
	l       *Ledger
	size    int
	window  time.Duration
	kick    chan struct{} // a statement was queued
	stop    chan struct{} // closed by Close
	stopped chan struct{} // closed when run returns

	mu       sync.Mutex
	pending  []*waiter
	closed   bool
	inflight bool // a batch taken by next is being anchored
	// idleSince is when the batcher last became idle (no batch in flight,
	// none collecting): the zero time at first; meaningless while busy.
	idleSince time.Time
	// anchoring is how long a batch takes from being sent to being
	// answered (recordBatch: mined and confirmed): the median of the last
	// len(recent) batches' times (the lower of the middle two), each
	// counted at most the window; zero until a batch is anchored.
	anchoring time.Duration
	recent    [anchoringSamples]time.Duration // a ring, next at seen % len
	seen      int
}

// closeAt is when a batch whose earliest statement reached Submit at at
// closes unfilled. If that statement was queued while no batch was in
// flight (idle), it is the window after start less anchoring, the time a
// batch takes to be anchored when the chain is fast (clamped to [0,
// window]). start is its decision's start (its proof's, WithDecisionStart)
// if the replica was idle from then on (no batch in flight, none
// collecting, and, while the statement waits, no other decision begun:
// WithDecisionAlone, waiter.windowStart), else at: on an idle replica a decision is answered about
// the window after its proof began, its proof, its batch's collection and
// its batch's transaction included, not its proof plus the window plus the
// transaction; a decision begun while the replica was busy gets the window
// from its arrival at Submit, so that batches keep their size under load. On a chain slower than the
// window (12 s blocks) such a batch is sent at once, and the statements
// arriving meanwhile gather for the next one. A batch whose earliest
// statement came while another was in flight (a busy replica: it waits for
// that one anyway) collects for the whole window after that statement
// reached Submit, so that batches keep their size under load, when proofs
// queue and anchoring is slowed by the proofs beside it.
func closeAt(at, start time.Time, idle bool, window, anchoring time.Duration) time.Time {
	if !idle {
		return at.Add(window)
	}
	return start.Add(window - min(max(anchoring, 0), window))
}

// windowStart is the time w's batch window runs from if w is its batch's
// first statement on an idle replica (closeAt): start while the decision is
// alone on its replica, else at (another decision began: the replica is
// busy, and the batch may collect it).
func (w *waiter) windowStart() time.Time {
	if w.alone != nil && !w.alone() {
		return w.at
	}
	return w.start
}

// decisionStartKey and decisionAloneKey are the context keys of
// WithDecisionStart and WithDecisionAlone.
type (
	decisionStartKey struct{}
	decisionAloneKey struct{}
)

// WithDecisionAlone returns ctx carrying alone, which says whether the
// decision whose statement will be submitted with ctx is still the only one
// its replica is working on. Once it returns false (another decision
// began), the decision's start (WithDecisionStart) no longer counts for its
// batch's window, which then runs from the statement's arrival at Submit,
// so that the other decision may join the batch. The batcher calls it while
// the statement waits, holding its lock: it must be quick and must not call
// the Ledger.
func WithDecisionAlone(ctx context.Context, alone func() bool) context.Context {
	return context.WithValue(ctx, decisionAloneKey{}, alone)
}

// DecisionAlone returns the function WithDecisionAlone put in ctx, or nil.
func DecisionAlone(ctx context.Context) func() bool {
	alone, _ := ctx.Value(decisionAloneKey{}).(func() bool)
	return alone
}

// WithDecisionStart returns ctx carrying t as the time the work on the
// decision whose statement will be submitted with ctx began: in
// AnchorBatch mode a statement that finds the batcher idle since t (no
// batch in flight or collecting) is answered about the window after t
// (closeAt), while the decision is alone on its replica
// (WithDecisionAlone). The attestor sets both when it begins a proof with no
// other being made, so that a replica under load keeps whole windows.
func WithDecisionStart(ctx context.Context, t time.Time) context.Context {
	return context.WithValue(ctx, decisionStartKey{}, t)
}

// DecisionStart returns the time WithDecisionStart put in ctx.
func DecisionStart(ctx context.Context) (time.Time, bool) {
	t, ok := ctx.Value(decisionStartKey{}).(time.Time)
	return t, ok
}

// decisionStart is DecisionStart(ctx) for a statement that reached Submit
// at arrived: arrived when ctx has none or one after arrived.
func decisionStart(ctx context.Context, arrived time.Time) time.Time {
	if t, ok := DecisionStart(ctx); ok && t.Before(arrived) {
		return t
	}
	return arrived
}

// anchoringSamples is how many recent batches' anchoring times the
// estimate looks at. It takes their median, not their mean, so that one
// slow batch (a stall, a busy moment) does not move the next close; it
// takes half of them being slow (a slow chain) to move it that much.
const anchoringSamples = 8

// observeAnchoring adds the anchoring time d of a batch to the estimate.
func (b *batcher) observeAnchoring(d time.Duration) {
	d = min(max(d, 0), b.window)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.recent[b.seen%len(b.recent)] = d
	b.seen++
	recent := slices.Clone(b.recent[:min(b.seen, len(b.recent))])
	slices.Sort(recent)
	b.anchoring = recent[(len(recent)-1)/2]
}

func newBatcher(l *Ledger) *batcher {
	b := &batcher{l: l, size: l.opts.batchSize, window: l.opts.batchWindow,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
	go b.run()
	return b
}

// enqueue queues a leaf handed to Submit at arrived, for a decision begun
// at start (counted only if the batcher was idle since: waiter.start) and
// alone on its replica as long as alone says (nil: always), or returns
// ErrClosed.
func (b *batcher) enqueue(leaf, circuitID *big.Int, arrived, start time.Time, alone func() bool) (*waiter, error) {
	w := &waiter{leaf: leaf, circuitID: circuitID, at: arrived, start: start, alone: alone, done: make(chan struct{})}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, ErrClosed
	}
	w.idle = !b.inflight
	if !w.idle || len(b.pending) > 0 || b.idleSince.After(start) {
		w.start = arrived // the decision began while the replica was busy
	}
	b.pending = append(b.pending, w)
	select {
	case b.kick <- struct{}{}:
	default:
	}
	return w, nil
}

// close fails every queued statement with ErrClosed and stops run; an
// anchoring in flight fails on the closed chain.
func (b *batcher) close() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	pending := b.pending
	b.pending = nil
	b.mu.Unlock()
	close(b.stop)
	for _, w := range pending {
		w.err = fmt.Errorf("%w: %w: the statement was queued for a batch that was never sent", ErrBatchFailed, ErrClosed)
		close(w.done)
	}
}

func (b *batcher) run() {
	defer close(b.stopped)
	for {
		batch := b.next()
		if batch == nil {
			return
		}
		b.anchor(batch)
	}
}

// next waits until a batch closes (size statements queued, or closeAt of
// the earliest of them passed) and takes it; nil once the batcher is
// closed.
func (b *batcher) next() []*waiter {
	for {
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			return nil
		}
		var timer *time.Timer
		var wait <-chan time.Time
		if n := len(b.pending); n > 0 {
			first := b.pending[0]
			for _, w := range b.pending[1:min(n, b.size)] {
				if w.at.Before(first.at) {
					first = w
				}
			}
			until := time.Until(closeAt(first.at, first.windowStart(), first.idle, b.window, b.anchoring))
			if n >= b.size || until <= 0 {
				k := min(n, b.size)
				batch := slices.Clone(b.pending[:k])
				b.pending = slices.Delete(b.pending, 0, k)
				b.inflight = true
				b.mu.Unlock()
				return batch
			}
			timer = time.NewTimer(until)
			wait = timer.C
		}
		b.mu.Unlock()
		select {
		case <-b.stop:
		case <-b.kick:
		case <-wait:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// anchor records batch's root and answers every statement in it.
func (b *batcher) anchor(batch []*waiter) {
	answer := func(rc Receipt, tree *statement.Tree, err error) {
		// No batch is in flight from here on: a statement its answer
		// prompts (the next request of a client that waited) is idle, and
		// with none collecting, a decision begun from now on counts its
		// window from its start.
		b.mu.Lock()
		b.inflight = false
		if len(b.pending) == 0 {
			b.idleSince = time.Now()
		}
		b.mu.Unlock()
		for i, w := range batch {
			w.rc = rc
			if err != nil {
				w.err = fmt.Errorf("%w (a batch of %d statements): %w", ErrBatchFailed, len(batch), err)
			} else if p, perr := tree.Batch(i); perr != nil {
				w.rc.Verified, w.err = false, fmt.Errorf("%w: %w", ErrBatchFailed, perr)
			} else {
				w.rc.Batch = &p
			}
			close(w.done)
		}
	}
	leaves := make([]*big.Int, len(batch))
	ids := make([]*big.Int, len(batch))
	for i, w := range batch {
		leaves[i], ids[i] = w.leaf, w.circuitID
	}
	tree, err := statement.NewTree(leaves)
	if err != nil {
		answer(Receipt{}, nil, err)
		return
	}
	// The anchoring is the Ledger's, not any one caller's: a caller that
	// gives up leaves its statement in the batch.
	ctx, cancel := context.WithTimeout(context.Background(), b.l.opts.submitTimeout)
	defer cancel()
	go func() {
		select {
		case <-b.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	sent := time.Now()
	rc, err := b.l.recordBatch(ctx, tree, ids)
	if err == nil {
		b.observeAnchoring(time.Since(sent))
		b.l.opts.logger.DebugContext(ctx, "chain: batch anchored", "size", tree.Size(), "tx", rc.TxHash, "gas", rc.GasUsed)
	} else {
		b.l.opts.logger.WarnContext(ctx, "chain: batch not anchored", "size", tree.Size(), "err", err)
	}
	answer(rc, tree, err)
}

// recordBatch sends one recordBatch transaction for tree, waits for it to
// be mined and confirmed, and checks that its BatchRecorded event holds
// exactly the root, size and circuit ids sent, from this Ledger's key.
func (l *Ledger) recordBatch(ctx context.Context, tree *statement.Tree, ids []*big.Int) (Receipt, error) {
	g := l.Governed()
	data, err := g.RecordBatch(tree.Root(), tree.Size(), ids)
	if err != nil {
		return Receipt{}, err
	}
	want, err := DecodeRecordBatchCall(data)
	if err != nil {
		return Receipt{}, err
	}
	r, err := l.transact(ctx, g.Address(), data, batchGasLimit(len(want.CircuitIDs)))
	if errors.Is(err, ErrReverted) {
		return receiptOf(r, false), l.whyReverted(ctx, g, data, err)
	}
	if err != nil {
		return receiptOf(r, false), err
	}
	check := func(r *types.Receipt) error {
		ev, err := g.DecodeBatch(r)
		if err != nil {
			return err
		}
		if ev.Root.Cmp(want.Root) != 0 || ev.Size != want.Size.Uint64() || ev.Submitter != l.from ||
			!slices.EqualFunc(ev.CircuitIDs, want.CircuitIDs, func(a, b *big.Int) bool { return a.Cmp(b) == 0 }) {
			return fmt.Errorf("%w: the receipt's BatchRecorded is not the batch sent", ErrRejected)
		}
		return nil
	}
	if err := check(r); err != nil {
		return receiptOf(r, false), err
	}
	if n := l.opts.confirmations; n > 1 && l.blocks == nil {
		again, err := WaitConfirmations(ctx, l.client, r, n, l.opts.pollInterval)
		if err != nil {
			return receiptOf(r, false), unavailable(err)
		}
		if err := check(again); err != nil {
			return receiptOf(again, false), fmt.Errorf("after %d confirmations: %w", n, err)
		}
		r = again
	}
	return receiptOf(r, true), nil
}

// batchGasLimit is the gas limit of a recordBatch covering n circuit ids.
// Measured on the embedded chain (newest fork rules, where the new storage
// slot is ~98k state gas): ~140.6k for one circuit id; each more id costs a
// cold storage read and a word of event data. The limit leaves headroom for
// repricing.
func batchGasLimit(n int) uint64 {
	return 250_000 + 10_000*uint64(n)
}

// batchQueue returns the Ledger's batcher, started on first use; nil once
// the Ledger is closed (Close sets closed before it takes batchMu).
func (l *Ledger) batchQueue() *batcher {
	l.batchMu.Lock()
	defer l.batchMu.Unlock()
	if l.batcher == nil && !l.closed.Load() {
		l.batcher = newBatcher(l)
	}
	return l.batcher
}

// submitBatched verifies a statement's proof and its issuer, queues its
// leaf and waits for its batch to be anchored.
func (l *Ledger) submitBatched(ctx context.Context, kind Kind, proof [8]*big.Int, inputs []*big.Int) (Receipt, error) {
	arrived := time.Now()
	id := CircuitID(kind)
	if err := governedInputs(kind, inputs); err != nil {
		return Receipt{}, err
	}
	ok, err := l.checkGoverned(ctx, kind, proof, inputs)
	if err != nil {
		return Receipt{}, err
	}
	if !ok {
		return Receipt{}, fmt.Errorf("%w: the verifier bound to %q refused the proof: nothing queued", ErrRejected, string(kind))
	}
	active, err := l.Governed().IsIssuerActive(ctx, inputs[0], nil)
	if err != nil {
		return Receipt{}, unavailable(err)
	}
	if !active {
		return Receipt{}, ErrIssuerNotActive
	}
	leaf, err := statement.Leaf(inputs[0], inputs[1], inputs[2])
	if err != nil {
		return Receipt{}, fmt.Errorf("%w: %w", ErrRejected, err)
	}
	b := l.batchQueue()
	if b == nil {
		return Receipt{}, ErrClosed
	}
	w, err := b.enqueue(leaf, id, arrived, decisionStart(ctx, arrived), DecisionAlone(ctx))
	if err != nil {
		return Receipt{}, err
	}
	select {
	case <-w.done:
		return w.rc, w.err
	case <-ctx.Done():
		return Receipt{}, fmt.Errorf("chain: waiting for the statement's batch: %w", ctx.Err())
	}
}
