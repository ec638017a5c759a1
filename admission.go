package healthagents

import (
	"context"
	"sync"
)

// Admission slots. The server runs a bounded number of proof requests at
// once (MAX_IN_FLIGHT, one per core): a proof keeps a core busy. With batch
// anchoring (CHAIN_ANCHOR=batch) a proven decision then waits for its
// batch to close and be mined — up to CHAIN_BATCH_WINDOW, using no CPU —
// and a slot held through that wait would cap every batch at MAX_IN_FLIGHT
// decisions. So the server puts a release of the request's slot in its
// context, and the attestor calls ReleaseSlot once the proof is made and
// the decision only waits for the chain.

type slotKey struct{}

// WithSlotRelease returns ctx carrying release, which gives back the
// admission slot the request holds. ReleaseSlot calls it at most once, and
// the holder's own release after it must do nothing (wrap it in a
// sync.Once, as the server does).
func WithSlotRelease(ctx context.Context, release func()) context.Context {
	var once sync.Once
	return context.WithValue(ctx, slotKey{}, func() { once.Do(release) })
}

// ReleaseSlot gives back the admission slot of the request ctx belongs
// to, if it holds one; otherwise it does nothing.
func ReleaseSlot(ctx context.Context) {
	if f, ok := ctx.Value(slotKey{}).(func()); ok {
		f()
	}
}
