package chain_test

import (
	"context"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/chain"
	zst "github.com/healthagents/healthagents/zkp/statement"
)

// batchLedger is a simulated chain whose Ledger anchors in batches.
func batchLedger(t *testing.T, size int, window time.Duration) *chain.Ledger {
	t.Helper()
	return newLedger(t, chain.WithAnchor(chain.AnchorBatch, size, window))
}

// submitAll submits the statements x of xs concurrently.
func submitAll(t *testing.T, ctx context.Context, l *chain.Ledger, xs []int64) ([]chain.Receipt, []error) {
	t.Helper()
	sts := make([]provedStatement, len(xs))
	for i, x := range xs {
		sts[i] = prove(t, x)
	}
	rcs, errs := make([]chain.Receipt, len(xs)), make([]error, len(xs))
	var wg sync.WaitGroup
	for i := range xs {
		wg.Go(func() { rcs[i], errs[i] = l.Submit(ctx, fixtureKind, sts[i].proof, sts[i].inputs) })
	}
	wg.Wait()
	return rcs, errs
}

// checkAnchored checks that every receipt holds a path from its statement's
// leaf to the root its transaction's BatchRecorded event recorded, that
// each batch's size is the number of statements answered from it (when
// whole: every caller waited), and returns the batches' events by
// transaction.
func checkAnchored(t *testing.T, l *chain.Ledger, xs []int64, rcs []chain.Receipt, whole bool) map[common.Hash]chain.BatchRecorded {
	t.Helper()
	ctx := t.Context()
	g := l.Governed()
	events := map[common.Hash]chain.BatchRecorded{}
	answered := map[common.Hash]int{}
	indices := map[common.Hash]map[int]bool{}
	for i, rc := range rcs {
		require.True(t, rc.Verified, "statement %d", i)
		require.NotNil(t, rc.Batch, "statement %d", i)
		ev, ok := events[rc.TxHash]
		if !ok {
			r, err := l.Client().TransactionReceipt(ctx, rc.TxHash)
			require.NoError(t, err)
			ev, err = g.DecodeBatch(r)
			require.NoError(t, err)
			assert.Equal(t, rc.BlockNumber, ev.Block)
			assert.Equal(t, l.Account(), ev.Submitter)
			assert.True(t, ev.Covers(chain.CircuitID(fixtureKind)))
			events[rc.TxHash] = ev
			indices[rc.TxHash] = map[int]bool{}
		}
		answered[rc.TxHash]++
		leaf, err := zst.Leaf(big.NewInt(fixtureIssuer), big.NewInt(xs[i]), chain.CircuitID(fixtureKind))
		require.NoError(t, err)
		assert.Equal(t, 0, rc.Batch.Root.Cmp(ev.Root), "statement %d: the receipt's root is the recorded one", i)
		assert.EqualValues(t, ev.Size, rc.Batch.Size)
		require.NoError(t, rc.Batch.Check(leaf), "statement %d: its path leads to the root", i)
		got, err := rc.Batch.RootOf(leaf)
		require.NoError(t, err)
		assert.Equal(t, 0, got.Cmp(ev.Root))
		assert.False(t, indices[rc.TxHash][rc.Batch.Index], "two statements at one index")
		indices[rc.TxHash][rc.Batch.Index] = true
		// Another statement's leaf does not sit at this index.
		other, err := zst.Leaf(big.NewInt(fixtureIssuer), big.NewInt(xs[i]+1_000_000), chain.CircuitID(fixtureKind))
		require.NoError(t, err)
		require.ErrorIs(t, rc.Batch.Check(other), zst.ErrNotInBatch)
	}
	for tx, n := range answered {
		if !whole {
			break
		}
		assert.EqualValues(t, n, events[tx].Size, "batch %s answers every statement it holds", tx.Hex())
	}
	return events
}

func xsFrom(base int64, n int) []int64 {
	xs := make([]int64, n)
	for i := range xs {
		xs[i] = base + int64(i)
	}
	return xs
}

// TestBatchClosesAtSize: with a window far longer than the test, 12
// concurrent statements and a batch size of 4 are anchored as three full
// batches, one after the other (one batch in flight: each batch's block
// follows the previous one's), and every path checks against its root.
func TestBatchClosesAtSize(t *testing.T) {
	t.Parallel()
	l := batchLedger(t, 4, time.Hour)
	mode, size, window := l.Anchor()
	assert.Equal(t, chain.AnchorBatch, mode)
	assert.Equal(t, 4, size)
	assert.Equal(t, time.Hour, window)
	xs := xsFrom(200, 12)
	rcs, errs := submitAll(t, t.Context(), l, xs)
	for i, err := range errs {
		require.NoError(t, err, "statement %d", i)
	}
	events := checkAnchored(t, l, xs, rcs, true)
	require.Len(t, events, 3)
	blocks := map[uint64]bool{}
	for _, ev := range events {
		assert.EqualValues(t, 4, ev.Size)
		assert.False(t, blocks[ev.Block], "one batch in flight: never two in one block")
		blocks[ev.Block] = true
	}
	t.Logf("recordBatch of 4 statements: %d gas (%d per statement)", rcs[0].GasUsed, rcs[0].GasUsed/4)
}

