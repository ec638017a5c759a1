package webhook

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"
)

// Option configures a Registry or a Dispatcher; each ignores the options
// that concern only the other.
type Option func(*options) error

type options struct {
	allowHTTP     bool
	allowLoopback bool
	resolver      Resolver
	now           func() time.Time
	rand          io.Reader
	logger        *slog.Logger
	tenants       bool
	onEnqueue     func()
	onAttempt     func(result string)
	sealer        SecretSealer

	schedule      []time.Duration
	timeout       time.Duration
	maxRetryAfter time.Duration
	disableAfter  time.Duration
	poll          time.Duration
	concurrency   int
	perEndpoint   int
	lease         time.Duration
	jitter        float64
	retention     time.Duration
}

// DefaultSchedule is the delay before each attempt of a message, after the
// previous one failed: immediately, then 5 s, 5 min, 30 min, 2 h, 5 h,
// 10 h and 10 h (Svix's schedule). Eight attempts over about 27.5 hours.
func DefaultSchedule() []time.Duration {
	return []time.Duration{0, 5 * time.Second, 5 * time.Minute, 30 * time.Minute,
		2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}
}

// Defaults of the delivery options.
const (
	DefaultTimeout       = 10 * time.Second
	DefaultMaxRetryAfter = time.Hour
	DefaultDisableAfter  = 5 * 24 * time.Hour
	DefaultPollInterval  = time.Second
	DefaultRetention     = 30 * 24 * time.Hour
	// DefaultConcurrency is how many attempts a Dispatcher makes at once.
	DefaultConcurrency = 8
	// DefaultEndpointConcurrency is how many deliveries to one endpoint
	// are in flight at once, across every Dispatcher over the database.
	DefaultEndpointConcurrency = 2
	// DefaultJitter spreads each retry delay by up to ±20 %.
	DefaultJitter = 0.2
	// LeaseMargin is how much longer than the attempt timeout a lease
	// must be: time to record the attempt (at most recordTimeout) and
	// leeway for clocks. A Dispatcher starts an attempt only while at
	// least timeout + LeaseMargin of its lease is left.
	LeaseMargin = 15 * time.Second
	// defaultLeaseExtra is added to the timeout for the default lease.
	defaultLeaseExtra = 30 * time.Second
	// minClaimTime is what the shortest lease leaves beyond timeout +
	// LeaseMargin for the claim itself: a lease runs from before the
	// claim's query, and an attempt starts only while timeout +
	// LeaseMargin of it is left, so a lease of exactly timeout +
	// LeaseMargin would never start one.
	minClaimTime = time.Second
)

func defaultOptions() options {
	return options{
		resolver:      net.DefaultResolver,
		now:           time.Now,
		rand:          rand.Reader,
		schedule:      DefaultSchedule(),
		timeout:       DefaultTimeout,
		maxRetryAfter: DefaultMaxRetryAfter,
		disableAfter:  DefaultDisableAfter,
		poll:          DefaultPollInterval,
		concurrency:   DefaultConcurrency,
		perEndpoint:   DefaultEndpointConcurrency,
		jitter:        DefaultJitter,
		retention:     DefaultRetention,
	}
}

func buildOptions(opts []Option) (options, error) {
	o := defaultOptions()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return o, err
		}
	}
	if o.logger == nil {
		o.logger = slog.New(slog.DiscardHandler)
	}
	if o.lease == 0 {
		o.lease = o.timeout + defaultLeaseExtra
	}
	if least := o.timeout + LeaseMargin + minClaimTime; o.lease < least {
		return o, fmt.Errorf("webhook: the lease (%v) must be at least the timeout (%v) + %v + %v for the claim (%v)",
			o.lease, o.timeout, LeaseMargin, minClaimTime, least)
	}
	return o, nil
}

// AllowHTTP accepts http:// endpoint URLs. For development only: in
// production every endpoint must be HTTPS.
func AllowHTTP() Option {
	return func(o *options) error { o.allowHTTP = true; return nil }
}

// AllowLoopback lets endpoints resolve to loopback addresses (127.0.0.0/8,
// ::1), for development and tests. Every other internal range stays refused.
func AllowLoopback() Option {
	return func(o *options) error { o.allowLoopback = true; return nil }
}

// WithResolver sets the resolver endpoint hosts are looked up with (default
// net.DefaultResolver).
func WithResolver(r Resolver) Option {
	return func(o *options) error {
		if r == nil {
			return errors.New("webhook: nil resolver")
		}
		o.resolver = r
		return nil
	}
}

// WithClock sets the clock (default time.Now); tests move it by hand.
func WithClock(now func() time.Time) Option {
	return func(o *options) error {
		if now == nil {
			return errors.New("webhook: nil clock")
		}
		o.now = now
		return nil
	}
}

// WithRandom sets the source of ids and secrets (default crypto/rand).
func WithRandom(r io.Reader) Option {
	return func(o *options) error {
		if r == nil {
			return errors.New("webhook: nil random source")
		}
		o.rand = r
		return nil
	}
}

// WithLogger logs delivery failures and disabled endpoints (ids and
// statuses only, never payloads or secrets). Silent by default.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) error { o.logger = l; return nil }
}

// WithTenants scopes events to tenants: an event goes only to the endpoints
// of its Owner (healthagents.Event.Owner, which the Service fills from the
// request), and an event without an owner (an anonymous request) to none.
// Without WithTenants every subscribed endpoint gets every event (a
// single-tenant deployment).
func WithTenants() Option {
	return func(o *options) error { o.tenants = true; return nil }
}

