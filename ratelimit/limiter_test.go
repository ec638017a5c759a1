package ratelimit_test

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/ratelimit"
	"github.com/healthagents/healthagents/ratelimit/redisstore"
)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock {
	return &clock{now: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
}
func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// backends returns a constructor per backend: in-process always, Redis when
// HEALTHAGENTS_TEST_REDIS is set. Redis limiters made by one constructor
// share their budgets (one key prefix per test, deleted at cleanup);
// in-process limiters never share.
func backends(t testing.TB) map[string]func(opts ...ratelimit.Option) *ratelimit.Limiter {
	t.Helper()
	m := map[string]func(opts ...ratelimit.Option) *ratelimit.Limiter{
		"memory": func(opts ...ratelimit.Option) *ratelimit.Limiter {
			l, err := ratelimit.New(opts...)
			require.NoError(t, err)
			return l
		},
	}
	if url := os.Getenv("HEALTHAGENTS_TEST_REDIS"); url != "" {
		prefix := fmt.Sprintf("test:%s:%d:", t.Name(), time.Now().UnixNano())
		m["redis"] = func(opts ...ratelimit.Option) *ratelimit.Limiter {
			ro, err := redis.ParseURL(url)
			require.NoError(t, err)
			c := redis.NewClient(ro)
			t.Cleanup(func() {
				ctx := context.Background()
				keys, _ := c.Keys(ctx, prefix+"*").Result()
				if len(keys) > 0 {
					c.Del(ctx, keys...)
				}
				c.Close()
			})
			l, err := redisstore.NewLimiter(c, prefix, opts...)
			require.NoError(t, err)
			return l
		}
	}
	return m
}

var (
	ip1 = netip.MustParseAddr("203.0.113.7")
	ip2 = netip.MustParseAddr("203.0.113.8")
)

// drain calls Allow until denied and returns how many were allowed and the
// denying decision.
func drain(t testing.TB, l *ratelimit.Limiter, c ratelimit.Class, caller ratelimit.Caller, max int) (int, ratelimit.Decision) {
	t.Helper()
	for i := 0; i < max; i++ {
		d, err := l.Allow(context.Background(), c, caller)
		require.NoError(t, err)
		if !d.Allowed {
			return i, d
		}
	}
	return max, ratelimit.Decision{}
}

func TestEveryFigure(t *testing.T) {
	t.Parallel()
	free := ratelimit.Caller{Key: "kfree", Tier: "free", IP: ip1}
	pro := ratelimit.Caller{Key: "kpro", Tier: "pro", IP: ip1}
	ent := ratelimit.Caller{Key: "kent", Tier: "enterprise", IP: ip1}
	dev := ratelimit.Caller{Key: "kdev", Tier: "enterprise", Dev: true, IP: ip1}
	custom := ratelimit.Caller{Key: "kcustom", Tier: "enterprise", RateLimit: 3000, IP: ip1}
	public := ratelimit.Caller{IP: ip1}
	tests := []struct {
		name   string
		class  ratelimit.Class
		caller ratelimit.Caller
		want   int
		rule   string
	}{
		{"health public 1000/min", ratelimit.ClassHealth, public, 1000, "endpoint:health"},
		{"status public 500/min", ratelimit.ClassStatus, public, 500, "endpoint:status"},
		{"health keyed 1000/min", ratelimit.ClassHealth, free, 1000, "endpoint:health"},
		{"eligibility per key 100/min", ratelimit.ClassEligibility, pro, 100, "endpoint:eligibility"},
		{"v1 eligibility per key 100/min", ratelimit.ClassEligibilityV1, pro, 100, "endpoint:eligibility"},
		{"prescription 100/min", ratelimit.ClassPrescription, ent, 100, "endpoint:prescription"},
		{"federated 10/min", ratelimit.ClassFederated, pro, 10, "endpoint:federated"},
		{"public general 10/min", ratelimit.ClassGeneral, public, 10, "public"},
		{"public eligibility min(10,100)", ratelimit.ClassEligibility, public, 10, "public"},
		{"authenticated general 1000/min", ratelimit.ClassGeneral, ent, 1000, "general"},
		{"sk_dev_ 1000/min", ratelimit.ClassGeneral, dev, 1000, "general"},
		{"tier free 100/min", ratelimit.ClassGeneral, free, 100, "tier:free"},
		{"tier pro 1000/min", ratelimit.ClassGeneral, pro, 1000, "general"},
		{"enterprise custom per key", ratelimit.ClassGeneral, custom, 3000, "key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for name, mk := range backends(t) {
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					clk := newClock()
					l := mk(ratelimit.WithClock(clk.Now))
					n, d := drain(t, l, tt.class, tt.caller, tt.want+5)
					assert.Equal(t, tt.want, n)
					assert.False(t, d.Allowed)
					assert.Equal(t, tt.rule, d.Rule)
					assert.Equal(t, tt.want, d.Limit)
					assert.Equal(t, 0, d.Remaining)
					assert.Positive(t, d.RetryAfterSeconds())
					// A token comes back after window/limit.
					clk.Add(time.Minute / time.Duration(tt.want))
					d, err := l.Allow(t.Context(), tt.class, tt.caller)
					require.NoError(t, err)
					assert.True(t, d.Allowed, "refilled")
				})
			}
		})
	}
}

