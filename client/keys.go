package client

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// CreateKeyRequest is the optional body of POST /auth/keys. The zero value
// asks for the defaults: tier free, the service scopes, sk_live_ on a
// production server and sk_dev_ otherwise.
type CreateKeyRequest struct {
	Name         string     `json:"name,omitempty"`
	Env          string     `json:"env,omitempty"`          // "live" (sk_live_) or "dev" (sk_dev_)
	Tier         string     `json:"tier,omitempty"`         // free, pro or enterprise
	Scopes       []string   `json:"scopes,omitempty"`       // eligibility, prescription, federated, webhooks, patients (the defaults), keys:admin, pharmacy
	Organization string     `json:"organization,omitempty"` // the organization the key acts for
	AllowedIPs   []string   `json:"allowed_ips,omitempty"`  // addresses or CIDR ranges
	Restricted   bool       `json:"restricted,omitempty"`
	RateLimit    int        `json:"rate_limit,omitempty"`  // requests per minute replacing the tier figures
	DailyQuota   int        `json:"daily_quota,omitempty"` // v1 eligibility verifications per UTC day; negative: unlimited
	ExpiresAt    *time.Time `json:"expires_at,omitempty"`
}

// KeyCreated answers key creation and rotation. APIKey is shown this once;
// the server keeps only its hash.
type KeyCreated struct {
	APIKey       string     `json:"api_key"`
	CreatedAt    time.Time  `json:"created_at"`
	KeyID        string     `json:"key_id"`
	Env          string     `json:"env"`
	Tier         string     `json:"tier"`
	Scopes       []string   `json:"scopes"`
	Organization string     `json:"organization,omitempty"`
	ExpiresAt    *time.Time `json:"expires_at,omitempty"`
	// Rotation only: the key replaced, and when it stops working.
	Replaces         string     `json:"replaces,omitempty"`
	OldKeyExpiresAt  *time.Time `json:"old_key_expires_at,omitempty"`
	OldKeyValidHours int        `json:"old_key_valid_hours,omitempty"`
}

// KeyInfo describes a key, never its secret.
type KeyInfo struct {
	KeyID        string     `json:"key_id"`
	Env          string     `json:"env"`
	Name         string     `json:"name,omitempty"`
	Tier         string     `json:"tier"`
	Scopes       []string   `json:"scopes"`
	Organization string     `json:"organization,omitempty"`
	AllowedIPs   []string   `json:"allowed_ips"`
	Restricted   bool       `json:"restricted"`
	RateLimit    int        `json:"rate_limit,omitempty"`
	DailyQuota   int        `json:"daily_quota,omitempty"`
	CreatedAt    time.Time  `json:"created_at"`
	ExpiresAt    *time.Time `json:"expires_at,omitempty"`
	RevokedAt    *time.Time `json:"revoked_at,omitempty"`
	RotatedTo    string     `json:"rotated_to,omitempty"`
	Active       bool       `json:"active"`
}

// KeyList is one page of GET /api/keys.
type KeyList struct {
	Keys   []KeyInfo `json:"keys"`
	Total  int       `json:"total"`
	Offset int       `json:"offset"`
	Limit  int       `json:"limit"`
}

// KeyRevoked answers DELETE /api/keys/{key_id}.
type KeyRevoked struct {
	KeyID     string    `json:"key_id"`
	Revoked   bool      `json:"revoked"`
	RevokedAt time.Time `json:"revoked_at"`
}

// KeyUsage answers GET /api/keys/{key_id}/usage.
type KeyUsage struct {
	KeyID         string    `json:"key_id"`
	WindowSeconds int64     `json:"window_seconds"`
	From          time.Time `json:"from"`
	To            time.Time `json:"to"`
	Requests      int64     `json:"requests"`
	Errors        int64     `json:"errors"` // responses with status 400 or above
	LatencyMS     Latencies `json:"latency_ms"`
	ErrorRate     float64   `json:"error_rate"`
}

// Latencies are latency percentiles in milliseconds.
type Latencies struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
}

// Whitelist answers POST /api/keys/{key_id}/whitelist: the allow-list now in
// force.
type Whitelist struct {
	KeyID string   `json:"key_id"`
	IPs   []string `json:"ips"`
}

