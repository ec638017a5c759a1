package chain

import (
	"math/big"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBatchWindowFromArrival: a batch's window runs from when its earliest
// statement reached Submit (before its checks), not from when it was
// queued, and not from whichever was queued first: a statement that arrived
// a window ago closes its batch at once, even queued behind a newer one.
func TestBatchWindowFromArrival(t *testing.T) {
	t.Parallel()
	b := &batcher{size: 8, window: time.Minute, kick: make(chan struct{}, 1), stop: make(chan struct{})}
	_, err := b.enqueue(big.NewInt(1), big.NewInt(9), time.Now(), time.Now(), nil)
	require.NoError(t, err)
	_, err = b.enqueue(big.NewInt(2), big.NewInt(9), time.Now().Add(-2*time.Minute), time.Now().Add(-2*time.Minute), nil)
	require.NoError(t, err)
	batch := nextWithin(t, b, "the batch waited a window from its first-queued statement")
	require.Len(t, batch, 2)
	assert.Equal(t, int64(1), batch[0].leaf.Int64(), "queue order kept")
}

// nextWithin returns b.next()'s batch, or fails with msg if none closes
// within 30 s (a batch waiting for a minute's window: the rule under test
// did not close it), stopping b.
func nextWithin(t *testing.T, b *batcher, msg string) []*waiter {
	t.Helper()
	got := make(chan []*waiter, 1)
	go func() { got <- b.next() }()
	select {
	case batch := <-got:
		return batch
	case <-time.After(30 * time.Second):
		close(b.stop)
		b.mu.Lock()
		b.closed = true
		b.mu.Unlock()
		t.Fatal(msg)
		return nil
	}
}

// TestCloseAt: an unfilled batch whose earliest statement found no batch
// in flight closes the window after that statement's decision began (its
// proof's start) less the anchoring time, which counts for at most the
// whole window (a chain slower than the window: the batch closes at once)
// and never lengthens it; one whose earliest statement came while a batch
// was in flight collects for the whole window after the statement reached
// Submit, however long its proof took.
func TestCloseAt(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	window := 200 * time.Millisecond
	for name, tc := range map[string]struct {
		idle      bool
		proof     time.Duration // the statement's decision began this long before at
		anchoring time.Duration
		want      time.Duration // after at
	}{
		"idle/no estimate yet":            {true, 0, 0, window},
		"idle/a fast chain":               {true, 0, 6 * time.Millisecond, 194 * time.Millisecond},
		"idle/half the window":            {true, 0, 100 * time.Millisecond, 100 * time.Millisecond},
		"idle/exactly the window":         {true, 0, window, 0},
		"idle/a 12 s chain":               {true, 0, 12 * time.Second, 0},
		"idle/negative (clock stepped)":   {true, 0, -time.Second, window},
		"idle/an 80 ms proof":             {true, 80 * time.Millisecond, 6 * time.Millisecond, 114 * time.Millisecond},
		"idle/a proof longer than window": {true, 300 * time.Millisecond, 6 * time.Millisecond, -106 * time.Millisecond},
		"busy/a fast chain":               {false, 0, 6 * time.Millisecond, window},
		"busy/a 12 s chain":               {false, 0, 12 * time.Second, window},
		"busy/an 80 ms proof":             {false, 80 * time.Millisecond, 6 * time.Millisecond, window},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, at.Add(tc.want), closeAt(at, at.Add(-tc.proof), tc.idle, window, tc.anchoring))
		})
	}
}

// TestDecisionStart: a statement's decision start is the context's
// (WithDecisionStart) when it is before the statement reached Submit, and
// that arrival otherwise (none given, or a clock that stepped).
func TestDecisionStart(t *testing.T) {
	t.Parallel()
	arrived := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	ctx := t.Context()
	_, ok := DecisionStart(ctx)
	assert.False(t, ok)
	assert.Equal(t, arrived, decisionStart(ctx, arrived), "none given")
	began := arrived.Add(-70 * time.Millisecond)
	got, ok := DecisionStart(WithDecisionStart(ctx, began))
	assert.True(t, ok)
	assert.Equal(t, began, got)
	assert.Equal(t, began, decisionStart(WithDecisionStart(ctx, began), arrived))
	assert.Equal(t, arrived, decisionStart(WithDecisionStart(ctx, arrived.Add(time.Second)), arrived), "after the arrival")
}