func TestHeadersDescribeTheMostRestrictive(t *testing.T) {
	t.Parallel()
	for name, mk := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			clk := newClock()
			l := mk(ratelimit.WithClock(clk.Now))
			free := ratelimit.Caller{Key: "k1", Tier: "free", IP: ip1}
			d, err := l.Allow(t.Context(), ratelimit.ClassFederated, free)
			require.NoError(t, err)
			assert.True(t, d.Allowed)
			assert.Equal(t, "endpoint:federated", d.Rule)
			assert.Equal(t, 10, d.Limit)
			assert.Equal(t, 9, d.Remaining)
			// Reset: when the bucket is whole again, 6 s for one token of 10/min.
			assert.Equal(t, clk.Now().Add(6*time.Second).Unix(), d.ResetUnix())

			// 95 general calls: the free-tier bucket has 4 left, federated 9.
			for range 95 {
				_, err := l.Allow(t.Context(), ratelimit.ClassGeneral, free)
				require.NoError(t, err)
			}
			d, err = l.Allow(t.Context(), ratelimit.ClassFederated, free)
			require.NoError(t, err)
			assert.Equal(t, "tier:free", d.Rule)
			assert.Equal(t, 100, d.Limit)
			assert.Equal(t, 3, d.Remaining)
		})
	}
}

func TestDeniedRequestsConsumeNothing(t *testing.T) {
	t.Parallel()
	for name, mk := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			clk := newClock()
			l := mk(ratelimit.WithClock(clk.Now))
			k := ratelimit.Caller{Key: "k", Tier: "pro", IP: ip1}
			n, _ := drain(t, l, ratelimit.ClassFederated, k, 20)
			require.Equal(t, 10, n)
			// 50 denied federated calls must not eat the general budget.
			for range 50 {
				d, err := l.Allow(t.Context(), ratelimit.ClassFederated, k)
				require.NoError(t, err)
				require.False(t, d.Allowed)
			}
			d, err := l.Allow(t.Context(), ratelimit.ClassGeneral, k)
			require.NoError(t, err)
			assert.Equal(t, 1000-11, d.Remaining)
		})
	}
}

func TestPublicCallersKeyedByAddress(t *testing.T) {
	t.Parallel()
	for name, mk := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			l := mk(ratelimit.WithClock(newClock().Now))
			n, _ := drain(t, l, ratelimit.ClassGeneral, ratelimit.Caller{IP: ip1}, 20)
			assert.Equal(t, 10, n)
			n, _ = drain(t, l, ratelimit.ClassGeneral, ratelimit.Caller{IP: ip2}, 20)
			assert.Equal(t, 10, n, "another address has its own budget")
			n, _ = drain(t, l, ratelimit.ClassGeneral, ratelimit.Caller{IP: netip.MustParseAddr("::ffff:203.0.113.7")}, 20)
			assert.Equal(t, 0, n, "IPv4-mapped is the same address")
			a := netip.MustParseAddr("2001:db8:1:2::1")
			b := netip.MustParseAddr("2001:db8:1:2:ffff::9")
			n, _ = drain(t, l, ratelimit.ClassGeneral, ratelimit.Caller{IP: a}, 20)
			assert.Equal(t, 10, n)
			n, _ = drain(t, l, ratelimit.ClassGeneral, ratelimit.Caller{IP: b}, 20)
			assert.Equal(t, 0, n, "one IPv6 /64 is one caller")
		})
	}
}

