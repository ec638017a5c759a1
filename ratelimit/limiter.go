package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"
)

// Decision is the outcome of Allow or AllowN. Limit, Remaining and Reset describe the
// most restrictive rule: the denying rule that frees up last, or, when the
// request is allowed, the rule with the fewest requests left.
type Decision struct {
	Allowed   bool
	Rule      string    // the rule described
	Limit     int       // X-RateLimit-Limit
	Remaining int       // X-RateLimit-Remaining
	Reset     time.Time // X-RateLimit-Reset: when the rule's budget is whole again
	// RetryAfter is how long until the request would be allowed (0 when
	// allowed): the Retry-After header, rounded up to seconds.
	RetryAfter time.Duration
	// At is the limiter's clock when it decided: RetryAfter counts from
	// it, so At+RetryAfter is the instant a retry would be allowed.
	At time.Time
}

// ResetUnix returns Reset as Unix epoch seconds, rounded up.
func (d Decision) ResetUnix() int64 {
	return int64(math.Ceil(float64(d.Reset.UnixNano()) / 1e9))
}

// RetryAfterSeconds returns RetryAfter in whole seconds, rounded up, at
// least 1 when the request was denied.
func (d Decision) RetryAfterSeconds() int {
	if d.Allowed {
		return 0
	}
	s := int(math.Ceil(d.RetryAfter.Seconds()))
	return max(s, 1)
}

// State is one rule's outcome from a Store.
type State struct {
	Allowed    bool
	Remaining  int
	Reset      time.Time
	RetryAfter time.Duration
}

// Store keeps the budgets of a Limiter made by NewShared (package
// ratelimit/redisstore is one, on Redis). Take takes n units from every
// rule's budget if all have n left, atomically; otherwise it takes nothing.
// n = 0 takes nothing and reports the budgets as they are. It returns one
// State per rule, in order.
type Store interface {
	Take(ctx context.Context, now time.Time, rules []Rule, n int) ([]State, error)
}

type options struct {
	policy   *Policy
	now      func() time.Time
	logger   *slog.Logger
	sweepMin time.Duration
}

// Option configures a Limiter.
type Option func(*options) error

// WithPolicy replaces DefaultPolicy.
func WithPolicy(p Policy) Option {
	return func(o *options) error { o.policy = &p; return nil }
}

// WithClock injects the clock.
func WithClock(now func() time.Time) Option {
	return func(o *options) error {
		if now == nil {
			return errors.New("ratelimit: nil clock")
		}
		o.now = now
		return nil
	}
}

// WithLogger sets a logger for Store failures (the limiter then falls back
// to in-process counting for that request).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) error { o.logger = l; return nil }
}

// Limiter applies a Policy. It is safe for concurrent use.
type Limiter struct {
	policy Policy
	now    func() time.Time
	store  Store
}

func buildOptions(opts []Option) (options, error) {
	o := options{now: time.Now, sweepMin: time.Minute}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return o, err
		}
	}
	if o.policy == nil {
		p := DefaultPolicy()
		o.policy = &p
	}
	if o.logger == nil {
		o.logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}

// New returns an in-process Limiter (golang.org/x/time/rate token buckets
// and calendar-window counters), for one replica.
func New(opts ...Option) (*Limiter, error) {
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	return &Limiter{policy: *o.policy, now: o.now, store: newMemory(o.sweepMin)}, nil
}

// NewShared returns a Limiter whose budgets live in store, shared by every
// Limiter (every replica) using the same store. When the store fails, the
// request is counted by an in-process fallback (per-replica limits) and the
// failure is logged (WithLogger): store trouble degrades limits rather than
// failing requests.
func NewShared(store Store, opts ...Option) (*Limiter, error) {
	if store == nil {
		return nil, errors.New("ratelimit: nil store")
	}
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	return &Limiter{policy: *o.policy, now: o.now, store: fallback{store, newMemory(o.sweepMin), o.logger}}, nil
}

