package ratelimit

import (
	"net/netip"
	"time"
)

// Class names the endpoint group a request belongs to. The server maps
// each route to one.
type Class string

// The endpoint classes, each with its own per-minute budget. The v1 equivalents of the root
// operations share their per-endpoint budget: the limit protects the
// operation (proof generation), whatever path reaches it.
const (
	ClassHealth        Class = "health"         // GET /health
	ClassStatus        Class = "status"         // GET /status
	ClassEligibility   Class = "eligibility"    // POST /verify-eligibility
	ClassEligibilityV1 Class = "eligibility-v1" // POST /api/v1/eligibility/verify (also the daily quota)
	ClassPrescription  Class = "prescription"   // POST /validate-prescription, POST /api/v1/prescriptions/validate
	ClassFederated     Class = "federated"      // POST /submit-federated-update, POST /api/v1/federated/gradients
	ClassGeneral       Class = "general"        // everything else
)

// Caller identifies who a request counts against.
type Caller struct {
	// Key is the budget identity of the API key (apikey.Key.Budget(), so a
	// rotated key keeps its budget); "" for an unauthenticated caller.
	Key string
	// Dev marks an sk_dev_ key.
	Dev bool
	// Tier is the key's tier: "free", "pro" or "enterprise".
	Tier string
	// RateLimit, when positive, replaces the per-minute general, dev and
	// tier figures for this key: an sk_live_ key's limit is configurable
	// per key, and Enterprise's is custom.
	RateLimit int
	// DailyQuota overrides the tier's daily v1 eligibility quota: 0 keeps
	// it, negative means unlimited.
	DailyQuota int
	// IP is the client address; it keys unauthenticated callers.
	IP netip.Addr
}

// TierLimits are the figures of one tier.
type TierLimits struct {
	PerMinute int // 0: no tier-specific per-minute limit
	// DailyEligibility is the v1 eligibility verifications per UTC day;
	// negative: unlimited.
	DailyEligibility int
}

// Policy holds every rate-limit figure. The zero Policy limits nothing;
// DefaultPolicy returns the service's figures.
type Policy struct {
	// Endpoint are per-minute limits per caller (key, or client address
	// for public callers) and endpoint class.
	Endpoint map[Class]int
	// General is the per-minute limit of an authenticated key.
	General int
	// Public is the per-minute limit of an unauthenticated client address.
	Public int
	// Dev is the per-minute limit of an sk_dev_ key.
	Dev int
	// Tiers maps a tier name to its figures.
	Tiers map[string]TierLimits
	// Exempt classes count only against their endpoint limit, not against
	// the general, public, dev or tier budgets: health and status probes
	// must keep answering (and monitoring is usually unauthenticated,
	// which the 10/min public figure would starve).
	Exempt map[Class]bool
}

// DefaultPolicy returns the service's figures, tabled in
// docs/decisions/keys-and-limits.md ("Rate limits").
func DefaultPolicy() Policy {
	return Policy{
		Endpoint: map[Class]int{
			ClassHealth:        1000,
			ClassStatus:        500,
			ClassEligibility:   100,
			ClassEligibilityV1: 100,
			ClassPrescription:  100,
			ClassFederated:     10,
		},
		General: 1000,
		Public:  10,
		Dev:     1000,
		Tiers: map[string]TierLimits{
			"free":       {PerMinute: 100, DailyEligibility: 10_000},
			"pro":        {PerMinute: 1000, DailyEligibility: 10_000},
			"enterprise": {PerMinute: 0, DailyEligibility: -1},
		},
		Exempt: map[Class]bool{ClassHealth: true, ClassStatus: true},
	}
}

// Kind is how a rule counts.
type Kind int

// Rule kinds.
const (
	// TokenBucket refills continuously: Limit requests per Window, with a
	// burst of Limit (GCRA in Redis, golang.org/x/time/rate in process).
	TokenBucket Kind = iota
	// CalendarWindow counts requests in fixed windows aligned to the Unix
	// epoch (a UTC day for a 24 h window), reset at the window's end.
	CalendarWindow
)

// Rule is one limit that applies to a request.
type Rule struct {
	Name   string // which figure: "endpoint:eligibility", "public", "tier:free", "daily:pro", …
	Bucket string // the counter's identity: the caller plus the scope
	Limit  int
	Window time.Duration
	Kind   Kind
}

// budgetClass maps the v1 eligibility class onto the root one, so both
// paths share one per-minute endpoint budget.
func budgetClass(c Class) Class {
	if c == ClassEligibilityV1 {
		return ClassEligibility
	}
	return c
}

// Rules returns the limits that apply to a request of class c by caller.
// A request is allowed only when every one of them has room.
//
//   - The endpoint figure of c (if any), per caller.
//   - Unless c is exempt: for a public caller the public figure per client
//     address; for a key its RateLimit override if set, else the smallest of
//     the general, dev (sk_dev_ keys) and tier figures, as one bucket.
//   - For v1 eligibility by a key: the tier's (or the key's) daily quota.
func (p Policy) Rules(c Class, caller Caller) []Rule {
	// Every bucket of one caller carries the caller in a Redis Cluster hash
	// tag, so one request's counters live on one shard.
	id := "{ip:" + clientID(caller.IP) + "}"
	if caller.Key != "" {
		id = "{key:" + caller.Key + "}"
	}
	rules := make([]Rule, 0, 3)
	if n := p.Endpoint[c]; n > 0 {
		bc := budgetClass(c)
		rules = append(rules, Rule{Name: "endpoint:" + string(bc), Bucket: id + ":ep:" + string(bc), Limit: n, Window: time.Minute})
	}
	if p.Exempt[c] {
		return rules
	}
	if caller.Key == "" {
		if p.Public > 0 {
			rules = append(rules, Rule{Name: "public", Bucket: id + ":all", Limit: p.Public, Window: time.Minute})
		}
		return rules
	}
	tier := p.Tiers[caller.Tier]
	if caller.RateLimit > 0 {
		rules = append(rules, Rule{Name: "key", Bucket: id + ":all", Limit: caller.RateLimit, Window: time.Minute})
	} else {
		name, n := "", 0
		pick := func(nm string, v int) {
			if v > 0 && (n == 0 || v < n) {
				name, n = nm, v
			}
		}
		pick("general", p.General)
		if caller.Dev {
			pick("dev", p.Dev)
		}
		pick("tier:"+caller.Tier, tier.PerMinute)
		if n > 0 {
			rules = append(rules, Rule{Name: name, Bucket: id + ":all", Limit: n, Window: time.Minute})
		}
	}
	if c == ClassEligibilityV1 {
		quota := tier.DailyEligibility
		if caller.DailyQuota != 0 {
			quota = caller.DailyQuota
		}
		if quota > 0 {
			rules = append(rules, Rule{Name: "daily:" + caller.Tier, Bucket: id + ":day:eligibility", Limit: quota, Window: 24 * time.Hour, Kind: CalendarWindow})
		}
	}
	return rules
}

// clientID keys a public caller: the IPv4 address, or the /64 of an IPv6
// address (one host usually holds a whole /64, so per-address limits would
// be trivial to dodge).
func clientID(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case !a.IsValid():
		return "unknown"
	case a.Is6():
		p, _ := a.Prefix(64)
		return p.String()
	default:
		return a.String()
	}
}
