package apikey

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// Errors. The server maps ErrInvalid to 401 `Unauthorized: Invalid API key`,
// ErrForbidden to 403 `Forbidden: Insufficient permissions` and ErrNotFound
// to 404.
var (
	// ErrInvalid: missing, malformed, unknown, expired or revoked key or token.
	ErrInvalid = errors.New("apikey: invalid API key")
	// ErrForbidden: a valid key that may not do this (scope, address,
	// restricted account).
	ErrForbidden = errors.New("apikey: insufficient permissions")
	// ErrNotFound: no key with that id (management calls).
	ErrNotFound = errors.New("apikey: key not found")
	// ErrConflict: the store already holds a key with that id or hash.
	ErrConflict = errors.New("apikey: key already exists")
	// ErrBadRequest: an argument out of range (pagination, window, tier…).
	ErrBadRequest = errors.New("apikey: bad request")
)

// Tier is a commercial plan; package ratelimit turns it into limits.
type Tier string

// The tiers; package ratelimit gives each its figures.
const (
	Free       Tier = "free"
	Pro        Tier = "pro"
	Enterprise Tier = "enterprise"
)

// Valid reports whether t is a known tier.
func (t Tier) Valid() bool { return t == Free || t == Pro || t == Enterprise }

// Scope is a permission a key carries.
type Scope string

// The scopes. A key without the scope an endpoint needs gets 403.
const (
	ScopeEligibility  Scope = "eligibility"  // eligibility endpoints
	ScopePrescription Scope = "prescription" // prescription endpoints
	ScopeFederated    Scope = "federated"    // federated learning endpoints
	ScopeWebhooks     Scope = "webhooks"     // webhook registration
	ScopePatients     Scope = "patients"     // the patient envelope registry
	ScopeKeysAdmin    Scope = "keys:admin"   // create keys, manage other keys
	// ScopePharmacy publishes pharmacy availability attestations to the
	// pharmacy oracle. It is not among the defaults: the attestations are
	// what a prescription's pharmacy confirmation rests on, so a
	// prescriber's key must not be able to write its own.
	ScopePharmacy Scope = "pharmacy"
)

// AllScopes lists every scope, in a stable order.
var AllScopes = []Scope{ScopeEligibility, ScopePrescription, ScopeFederated, ScopeWebhooks, ScopePatients, ScopeKeysAdmin, ScopePharmacy}

// DefaultScopes are given to a key created without explicit scopes: every
// service scope, no administration and no pharmacy attestations.
func DefaultScopes() []Scope {
	return []Scope{ScopeEligibility, ScopePrescription, ScopeFederated, ScopeWebhooks, ScopePatients}
}

// ParseScope checks a scope name.
func ParseScope(s string) (Scope, error) {
	if slices.Contains(AllScopes, Scope(s)) {
		return Scope(s), nil
	}
	return "", fmt.Errorf("%w: unknown scope %q", ErrBadRequest, s)
}

