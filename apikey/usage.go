package apikey

import (
	"context"
	"math/bits"
	"slices"
	"sync"
	"time"
)

// UsageCount is one cell of a key's usage histogram: requests (and how many
// of them failed) in one minute whose latency fell in one bucket.
type UsageCount struct {
	KeyID    string
	Minute   int64 // Unix time / 60
	Bucket   int   // LatencyBucket of the request latency
	Requests int64
	Errors   int64
}

// Usage is what GET /api/keys/{key_id}/usage reports for a window.
type Usage struct {
	KeyID    string        `json:"key_id"`
	From     time.Time     `json:"from"`
	To       time.Time     `json:"to"`
	Requests int64         `json:"requests"`
	Errors   int64         `json:"errors"`
	P50      time.Duration `json:"-"`
	P95      time.Duration `json:"-"`
	P99      time.Duration `json:"-"`
}

// subBuckets per power of two: latencies are kept to within 1/16 (6.25 %).
const subBits = 4

// LatencyBucket maps a latency to its histogram bucket: exact below 16 µs,
// then 16 buckets per power of two of microseconds (log-linear, like HDR
// histograms), so a percentile is exact to within 6.25 %.
func LatencyBucket(d time.Duration) int {
	us := d.Microseconds()
	if us < 0 {
		us = 0
	}
	v := uint64(us)
	if v < 1<<subBits {
		return int(v)
	}
	e := bits.Len64(v) - 1 // ≥ subBits
	sub := int(v>>(e-subBits)) - 1<<subBits
	return 1<<subBits + (e-subBits)<<subBits + sub
}

// bucketBounds returns the [low, high) latency range of a bucket.
func bucketBounds(b int) (low, high time.Duration) {
	if b < 1<<subBits {
		return time.Duration(b) * time.Microsecond, time.Duration(b+1) * time.Microsecond
	}
	e := (b-1<<subBits)>>subBits + subBits
	sub := (b - 1<<subBits) & (1<<subBits - 1)
	shift := e - subBits
	lo := uint64(1<<subBits+sub) << shift
	hi := uint64(1<<subBits+sub+1) << shift
	return time.Duration(lo) * time.Microsecond, time.Duration(hi) * time.Microsecond
}

// percentiles computes nearest-rank percentiles from bucket counts; each is
// reported as its bucket's midpoint.
func percentiles(counts map[int]int64, total int64, ps ...float64) []time.Duration {
	out := make([]time.Duration, len(ps))
	if total == 0 {
		return out
	}
	var bs []int
	for b := range counts {
		bs = append(bs, b)
	}
	slices.Sort(bs)
	for i, p := range ps {
		rank := int64(p*float64(total) + 0.999999999) // ceil, p in (0,1]
		if rank < 1 {
			rank = 1
		}
		var seen int64
		for _, b := range bs {
			seen += counts[b]
			if seen >= rank {
				lo, hi := bucketBounds(b)
				out[i] = lo + (hi-lo)/2
				break
			}
		}
	}
	return out
}

type usageCell struct {
	key    string
	minute int64
	bucket int
}

type usageTotals struct{ requests, errors int64 }

// usageBuffer aggregates usage in memory between flushes: a request costs a
// map update under a mutex, never a database write.
type usageBuffer struct {
	mu    sync.Mutex
	cells map[usageCell]usageTotals
	max   int           // flush early when this many cells are pending
	kick  chan struct{} // wakes the flusher early
}

func (b *usageBuffer) add(keyID string, at time.Time, status int, latency time.Duration) {
	c := usageCell{key: keyID, minute: at.Unix() / 60, bucket: LatencyBucket(latency)}
	b.mu.Lock()
	t := b.cells[c]
	t.requests++
	if status >= 400 {
		t.errors++
	}
	b.cells[c] = t
	full := len(b.cells) >= b.max
	b.mu.Unlock()
	if full {
		select {
		case b.kick <- struct{}{}:
		default:
		}
	}
}

// take empties the buffer and returns its cells.
func (b *usageBuffer) take() []UsageCount {
	b.mu.Lock()
	cells := b.cells
	b.cells = make(map[usageCell]usageTotals, len(cells))
	b.mu.Unlock()
	out := make([]UsageCount, 0, len(cells))
	for c, t := range cells {
		out = append(out, UsageCount{KeyID: c.key, Minute: c.minute, Bucket: c.bucket, Requests: t.requests, Errors: t.errors})
	}
	return out
}

// putBack returns cells whose write failed, so the next flush retries them.
func (b *usageBuffer) putBack(counts []UsageCount) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, u := range counts {
		c := usageCell{key: u.KeyID, minute: u.Minute, bucket: u.Bucket}
		t := b.cells[c]
		t.requests += u.Requests
		t.errors += u.Errors
		b.cells[c] = t
	}
}

// flushLoop writes the buffer every interval until stop closes.
func (s *Service) flushLoop(interval time.Duration) {
	defer close(s.flushDone)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		case <-s.usage.kick:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := s.Flush(ctx); err != nil {
			s.logger.Warn("apikey: flushing usage failed; will retry", "err", err)
		}
		if now := s.now(); now.Sub(s.pruned) >= time.Hour {
			s.pruned = now
			if err := s.PruneUsage(ctx); err != nil {
				s.logger.Warn("apikey: pruning usage failed", "err", err)
			}
		}
		cancel()
	}
}