// WithEnqueueHook calls fn after Emit wrote at least one outbox row (or
// after a caller that wrote Prepare's messages in its own transaction
// reported committed rows to Enqueued); pass
// a Dispatcher's Notify so a delivery starts at once rather than at the next
// poll. fn must not block.
func WithEnqueueHook(fn func()) Option {
	return func(o *options) error { o.onEnqueue = fn; return nil }
}

// SecretSealer encrypts signing secrets at rest; *cipher.Keyring is one.
// Decrypt is called with ttl 0 (no age limit).
type SecretSealer interface {
	Encrypt(plaintext []byte) ([]byte, error)
	Decrypt(token []byte, ttl time.Duration) ([]byte, error)
}

// WithAttemptObserver has a Dispatcher call fn with the result of every
// attempt it records (ResultDelivered, ResultRetrying, ResultFailed or
// ResultDisabled), e.g. to count delivery outcomes. fn must be fast.
func WithAttemptObserver(fn func(result string)) Option {
	return func(o *options) error { o.onAttempt = fn; return nil }
}

// WithSecretSealer stores new endpoint secrets encrypted with s, and lets
// the Dispatcher open them. Give both the Registry and the Dispatcher the
// same sealer (a keyring holding every key ever used, for rotation).
// Secrets stored before, in clear, keep working.
func WithSecretSealer(s SecretSealer) Option {
	return func(o *options) error { o.sealer = s; return nil }
}

// WithSchedule replaces DefaultSchedule: delays[i] is the wait before
// attempt i+1 after attempt i failed; delays[0] must be 0 (the first attempt
// is due as soon as the event is written). Its length is the number of
// attempts.
func WithSchedule(delays ...time.Duration) Option {
	return func(o *options) error {
		if len(delays) == 0 || delays[0] != 0 {
			return errors.New("webhook: a retry schedule starts with 0")
		}
		for _, d := range delays {
			if d < 0 {
				return errors.New("webhook: negative retry delay")
			}
		}
		o.schedule = append([]time.Duration(nil), delays...)
		return nil
	}
}

// WithTimeout bounds one attempt, from dialing to the end of the reply
// (default 10 s).
func WithTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return errors.New("webhook: timeout must be positive")
		}
		o.timeout = d
		return nil
	}
}

// WithMaxRetryAfter caps how long a receiver's Retry-After can push the next
// attempt back (default 1 h).
func WithMaxRetryAfter(d time.Duration) Option {
	return func(o *options) error {
		if d < 0 {
			return errors.New("webhook: negative Retry-After cap")
		}
		o.maxRetryAfter = d
		return nil
	}
}

// WithDisableAfter disables an endpoint whose deliveries have all failed for
// this long (default 5 days).
func WithDisableAfter(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return errors.New("webhook: disable period must be positive")
		}
		o.disableAfter = d
		return nil
	}
}

// WithPollInterval sets how often an idle Dispatcher looks for due
// deliveries (default 1 s).
func WithPollInterval(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return errors.New("webhook: poll interval must be positive")
		}
		o.poll = d
		return nil
	}
}

// WithConcurrency sets how many deliveries a Dispatcher makes at once
// (default 8). It claims a delivery whenever one of these slots is free.
func WithConcurrency(n int) Option {
	return func(o *options) error {
		if n <= 0 {
			return errors.New("webhook: concurrency must be positive")
		}
		o.concurrency = n
		return nil
	}
}

// WithEndpointConcurrency sets how many deliveries to one endpoint may be
// in flight at once, across all Dispatchers over the database (default 2),
// so that a slow receiver holds at most that many slots.
func WithEndpointConcurrency(n int) Option {
	return func(o *options) error {
		if n <= 0 {
			return errors.New("webhook: endpoint concurrency must be positive")
		}
		o.perEndpoint = n
		return nil
	}
}

// WithJitter spreads each scheduled retry delay uniformly by up to ±f of
// itself (default 0.2, at most 0.5; 0 turns it off), so that the retries
// of messages that failed together do not arrive together. The random
// source is WithRandom's. A Retry-After longer than the spread delay is
// still honoured as asked.
func WithJitter(f float64) Option {
	return func(o *options) error {
		if !(f >= 0 && f <= 0.5) {
			return errors.New("webhook: jitter must be between 0 and 0.5")
		}
		o.jitter = f
		return nil
	}
}

// WithRetention sets how long finished messages and attempt records are
// kept (default 30 days); a started Dispatcher prunes older ones hourly.
func WithRetention(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return errors.New("webhook: retention must be positive")
		}
		o.retention = d
		return nil
	}
}

// WithLease sets how long a claimed delivery stays reserved to the
// Dispatcher that claimed it (default timeout + 30 s; at least timeout +
// LeaseMargin + 1 s, else NewDispatcher fails). A delivery is claimed only
// when a slot is free to attempt it at once, so the lease covers the
// claim, the attempt and its recording: an attempt starts only while
// timeout + LeaseMargin of the lease is left, and the second beyond it is
// the claim's. After a crash, another Dispatcher takes the delivery over
// when the lease runs out.
func WithLease(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return errors.New("webhook: lease must be positive")
		}
		o.lease = d
		return nil
	}
}
