package ratelimit_test

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/healthagents/healthagents/ratelimit"
)

// BenchmarkAllow: one Allow per op, spread over 1000 keys, with a policy
// large enough that every request is admitted.
func BenchmarkAllow(b *testing.B) {
	p := ratelimit.DefaultPolicy()
	p.General = 1 << 30
	p.Tiers["pro"] = ratelimit.TierLimits{PerMinute: 1 << 30, DailyEligibility: -1}
	p.Endpoint[ratelimit.ClassEligibility] = 1 << 30
	callers := make([]ratelimit.Caller, 1000)
	for i := range callers {
		callers[i] = ratelimit.Caller{Key: fmt.Sprintf("key%04d", i), Tier: "pro", IP: netip.MustParseAddr("192.0.2.1")}
	}
	for name, mk := range backends(b) {
		b.Run(name, func(b *testing.B) {
			l := mk(ratelimit.WithPolicy(p))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := l.Allow(b.Context(), ratelimit.ClassEligibility, callers[i%len(callers)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
