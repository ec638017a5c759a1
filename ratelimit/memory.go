package ratelimit

import (
	"context"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// memory is the in-process backend: a golang.org/x/time/rate limiter per
// token bucket, a counter per calendar window. One mutex makes the
// check-all-then-take step atomic across a request's rules.
type memory struct {
	mu        sync.Mutex
	buckets   map[string]*rate.Limiter
	windows   map[string]*window
	lastSweep time.Time
	sweepMin  time.Duration
}

type window struct {
	start  time.Time
	length time.Duration
	count  int
}

func newMemory(sweep time.Duration) *memory {
	return &memory{buckets: map[string]*rate.Limiter{}, windows: map[string]*window{}, sweepMin: sweep}
}

func everyFor(r Rule) rate.Limit {
	return rate.Limit(float64(r.Limit) / r.Window.Seconds())
}

func (m *memory) Take(_ context.Context, now time.Time, rules []Rule, n int) ([]State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if now.Sub(m.lastSweep) >= m.sweepMin {
		m.sweep(now)
		m.lastSweep = now
	}
	states := make([]State, len(rules))
	ok := true
	for i, r := range rules {
		switch r.Kind {
		case CalendarWindow:
			w := m.window(r, now)
			states[i] = State{Allowed: w.count+n <= r.Limit, Reset: w.start.Add(r.Window)}
			if !states[i].Allowed {
				states[i].RetryAfter = w.start.Add(r.Window).Sub(now)
			}
		default:
			lim := m.bucket(r, now)
			tokens := lim.TokensAt(now)
			states[i] = State{Allowed: tokens >= float64(n)}
			if !states[i].Allowed {
				states[i].RetryAfter = secondsDur((float64(n) - tokens) / float64(lim.Limit()))
			}
		}
		ok = ok && states[i].Allowed
	}
	for i, r := range rules {
		switch r.Kind {
		case CalendarWindow:
			w := m.window(r, now)
			if ok {
				w.count += n
			}
			states[i].Remaining = max(r.Limit-w.count, 0)
		default:
			lim := m.bucket(r, now)
			if ok {
				lim.AllowN(now, n)
			}
			tokens := lim.TokensAt(now)
			states[i].Remaining = max(int(math.Floor(tokens)), 0)
			states[i].Reset = now.Add(secondsDur((float64(r.Limit) - tokens) / float64(lim.Limit())))
		}
	}
	return states, nil
}

func (m *memory) bucket(r Rule, now time.Time) *rate.Limiter {
	lim, ok := m.buckets[r.Bucket]
	if !ok {
		lim = rate.NewLimiter(everyFor(r), r.Limit) // starts full
		m.buckets[r.Bucket] = lim
		return lim
	}
	if lim.Burst() != r.Limit || lim.Limit() != everyFor(r) { // the key's tier or override changed
		lim.SetLimitAt(now, everyFor(r))
		lim.SetBurstAt(now, r.Limit)
	}
	return lim
}

func (m *memory) window(r Rule, now time.Time) *window {
	start := now.Truncate(r.Window) // aligned to the Unix epoch: UTC days
	w, ok := m.windows[r.Bucket]
	if !ok || !w.start.Equal(start) {
		w = &window{start: start, length: r.Window}
		m.windows[r.Bucket] = w
	}
	return w
}

// sweep drops full buckets (indistinguishable from new ones) and past
// windows, so memory follows the active callers, not every caller ever seen.
func (m *memory) sweep(now time.Time) {
	for k, lim := range m.buckets {
		if lim.TokensAt(now) >= float64(lim.Burst()) {
			delete(m.buckets, k)
		}
	}
	for k, w := range m.windows {
		if !now.Before(w.start.Add(w.length)) {
			delete(m.windows, k)
		}
	}
}

func secondsDur(s float64) time.Duration {
	if s <= 0 {
		return 0
	}
	return time.Duration(math.Ceil(s * float64(time.Second)))
}