type whitelistRequest struct {
	IPs []string `json:"ips"`
}

// CreateKey calls POST /auth/keys. The client's bearer (WithAPIKey) must be
// the server's ADMIN_TOKEN, the one-time bootstrap token, or a key with the
// keys:admin scope. req may be nil for the defaults.
//
// Creating a key is not idempotent: see the package doc on Idempotency-Key.
func (c *Client) CreateKey(ctx context.Context, req *CreateKeyRequest) (*KeyCreated, error) {
	var out KeyCreated
	cl := call{method: http.MethodPost, path: "/auth/keys", out: &out}
	if req != nil {
		cl.body = req
	}
	if err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	return &out, nil
}

// RotateKey calls POST /api/keys/rotate: it issues a successor of the
// client's own key (WithAPIKey). The old key keeps working for 24 hours; a
// key is rotated once (409, IsConflict, after that).
func (c *Client) RotateKey(ctx context.Context) (*KeyCreated, error) {
	var out KeyCreated
	if err := c.do(ctx, call{method: http.MethodPost, path: "/api/keys/rotate", out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// RevokeKey calls DELETE /api/keys/{key_id}: the key stops working at once.
func (c *Client) RevokeKey(ctx context.Context, keyID string) (*KeyRevoked, error) {
	if keyID == "" {
		return nil, errors.New("client: empty key id")
	}
	var out KeyRevoked
	if err := c.do(ctx, call{method: http.MethodDelete, path: "/api/keys/" + escape(keyID), out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// KeyUsage calls GET /api/keys/{key_id}/usage: requests, errors and latency
// percentiles over the window ending now (0: the server's default, 24 h; at
// most 90 days).
func (c *Client) KeyUsage(ctx context.Context, keyID string, window time.Duration) (*KeyUsage, error) {
	if keyID == "" {
		return nil, errors.New("client: empty key id")
	}
	if window < 0 {
		return nil, errors.New("client: negative usage window")
	}
	var q url.Values
	if window > 0 {
		q = url.Values{"window": {window.String()}}
	}
	var out KeyUsage
	if err := c.do(ctx, call{method: http.MethodGet, path: "/api/keys/" + escape(keyID) + "/usage", query: q, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// WhitelistKey calls POST /api/keys/{key_id}/whitelist: the key then works
// only from ips (addresses or CIDR ranges). An empty list lifts the
// restriction.
func (c *Client) WhitelistKey(ctx context.Context, keyID string, ips []string) (*Whitelist, error) {
	if keyID == "" {
		return nil, errors.New("client: empty key id")
	}
	if ips == nil {
		ips = []string{}
	}
	var out Whitelist
	if err := c.do(ctx, call{method: http.MethodPost, path: "/api/keys/" + escape(keyID) + "/whitelist",
		body: whitelistRequest{IPs: ips}, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListKeysPage calls GET /api/keys for one page (offset from 0, limit
// 1..100). ListKeys walks every page.
func (c *Client) ListKeysPage(ctx context.Context, offset, limit int) (*KeyList, error) {
	var out KeyList
	if err := c.do(ctx, call{method: http.MethodGet, path: "/api/keys", query: offsetLimit(offset, limit), out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListKeys walks GET /api/keys page by page (100 keys a page), oldest key
// first. The client's key needs the keys:admin scope; an admin key bound to
// an organization sees that organization's keys.
//
//	for k, err := range c.ListKeys(ctx) {
//		if err != nil { return err }
//		fmt.Println(k.KeyID, k.Active)
//	}
func (c *Client) ListKeys(ctx context.Context) iter.Seq2[KeyInfo, error] {
	return Paginate(ctx, MaxPageSize, func(ctx context.Context, offset, limit int) (Page[KeyInfo], error) {
		l, err := c.ListKeysPage(ctx, offset, limit)
		if err != nil {
			return Page[KeyInfo]{}, err
		}
		return Page[KeyInfo]{Items: l.Keys, Total: l.Total}, nil
	})
}

// offsetLimit is the query of one page of an offset/limit list.
func offsetLimit(offset, limit int) url.Values {
	return url.Values{"offset": {strconv.Itoa(offset)}, "limit": {strconv.Itoa(limit)}}
}