// TestObserveAnchoring: the estimate is the median (the lower of the
// middle two) of the last anchoringSamples batches' anchoring times, a
// time longer than the window counting as the window: one slow batch does
// not move it, a chain that stays slow does, and it comes back once the
// chain is fast again.
func TestObserveAnchoring(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	b := &batcher{window: 200 * ms}
	b.observeAnchoring(12 * ms)
	assert.Equal(t, 12*ms, b.anchoring, "the first batch sets it")
	b.observeAnchoring(150 * ms) // one stall
	assert.Equal(t, 12*ms, b.anchoring, "the lower of the middle two")
	b.observeAnchoring(14 * ms)
	assert.Equal(t, 14*ms, b.anchoring)
	for range anchoringSamples - 3 {
		b.observeAnchoring(13 * ms)
	}
	assert.Equal(t, 13*ms, b.anchoring)
	for range anchoringSamples / 2 {
		b.observeAnchoring(12 * time.Second) // a slow chain, counted as 200 ms
	}
	assert.Equal(t, 13*ms, b.anchoring, "half the samples slow: the lower middle is still fast")
	b.observeAnchoring(12 * time.Second)
	assert.Equal(t, 200*ms, b.anchoring, "counted as the window at most")
	for range anchoringSamples / 2 {
		b.observeAnchoring(-time.Second) // counted as zero
	}
	assert.Equal(t, time.Duration(0), b.anchoring, "fast again")
}

// TestBatchClosesEarlierByAnchoringTime: next closes a batch at closeAt:
// with anchoring known to take the whole window, a statement queued on an
// idle batcher is sent at once instead of a minute later. A statement
// queued while that batch is in flight is not idle: its batch will collect
// for the whole window (closeAt), and is sent once the one in flight is
// answered.
func TestBatchClosesEarlierByAnchoringTime(t *testing.T) {
	t.Parallel()
	b := &batcher{size: 8, window: time.Minute, kick: make(chan struct{}, 1), stop: make(chan struct{})}
	b.observeAnchoring(2 * time.Minute)
	w, err := b.enqueue(big.NewInt(1), big.NewInt(9), time.Now(), time.Now(), nil)
	require.NoError(t, err)
	assert.True(t, w.idle)
	batch := nextWithin(t, b, "the batch waited the whole window although anchoring takes all of it")
	require.Len(t, batch, 1)
	busy, err := b.enqueue(big.NewInt(2), big.NewInt(9), time.Now(), time.Now().Add(-time.Minute), nil)
	require.NoError(t, err)
	assert.False(t, busy.idle, "queued while a batch is in flight")
	assert.Equal(t, busy.at.Add(time.Minute), closeAt(busy.at, busy.start, busy.idle, b.window, b.anchoring))
}

// TestIdleBatchCountsFromItsDecisionStart: on an idle batcher the window
// runs from the statement's decision start (its proof's), not from its
// arrival at Submit: a statement whose proof began a window ago is sent at
// once, not a minute later.
func TestIdleBatchCountsFromItsDecisionStart(t *testing.T) {
	t.Parallel()
	b := &batcher{size: 8, window: time.Minute, kick: make(chan struct{}, 1), stop: make(chan struct{})}
	now := time.Now()
	w, err := b.enqueue(big.NewInt(1), big.NewInt(9), now, now.Add(-time.Minute), nil)
	require.NoError(t, err)
	require.True(t, w.idle)
	batch := nextWithin(t, b, "the batch waited a window from the statement's arrival, not from its decision's start")
	require.Len(t, batch, 1)
}