// TestBatchClosesAtWindow: a batch size never reached closes by its
// window; a batch of one has its leaf as root and an empty path.
func TestBatchClosesAtWindow(t *testing.T) {
	t.Parallel()
	l := batchLedger(t, chain.MaxBatch, 20*time.Millisecond)
	xs := xsFrom(300, 3)
	rcs, errs := submitAll(t, t.Context(), l, xs)
	for i, err := range errs {
		require.NoError(t, err, "statement %d", i)
	}
	for _, ev := range checkAnchored(t, l, xs, rcs, true) {
		assert.Less(t, ev.Size, uint64(chain.MaxBatch))
	}
	// The batcher timed the anchoring (the next batch closes that much
	// before its window, closeAt), counting at most the window.
	est := chain.AnchoringEstimateForTest(l)
	assert.Positive(t, est, "an anchored batch's time is observed")
	assert.LessOrEqual(t, est, 20*time.Millisecond)

	// Once a batch is answered none is in flight: the next statement is
	// sent by closeAt's idle rule.
	assert.False(t, chain.InflightForTest(l))
	one := prove(t, 310)
	rc, err := l.Submit(t.Context(), fixtureKind, one.proof, one.inputs)
	require.NoError(t, err)
	assert.False(t, chain.InflightForTest(l))
	checkAnchored(t, l, []int64{310}, []chain.Receipt{rc}, true)
	assert.Equal(t, 1, rc.Batch.Size)
	assert.Empty(t, rc.Batch.Path)
	t.Logf("recordBatch of 1 statement: %d gas", rc.GasUsed)
}

// TestBatchWindowFromDecisionStart: on an idle replica a batch's window
// runs from its decision's start (chain.WithDecisionStart): a decision
// begun an hour ago is anchored at once under an hour's window. One begun
// before that batch was answered began on a busy replica: its window runs
// from its arrival at Submit, so it is still waiting when its context ends.
func TestBatchWindowFromDecisionStart(t *testing.T) {
	t.Parallel()
	l := batchLedger(t, chain.MaxBatch, time.Hour)
	began := time.Now().Add(-time.Hour)
	first := prove(t, 320)
	rc, err := l.Submit(chain.WithDecisionStart(t.Context(), began), fixtureKind, first.proof, first.inputs)
	require.NoError(t, err, "begun a window ago on an idle replica: sent at once")
	checkAnchored(t, l, []int64{320}, []chain.Receipt{rc}, true)

	second := prove(t, 321)
	ctx, cancel := context.WithTimeout(chain.WithDecisionStart(t.Context(), began), 2*time.Second)
	defer cancel()
	_, err = l.Submit(ctx, fixtureKind, second.proof, second.inputs)
	require.ErrorIs(t, err, context.DeadlineExceeded, "begun before the last batch was answered: the window from its arrival")
}

// TestBatchRefusesBeforeQueueing: a proof the verifier refuses, an issuer
// not registered, an unbound kind and a statement not of the registry's
// shape are refused at once with the errors the registry's revert gives in
// each mode, and never enter a batch: the next two honest statements fill
// a batch of two between them.
func TestBatchRefusesBeforeQueueing(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	l := batchLedger(t, 2, time.Hour)
	honest := prove(t, 400)
	for name, tc := range tamperings(honest) {
		if name == "fail/inputs swapped" {
			continue // a true statement for the three-input circuit (TestRejected)
		}
		rc, err := l.Submit(ctx, fixtureKind, tc.proof, tc.inputs)
		require.ErrorIs(t, err, chain.ErrRejected, name)
		assert.Nil(t, rc.Batch, name)
		assert.Zero(t, chain.QueuedForTest(l), name)
	}
	proof, inputs := proveTriFor(t, fixtureKind, fixtureIssuer+1, 401)
	_, err := l.Submit(ctx, fixtureKind, proof, inputs)
	require.ErrorIs(t, err, chain.ErrIssuerNotActive)
	proof, inputs = proveTriFor(t, "unbound-v1", fixtureIssuer, 402)
	_, err = l.Submit(ctx, "unbound-v1", proof, inputs)
	require.ErrorIs(t, err, chain.ErrUnknownKind)
	assert.Zero(t, chain.QueuedForTest(l))

	// Were any refused statement queued, one of these would wait an hour.
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	xs := []int64{403, 404}
	rcs, errs := submitAll(t, wctx, l, xs)
	for i, err := range errs {
		require.NoError(t, err, "statement %d", i)
	}
	events := checkAnchored(t, l, xs, rcs, true)
	require.Len(t, events, 1)
	assert.Equal(t, rcs[0].TxHash, rcs[1].TxHash)
}