func TestDailyEligibilityQuota(t *testing.T) {
	t.Parallel()
	for name, mk := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			clk := newClock()
			// Endpoint and per-minute limits lifted so only the quota bites.
			// In process Enterprise's 10,000; over Redis (a round trip per
			// call) a smaller quota exercises the same script.
			p := ratelimit.DefaultPolicy()
			p.Endpoint[ratelimit.ClassEligibilityV1] = 0
			quota := 10_000
			if name == "redis" {
				quota = 60
				p.Tiers["pro"] = ratelimit.TierLimits{PerMinute: 1000, DailyEligibility: quota}
			}
			l := mk(ratelimit.WithClock(clk.Now), ratelimit.WithPolicy(p))
			pro := ratelimit.Caller{Key: "kpro", Tier: "pro", RateLimit: 1_000_000, IP: ip1}
			n, d := drain(t, l, ratelimit.ClassEligibilityV1, pro, quota+5)
			assert.Equal(t, quota, n)
			assert.Equal(t, "daily:pro", d.Rule)
			assert.Equal(t, quota, d.Limit)
			midnight := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
			assert.Equal(t, midnight.Unix(), d.ResetUnix())
			assert.Equal(t, 12*3600, d.RetryAfterSeconds())
			// Other endpoints are not part of the quota.
			d, err := l.Allow(t.Context(), ratelimit.ClassGeneral, pro)
			require.NoError(t, err)
			assert.True(t, d.Allowed)
			// Enterprise: unlimited v1 verifications.
			ent := ratelimit.Caller{Key: "kent", Tier: "enterprise", RateLimit: 1_000_000, IP: ip1}
			n, _ = drain(t, l, ratelimit.ClassEligibilityV1, ent, quota+50)
			assert.Equal(t, quota+50, n)
			// The next UTC day starts a fresh quota.
			clk.Add(12 * time.Hour)
			d, err = l.Allow(t.Context(), ratelimit.ClassEligibilityV1, pro)
			require.NoError(t, err)
			assert.True(t, d.Allowed)
			assert.Equal(t, quota-1, d.Remaining)
		})
	}
}

func TestTwoInstancesShareOneBudget(t *testing.T) {
	t.Parallel()
	mk, ok := backends(t)["redis"]
	if !ok {
		t.Skip("HEALTHAGENTS_TEST_REDIS is not set")
	}
	clk := newClock()
	a := mk(ratelimit.WithClock(clk.Now))
	b := mk(ratelimit.WithClock(clk.Now))
	k := ratelimit.Caller{Key: "shared", Tier: "free", IP: ip1}
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for _, l := range []*ratelimit.Limiter{a, b, a, b} {
		wg.Go(func() {
			for range 40 {
				d, err := l.Allow(context.Background(), ratelimit.ClassGeneral, k)
				if err != nil {
					t.Error(err)
					return
				}
				if d.Allowed {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 100, allowed, "160 calls over two instances, one free-tier budget of 100")
}

func TestRedisDownFallsBackInProcess(t *testing.T) {
	t.Parallel()
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1, DialTimeout: 100 * time.Millisecond})
	t.Cleanup(func() { c.Close() })
	l, err := redisstore.NewLimiter(c, "", ratelimit.WithClock(newClock().Now))
	require.NoError(t, err)
	n, _ := drain(t, l, ratelimit.ClassGeneral, ratelimit.Caller{IP: ip1}, 20)
	assert.Equal(t, 10, n, "limits still hold, per replica")
}

func TestPolicyRules(t *testing.T) {
	t.Parallel()
	p := ratelimit.DefaultPolicy()
	rules := p.Rules(ratelimit.ClassEligibilityV1, ratelimit.Caller{Key: "k", Tier: "free", Dev: true})
	var names []string
	for _, r := range rules {
		names = append(names, r.Name)
	}
	assert.Equal(t, []string{"endpoint:eligibility", "tier:free", "daily:free"}, names)
	root := p.Rules(ratelimit.ClassEligibility, ratelimit.Caller{Key: "k", Tier: "free"})
	assert.Equal(t, rules[0].Bucket, root[0].Bucket, "root and v1 eligibility share one per-minute budget")
	assert.Empty(t, ratelimit.Policy{}.Rules(ratelimit.ClassGeneral, ratelimit.Caller{}), "the zero policy limits nothing")
	l, err := ratelimit.New(ratelimit.WithPolicy(ratelimit.Policy{}))
	require.NoError(t, err)
	d, err := l.Allow(t.Context(), ratelimit.ClassGeneral, ratelimit.Caller{})
	require.NoError(t, err)
	assert.True(t, d.Allowed)
	assert.Zero(t, d.Limit)
}

// TestAllowNAllOrNothing: a request of n units takes n from every rule or,
// when any rule has fewer than n left, nothing from any.
func TestAllowNAllOrNothing(t *testing.T) {
	t.Parallel()
	for name, mk := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			clk := newClock()
			p := ratelimit.DefaultPolicy()
			p.Endpoint[ratelimit.ClassPrescription] = 10
			l := mk(ratelimit.WithClock(clk.Now), ratelimit.WithPolicy(p))
			k := ratelimit.Caller{Key: "k", Tier: "pro", RateLimit: 100, IP: ip1}
			assert.Equal(t, 10, l.MaxN(ratelimit.ClassPrescription, k))

			d, err := l.AllowN(t.Context(), ratelimit.ClassPrescription, k, 8)
			require.NoError(t, err)
			assert.True(t, d.Allowed)
			assert.Equal(t, "endpoint:prescription", d.Rule)
			assert.Equal(t, 2, d.Remaining)
			// Whole again after 8 tokens of 10/min: 48 s.
			assert.Equal(t, clk.Now().Add(48*time.Second).Unix(), d.ResetUnix())

			d, err = l.AllowN(t.Context(), ratelimit.ClassPrescription, k, 5)
			require.NoError(t, err)
			assert.False(t, d.Allowed)
			assert.Equal(t, "endpoint:prescription", d.Rule)
			assert.Equal(t, 10, d.Limit)
			assert.Equal(t, 0, d.Remaining)
			assert.Equal(t, 18, d.RetryAfterSeconds(), "3 missing tokens at one per 6 s")

			// The refused batch took nothing from the key's own bucket either.
			d, err = l.AllowN(t.Context(), ratelimit.ClassGeneral, k, 0)
			require.NoError(t, err)
			assert.True(t, d.Allowed)
			assert.Equal(t, "key", d.Rule)
			assert.Equal(t, 92, d.Remaining, "8 taken, the refused 5 not, the n=0 peek not")

			// More than a rule holds never fits: refused, nothing taken.
			_, err = l.AllowN(t.Context(), ratelimit.ClassPrescription, k, 11)
			require.ErrorIs(t, err, ratelimit.ErrExceedsLimit)
			_, err = l.AllowN(t.Context(), ratelimit.ClassPrescription, k, -1)
			require.Error(t, err)

			d, err = l.AllowN(t.Context(), ratelimit.ClassPrescription, k, 2)
			require.NoError(t, err)
			assert.True(t, d.Allowed, "the 2 left fit exactly")
			assert.Equal(t, 0, d.Remaining)
			d, err = l.Allow(t.Context(), ratelimit.ClassPrescription, k)
			require.NoError(t, err)
			assert.False(t, d.Allowed)

			// After the retry delay the refused batch fits.
			clk.Add(30 * time.Second)
			d, err = l.AllowN(t.Context(), ratelimit.ClassPrescription, k, 5)
			require.NoError(t, err)
			assert.True(t, d.Allowed)
			assert.Equal(t, 0, d.Remaining)
		})
	}
}

