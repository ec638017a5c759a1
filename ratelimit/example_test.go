package ratelimit_test

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/healthagents/healthagents/ratelimit"
)

func ExampleLimiter_Allow() {
	l, _ := ratelimit.New() // the figures of spec section 8, in process
	public := ratelimit.Caller{IP: netip.MustParseAddr("192.0.2.10")}
	var d ratelimit.Decision
	for range 11 {
		d, _ = l.Allow(context.Background(), ratelimit.ClassGeneral, public)
	}
	fmt.Println(d.Allowed, d.Rule, d.Limit, d.Remaining, d.RetryAfterSeconds())
	// Output: false public 10 0 6
}
