package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"github.com/healthagents/healthagents/ratelimit"
)

func ExampleLimiter_Allow() {
	l, _ := ratelimit.New() // DefaultPolicy's figures, in process
	public := ratelimit.Caller{IP: netip.MustParseAddr("192.0.2.10")}
	var d ratelimit.Decision
	for range 11 {
		d, _ = l.Allow(context.Background(), ratelimit.ClassGeneral, public)
	}
	fmt.Println(d.Allowed, d.Rule, d.Limit, d.Remaining, d.RetryAfterSeconds())
	// Output: false public 10 0 6
}

func ExampleLimiter_AllowN() {
	p := ratelimit.DefaultPolicy()
	p.Endpoint[ratelimit.ClassPrescription] = 10
	l, _ := ratelimit.New(ratelimit.WithPolicy(p))
	key := ratelimit.Caller{Key: "k1", Tier: "pro"}
	d, _ := l.AllowN(context.Background(), ratelimit.ClassPrescription, key, 8) // a batch of 8
	fmt.Println(d.Allowed, d.Remaining)
	d, _ = l.AllowN(context.Background(), ratelimit.ClassPrescription, key, 5) // does not fit: takes nothing
	fmt.Println(d.Allowed, d.RetryAfterSeconds())
	_, err := l.AllowN(context.Background(), ratelimit.ClassPrescription, key, 11) // can never fit
	fmt.Println(errors.Is(err, ratelimit.ErrExceedsLimit), l.MaxN(ratelimit.ClassPrescription, key))
	// Output:
	// true 2
	// false 18
	// true 10
}