// TestAllowNDailyQuota: a calendar window counts n units at once.
func TestAllowNDailyQuota(t *testing.T) {
	t.Parallel()
	for name, mk := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := ratelimit.DefaultPolicy()
			p.Endpoint[ratelimit.ClassEligibilityV1] = 0
			p.Tiers["pro"] = ratelimit.TierLimits{PerMinute: 1000, DailyEligibility: 30}
			l := mk(ratelimit.WithClock(newClock().Now), ratelimit.WithPolicy(p))
			k := ratelimit.Caller{Key: "kpro", Tier: "pro", IP: ip1}
			d, err := l.AllowN(t.Context(), ratelimit.ClassEligibilityV1, k, 25)
			require.NoError(t, err)
			assert.True(t, d.Allowed)
			assert.Equal(t, "daily:pro", d.Rule)
			assert.Equal(t, 5, d.Remaining)
			d, err = l.AllowN(t.Context(), ratelimit.ClassEligibilityV1, k, 6)
			require.NoError(t, err)
			assert.False(t, d.Allowed)
			assert.Equal(t, 12*3600, d.RetryAfterSeconds(), "until the next UTC day")
			d, err = l.AllowN(t.Context(), ratelimit.ClassEligibilityV1, k, 5)
			require.NoError(t, err)
			assert.True(t, d.Allowed, "the refused 6 took nothing")
			assert.Equal(t, 0, d.Remaining)
		})
	}
}

// TestAllowNConcurrent: concurrent batches of 7 against one budget of 100
// (two limiters sharing it over Redis) admit exactly 14 batches — never a
// partial one, never more than the budget.
func TestAllowNConcurrent(t *testing.T) {
	t.Parallel()
	for name, mk := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			clk := newClock()
			ls := []*ratelimit.Limiter{mk(ratelimit.WithClock(clk.Now))}
			if name == "redis" {
				ls = append(ls, mk(ratelimit.WithClock(clk.Now)))
			}
			k := ratelimit.Caller{Key: "batch", Tier: "free", IP: ip1} // tier:free, 100/min
			var wg sync.WaitGroup
			var mu sync.Mutex
			batches := 0
			for i := range 6 {
				l := ls[i%len(ls)]
				wg.Go(func() {
					for range 5 {
						d, err := l.AllowN(context.Background(), ratelimit.ClassGeneral, k, 7)
						if err != nil {
							t.Error(err)
							return
						}
						if d.Allowed {
							mu.Lock()
							batches++
							mu.Unlock()
						}
					}
				})
			}
			wg.Wait()
			assert.Equal(t, 14, batches, "30 batches of 7, one budget of 100: 98 units")
			n, _ := drain(t, ls[0], ratelimit.ClassGeneral, k, 10)
			assert.Equal(t, 2, n, "the 2 units no batch could use are still there")
		})
	}
}
