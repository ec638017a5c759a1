// Package ratelimit enforces the service's request limits: per endpoint,
// per key, for public callers, per tier, and Pro's daily quota of v1
// eligibility verifications (the figures are DefaultPolicy's; see
// docs/decisions/keys-and-limits.md, "Rate limits").
//
// A [Policy] turns a request (its endpoint [Class] and its [Caller]) into
// the [Rule]s that apply; [Limiter.Allow] admits the request only if every
// rule has room, and then takes one unit from each (a denied request costs
// nothing); [Limiter.AllowN] takes n units at once, all or nothing, for a
// request that does the work of n (a batch). The [Decision] describes the most restrictive rule, for the
// X-RateLimit-Limit / -Remaining / -Reset headers and Retry-After.
//
// [New] counts in process with golang.org/x/time/rate; [NewShared] keeps
// the budgets in a [Store] so every replica enforces one budget: package
// ratelimit/redisstore is the Redis one (redisstore.FromURL with REDIS_URL),
// kept apart so that this package links no Redis client. See docs/decisions/keys-and-limits.md for how the
// figures combine.
package ratelimit