// TestDecisionStartCountsOnlyOnAnIdleReplica: a statement's decision start
// counts (closeAt) only if the batcher was idle from then until the
// statement was queued: not for a decision begun before the last batch was
// answered (it began on a busy replica, and under load that keeps batches
// their size), not for one joining a batch that is collecting, not for one
// queued while a batch is in flight.
func TestDecisionStartCountsOnlyOnAnIdleReplica(t *testing.T) {
	t.Parallel()
	now := time.Now()
	began := now.Add(-80 * time.Millisecond)
	b := &batcher{size: 8, window: time.Minute, kick: make(chan struct{}, 1), stop: make(chan struct{})}

	b.idleSince = now.Add(-time.Second)
	w, err := b.enqueue(big.NewInt(1), big.NewInt(9), now, began, nil)
	require.NoError(t, err)
	assert.Equal(t, began, w.start, "idle since before the decision began")
	joined, err := b.enqueue(big.NewInt(2), big.NewInt(9), now, began, nil)
	require.NoError(t, err)
	assert.Equal(t, now, joined.start, "joined a collecting batch")

	b.pending, b.idleSince = nil, now.Add(-40*time.Millisecond)
	w, err = b.enqueue(big.NewInt(3), big.NewInt(9), now, began, nil)
	require.NoError(t, err)
	assert.Equal(t, now, w.start, "the last batch was answered after the decision began")
	assert.True(t, w.idle, "still idle: the window less anchoring, from the arrival")

	b.pending, b.inflight = nil, true
	w, err = b.enqueue(big.NewInt(4), big.NewInt(9), now, began, nil)
	require.NoError(t, err)
	assert.Equal(t, now, w.start, "a batch in flight")
	assert.False(t, w.idle)
}

// TestDecisionAlone: a queued statement's decision start counts for its
// batch's window while its decision is alone on the replica
// (WithDecisionAlone), and no longer once another decision began: then the
// window runs from its arrival, and next waits for it.
func TestDecisionAlone(t *testing.T) {
	t.Parallel()
	now := time.Now()
	began := now.Add(-time.Minute)
	var others atomic.Bool
	alone := DecisionAlone(WithDecisionAlone(t.Context(), func() bool { return !others.Load() }))
	require.NotNil(t, alone)
	assert.Nil(t, DecisionAlone(t.Context()), "none given")

	b := &batcher{size: 8, window: time.Minute, kick: make(chan struct{}, 1), stop: make(chan struct{})}
	w, err := b.enqueue(big.NewInt(1), big.NewInt(9), now, began, alone)
	require.NoError(t, err)
	assert.Equal(t, began, w.windowStart(), "alone")
	others.Store(true)
	assert.Equal(t, now, w.windowStart(), "another decision began")
	assert.Equal(t, began, (&waiter{at: now, start: began}).windowStart(), "no alone given: always")

	got := make(chan []*waiter, 1)
	go func() { got <- b.next() }()
	select {
	case <-got:
		t.Fatal("sent at once although its decision is no longer alone: its window runs a minute from its arrival")
	case <-time.After(300 * time.Millisecond):
	}
	b.close()
	assert.Nil(t, <-got)
}

// TestSettleWaitsOnlyForUnflushedBlocks: a receipt's block known flushed is
// reported at once even while a later block is being sealed; one not known
// flushed waits until the block being sealed (and flushed) is done.
func TestSettleWaitsOnlyForUnflushedBlocks(t *testing.T) {
	t.Parallel()
	sealing, release := make(chan struct{}), make(chan struct{})
	p := newProducer(func() common.Hash {
		close(sealing)
		<-release
		return common.Hash{}
	}, 0, nil)
	defer p.stop()
	p.flushed = func() uint64 { return 5 }
	p.request()
	<-sealing // block 6 is being sealed

	p.settle(5) // returns at once: block 5 is on disk

	settled := make(chan struct{})
	go func() {
		p.settle(6)
		close(settled)
	}()
	select {
	case <-settled:
		t.Fatal("a receipt of the block being sealed was reported before its flush")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	<-settled
}