// Key is an API key's stored description. It never holds the secret.
type Key struct {
	ID           string         `json:"key_id"`
	Env          Env            `json:"env"`
	Name         string         `json:"name,omitempty"`
	Tier         Tier           `json:"tier"`
	Scopes       []Scope        `json:"scopes"`
	Organization string         `json:"organization,omitempty"`
	AllowedIPs   []netip.Prefix `json:"allowed_ips,omitempty"`
	Restricted   bool           `json:"restricted"`
	// RateLimit overrides the per-minute general and tier limits
	// (requests/minute); 0 keeps the policy's figures.
	RateLimit int `json:"rate_limit,omitempty"`
	// DailyQuota overrides the daily v1 eligibility quota; 0 keeps the
	// tier's, a negative value means unlimited.
	DailyQuota int       `json:"daily_quota,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	ExpiresAt  time.Time `json:"expires_at,omitzero"`
	RevokedAt  time.Time `json:"revoked_at,omitzero"`
	// RotatedTo names the key that replaced this one, if rotated.
	RotatedTo string `json:"rotated_to,omitempty"`
	// CreatedBy names who created the key: a key id, "admin-token",
	// "bootstrap" or "cli".
	CreatedBy string `json:"created_by,omitempty"`
	// Lineage is the id of the first key of a rotation chain (its own id
	// for a key that was not made by rotation). Rate limits and quotas are
	// counted per lineage, so rotating a key does not reset its budget.
	Lineage string `json:"lineage,omitempty"`
}

// Budget returns the identity the key's rate limits are counted under.
func (k *Key) Budget() string {
	if k.Lineage != "" {
		return k.Lineage
	}
	return k.ID
}

// HasScope reports whether the key carries s.
func (k *Key) HasScope(s Scope) bool { return slices.Contains(k.Scopes, s) }

// Active reports whether the key authenticates at now: not revoked and not
// past its expiry.
func (k *Key) Active(now time.Time) bool {
	if !k.RevokedAt.IsZero() && !now.Before(k.RevokedAt) {
		return false
	}
	return k.ExpiresAt.IsZero() || now.Before(k.ExpiresAt)
}

// AllowsAddr reports whether addr may use the key: true when the allow-list
// is empty or a prefix contains addr (IPv4-mapped IPv6 addresses are
// unmapped first).
func (k *Key) AllowsAddr(addr netip.Addr) bool {
	if len(k.AllowedIPs) == 0 {
		return true
	}
	addr = addr.Unmap()
	for _, p := range k.AllowedIPs {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// clone returns a deep copy, so cached keys are never shared mutable state.
func (k *Key) clone() *Key {
	c := *k
	c.Scopes = slices.Clone(k.Scopes)
	c.AllowedIPs = slices.Clone(k.AllowedIPs)
	return &c
}

// ParseAllowList parses addresses ("203.0.113.7", "2001:db8::1") and CIDR
// ranges ("10.0.0.0/8") into prefixes; an address becomes a single-address
// prefix. Prefixes are masked, deduplicated and sorted.
func ParseAllowList(entries []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(entries))
	for _, e := range entries {
		e = strings.TrimSpace(e)
		var p netip.Prefix
		if strings.Contains(e, "/") {
			pp, err := netip.ParsePrefix(e)
			if err != nil {
				return nil, fmt.Errorf("%w: invalid CIDR range %q", ErrBadRequest, e)
			}
			p = pp
		} else {
			a, err := netip.ParseAddr(e)
			if err != nil {
				return nil, fmt.Errorf("%w: invalid IP address %q", ErrBadRequest, e)
			}
			if a.Zone() != "" {
				return nil, fmt.Errorf("%w: zoned IP address %q", ErrBadRequest, e)
			}
			a = a.Unmap()
			p = netip.PrefixFrom(a, a.BitLen())
		}
		if p.Addr().Is4In6() {
			if p.Bits() < 96 {
				return nil, fmt.Errorf("%w: invalid CIDR range %q", ErrBadRequest, e)
			}
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		out = append(out, p.Masked())
	}
	slices.SortFunc(out, func(a, b netip.Prefix) int {
		if c := a.Addr().Compare(b.Addr()); c != 0 {
			return c
		}
		return a.Bits() - b.Bits()
	})
	return slices.Compact(out), nil
}

// StoredKey is what the store keeps: the description and the key's hash.
type StoredKey struct {
	Key
	Hash [32]byte
}

// ListOptions select a page of keys.
type ListOptions struct {
	Organization string // "" for all organizations
	Offset       int
	Limit        int
}

// KeyStore persists keys. package store implements it for SQLite and
// PostgreSQL.
type KeyStore interface {
	// InsertKey stores a new key; ErrConflict if its id or hash exists.
	InsertKey(ctx context.Context, k StoredKey) error
	// KeyByID returns a key by its public id; ErrNotFound if absent.
	KeyByID(ctx context.Context, id string) (StoredKey, error)
	// ListKeys returns a page of keys, oldest first, and the total count.
	ListKeys(ctx context.Context, o ListOptions) ([]Key, int, error)
	// RevokeKey sets revoked_at (keeping an earlier one); ErrNotFound if absent.
	RevokeKey(ctx context.Context, id string, at time.Time) error
	// SetAllowedIPs replaces the allow-list; ErrNotFound if absent.
	SetAllowedIPs(ctx context.Context, id string, ips []netip.Prefix) error
	// RotateKey atomically inserts next and makes old expire at oldExpiry
	// (or earlier, if it already expires sooner), recording next's id on
	// it. ErrNotFound if old is absent or already revoked.
	RotateKey(ctx context.Context, oldID string, oldExpiry time.Time, next StoredKey) error
}

// UsageStore persists usage histograms.
type UsageStore interface {
	// AddUsage adds the counts to the stored ones (upsert, summing).
	AddUsage(ctx context.Context, counts []UsageCount) error
	// UsageCounts returns the key's counts for minutes in [from, to],
	// summed over minutes, one entry per latency bucket.
	UsageCounts(ctx context.Context, keyID string, fromMinute, toMinute int64) ([]UsageCount, error)
	// PruneUsage deletes counts of minutes before beforeMinute.
	PruneUsage(ctx context.Context, beforeMinute int64) error
}

// BootstrapStore persists one-time bootstrap tokens (hash only).
type BootstrapStore interface {
	// CountKeys reports how many keys exist (revoked ones included).
	CountKeys(ctx context.Context) (int, error)
	// InsertBootstrapToken stores a token hash valid until expires.
	InsertBootstrapToken(ctx context.Context, hash [32]byte, created, expires time.Time) error
	// ConsumeBootstrapToken marks the token used, together with every other
	// outstanding token, if it exists, is unused and has not expired at
	// now; ErrInvalid otherwise. It is atomic: two concurrent calls with
	// the same token cannot both succeed.
	ConsumeBootstrapToken(ctx context.Context, hash [32]byte, now time.Time) error
}

// Store is everything the Service persists.
type Store interface {
	KeyStore
	UsageStore
	BootstrapStore
}

// CanManage reports whether k may rotate, revoke, whitelist or read the
// usage of target: a key manages itself; a key with ScopeKeysAdmin manages
// every key of its organization, or every key if it has none.
func (k *Key) CanManage(target *Key) bool {
	if k.ID == target.ID {
		return true
	}
	return k.HasScope(ScopeKeysAdmin) && (k.Organization == "" || k.Organization == target.Organization)
}
