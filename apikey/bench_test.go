package apikey_test

import (
	"context"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/ratelimit"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

// BenchmarkAuthenticateAndLimit measures what the middleware adds to a
// request: Authenticate (cache hit) + the in-process limiter's Allow +
// RecordUsage. It reports the p50 and p99 of single iterations as well
// as ns/op.
func BenchmarkAuthenticateAndLimit(b *testing.B) {
	ctx := context.Background()
	db, err := store.Open(ctx, storetest.SQLiteDSN(b))
	require.NoError(b, err)
	defer db.Close()
	ks, err := store.NewKeyStore(db)
	require.NoError(b, err)
	svc, err := apikey.New(ks, apikey.WithCacheTTL(time.Hour))
	require.NoError(b, err)
	defer svc.Close(ctx)
	// A generous policy so that the loop measures admitted requests.
	p := ratelimit.DefaultPolicy()
	p.General, p.Tiers["pro"] = 1<<30, ratelimit.TierLimits{PerMinute: 1 << 30, DailyEligibility: -1}
	p.Endpoint[ratelimit.ClassEligibility] = 1 << 30
	lim, err := ratelimit.New(ratelimit.WithPolicy(p))
	require.NoError(b, err)
	raw, _, err := svc.Create(ctx, apikey.CreateParams{Tier: apikey.Pro})
	require.NoError(b, err)
	addr := netip.MustParseAddr("203.0.113.7")

	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		k, err := svc.Authenticate(ctx, raw, addr)
		if err != nil {
			b.Fatal(err)
		}
		d, err := lim.Allow(ctx, ratelimit.ClassEligibility, ratelimit.Caller{Key: k.Budget(), Tier: string(k.Tier), IP: addr})
		if err != nil || !d.Allowed {
			b.Fatal("denied", err)
		}
		svc.RecordUsage(k.ID, 200, time.Millisecond)
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
}
