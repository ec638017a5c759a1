package chain

import (
	"math/big"
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
	_, err := b.enqueue(big.NewInt(1), big.NewInt(9), time.Now())
	require.NoError(t, err)
	_, err = b.enqueue(big.NewInt(2), big.NewInt(9), time.Now().Add(-2*time.Minute))
	require.NoError(t, err)
	got := make(chan []*waiter, 1)
	go func() { got <- b.next() }()
	select {
	case batch := <-got:
		require.Len(t, batch, 2)
		assert.Equal(t, int64(1), batch[0].leaf.Int64(), "queue order kept")
	case <-time.After(30 * time.Second):
		close(b.stop)
		b.mu.Lock()
		b.closed = true
		b.mu.Unlock()
		t.Fatal("the batch waited a window from its first-queued statement")
	}
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