// TestBatchWaiterGivesUp: a caller whose context ends gets its context's
// error, and its statement stays in the batch, which the next statement
// closes.
func TestBatchWaiterGivesUp(t *testing.T) {
	t.Parallel()
	l := batchLedger(t, 2, time.Hour)
	first := prove(t, 500)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := l.Submit(ctx, fixtureKind, first.proof, first.inputs)
		done <- err
	}()
	waitQueued(t, l, 1)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)

	second := prove(t, 501)
	rc, err := l.Submit(t.Context(), fixtureKind, second.proof, second.inputs)
	require.NoError(t, err)
	checkAnchored(t, l, []int64{501}, []chain.Receipt{rc}, false)
	assert.Equal(t, 2, rc.Batch.Size, "the first statement stayed in the batch")
	assert.Equal(t, 1, rc.Batch.Index)
}

// TestBatchClose: Close fails the statements waiting for a batch.
func TestBatchClose(t *testing.T) {
	t.Parallel()
	l := batchLedger(t, 2, time.Hour)
	st := prove(t, 600)
	done := make(chan error, 1)
	go func() {
		_, err := l.Submit(t.Context(), fixtureKind, st.proof, st.inputs)
		done <- err
	}()
	waitQueued(t, l, 1)
	require.NoError(t, l.Close())
	err := <-done
	require.ErrorIs(t, err, chain.ErrBatchFailed)
	require.ErrorIs(t, err, chain.ErrClosed)
	_, err = l.Submit(t.Context(), fixtureKind, st.proof, st.inputs)
	require.ErrorIs(t, err, chain.ErrClosed)
}

// TestBatchFails: a batch the registry reverts fails every statement in it
// (nothing answered as verified): here the key stopped being a submitter,
// and then a root recorded already.
func TestBatchFails(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	l := batchLedger(t, 2, time.Hour)

	// A batch of one, then the same statement alone again: its root (the
	// leaf) is recorded already.
	solo := newLedger(t, chain.WithAnchor(chain.AnchorBatch, 1, time.Hour))
	st := prove(t, 700)
	_, err := solo.Submit(ctx, fixtureKind, st.proof, st.inputs)
	require.NoError(t, err)
	rc, err := solo.Submit(ctx, fixtureKind, st.proof, st.inputs)
	require.ErrorIs(t, err, chain.ErrBatchFailed)
	require.ErrorIs(t, err, chain.ErrReverted)
	assert.False(t, rc.Verified)
	assert.Nil(t, rc.Batch)

	_, err = l.Govern(ctx, l.Governed().SetSubmitter(l.Account(), false))
	require.NoError(t, err)
	xs := []int64{701, 702}
	rcs, errs := submitAll(t, ctx, l, xs)
	for i := range xs {
		require.ErrorIs(t, errs[i], chain.ErrBatchFailed, "statement %d", i)
		require.ErrorIs(t, errs[i], chain.ErrNotSubmitter, "statement %d", i)
		assert.False(t, rcs[i].Verified)
		assert.Nil(t, rcs[i].Batch)
	}
}

func TestWithAnchorValidates(t *testing.T) {
	t.Parallel()
	for name, opt := range map[string]chain.Option{
		"fail/unknown mode": chain.WithAnchor("sometimes", 4, time.Second),
		"fail/size 0":       chain.WithAnchor(chain.AnchorBatch, 0, time.Second),
		"fail/size 1025":    chain.WithAnchor(chain.AnchorBatch, chain.MaxBatch+1, time.Second),
		"fail/no window":    chain.WithAnchor(chain.AnchorBatch, 4, 0),
	} {
		_, err := chain.NewSimulated(t.Context(), opt)
		require.Error(t, err, name)
	}
	_, err := chain.ParseAnchorMode("Batch")
	require.Error(t, err)
	m, err := chain.ParseAnchorMode("each")
	require.NoError(t, err)
	assert.Equal(t, chain.AnchorEach, m)
	l := shared(t)
	mode, size, _ := l.Anchor()
	assert.Equal(t, chain.AnchorEach, mode, "each is the Ledger's default")
	assert.Zero(t, size)
}

// waitQueued waits until n statements wait for a batch.
func waitQueued(t *testing.T, l *chain.Ledger, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return chain.QueuedForTest(l) == n }, time.Minute, 5*time.Millisecond)
}

// TestOneBlockPerTransaction: on the simulated chain a transaction waited
// for costs one block: its sender does not ask for another while the block
// its send asked for is sealed, so consecutive submissions land in
// consecutive blocks and the head is the last one's (no empty block sealed,
// and flushed, between them).
func TestOneBlockPerTransaction(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	for _, l := range []*chain.Ledger{newLedger(t), batchLedger(t, 1, time.Hour)} {
		mode := l.AnchorName()
		var blocks []uint64
		for i := range 4 {
			st := prove(t, int64(800+10*len(mode)+i))
			rc, err := l.Submit(ctx, fixtureKind, st.proof, st.inputs)
			require.NoError(t, err, mode)
			blocks = append(blocks, rc.BlockNumber)
		}
		for i := 1; i < len(blocks); i++ {
			assert.Equal(t, blocks[i-1]+1, blocks[i], "%s: blocks %v", mode, blocks)
		}
		head, err := l.Client().HeaderByNumber(ctx, nil)
		require.NoError(t, err)
		assert.Equal(t, blocks[len(blocks)-1], head.Number.Uint64(), "%s: no block after the last transaction's", mode)
	}
}