// fallback counts in process while the shared store fails.
type fallback struct {
	shared Store
	local  *memory
	logger *slog.Logger
}

func (f fallback) Take(ctx context.Context, now time.Time, rules []Rule, n int) ([]State, error) {
	states, err := f.shared.Take(ctx, now, rules, n)
	if err == nil && len(states) == len(rules) {
		return states, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err == nil {
		err = fmt.Errorf("ratelimit: the store returned %d states for %d rules", len(states), len(rules))
	}
	f.logger.Warn("ratelimit: shared store unavailable, counting in process", "err", err)
	return f.local.Take(ctx, now, rules, n)
}

// Policy returns the limiter's policy.
func (l *Limiter) Policy() Policy { return l.policy }

// ErrExceedsLimit is returned by AllowN when n is more than a rule that
// applies can ever hold (its limit, the burst of a token bucket): no wait
// would let the request through, so it is refused without taking anything.
var ErrExceedsLimit = errors.New("ratelimit: more units than the limit holds")

// Allow counts a request of class c by caller against every rule that
// applies, and reports whether it may proceed. A denied request consumes
// nothing. With no rule applying, the request is allowed with a zero
// Limit (the server then sends no headers). Allow is AllowN with n = 1.
func (l *Limiter) Allow(ctx context.Context, c Class, caller Caller) (Decision, error) {
	return l.AllowN(ctx, c, caller, 1)
}

// AllowN counts a request of class c that costs n units (a batch of n
// operations) against every rule that applies: it takes n from every
// rule's budget if each has n left, atomically, and otherwise takes
// nothing (all or nothing), reporting when n would fit. n = 0 takes nothing
// and describes the budgets as they are. A negative n is an error, and an n
// above [Limiter.MaxN] is refused with [ErrExceedsLimit] (taking nothing).
func (l *Limiter) AllowN(ctx context.Context, c Class, caller Caller, n int) (Decision, error) {
	if n < 0 {
		return Decision{}, fmt.Errorf("ratelimit: negative cost %d", n)
	}
	rules := l.policy.Rules(c, caller)
	if len(rules) == 0 {
		return Decision{Allowed: true}, nil
	}
	for _, r := range rules {
		if n > r.Limit {
			return Decision{}, fmt.Errorf("%w: %d units, rule %s holds %d", ErrExceedsLimit, n, r.Name, r.Limit)
		}
	}
	now := l.now()
	states, err := l.store.Take(ctx, now, rules, n)
	if err != nil {
		return Decision{}, err
	}
	d := decide(rules, states)
	d.At = now
	return d, nil
}

// MaxN returns the largest n that AllowN can ever admit for a request of
// class c by caller: the smallest limit among the rules that apply, or 0
// when no rule applies (no bound).
func (l *Limiter) MaxN(c Class, caller Caller) int {
	m := 0
	for _, r := range l.policy.Rules(c, caller) {
		if m == 0 || r.Limit < m {
			m = r.Limit
		}
	}
	return m
}

func decide(rules []Rule, states []State) Decision {
	allowed := true
	for _, s := range states {
		if !s.Allowed {
			allowed = false
		}
	}
	best := -1
	for i, s := range states {
		switch {
		case best < 0:
			best = i
		case !allowed:
			// Among denying rules, the one that frees up last.
			if !s.Allowed && (states[best].Allowed || s.RetryAfter > states[best].RetryAfter) {
				best = i
			}
		default:
			b := states[best]
			if s.Remaining < b.Remaining || (s.Remaining == b.Remaining && rules[i].Limit < rules[best].Limit) {
				best = i
			}
		}
	}
	s := states[best]
	d := Decision{Allowed: allowed, Rule: rules[best].Name, Limit: rules[best].Limit, Remaining: s.Remaining, Reset: s.Reset}
	if !allowed {
		d.Remaining = 0
		d.RetryAfter = s.RetryAfter
	}
	return d
}
