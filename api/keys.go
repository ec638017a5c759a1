package api

import "time"

// API keys: POST /auth/keys and /api/keys/....

// CreateKeyRequest is the optional body of POST /auth/keys. With no body the
// key gets the defaults: tier free, the service scopes, sk_live_ in
// production and sk_dev_ otherwise.
type CreateKeyRequest struct {
	Name         string     `json:"name,omitempty" doc:"A label for the key."`
	Env          string     `json:"env,omitempty" doc:"live (sk_live_) or dev (sk_dev_; refused in production)."`
	Tier         string     `json:"tier,omitempty" doc:"free, pro or enterprise."`
	Scopes       []string   `json:"scopes,omitempty" doc:"eligibility, prescription, federated, webhooks, patients, keys:admin."`
	Organization string     `json:"organization,omitempty" doc:"The organization the key acts for (federated participant)."`
	AllowedIPs   []string   `json:"allowed_ips,omitempty" doc:"Addresses or CIDR ranges the key may be used from."`
	Restricted   bool       `json:"restricted,omitempty" doc:"A restricted account: every request gets 403."`
	RateLimit    int        `json:"rate_limit,omitempty" doc:"Requests per minute replacing the tier figures."`
	DailyQuota   int        `json:"daily_quota,omitempty" doc:"v1 eligibility verifications per UTC day; negative for unlimited."`
	ExpiresAt    *time.Time `json:"expires_at,omitempty" doc:"When the key stops working."`
}

// KeyCreated is the answer to key creation and rotation. api_key is shown
// this once; only its hash is stored.
type KeyCreated struct {
	APIKey       string     `json:"api_key" doc:"The key. Shown once."`
	CreatedAt    time.Time  `json:"created_at"`
	KeyID        string     `json:"key_id" doc:"The key's public id, used in /api/keys/{key_id}."`
	Env          string     `json:"env"`
	Tier         string     `json:"tier"`
	Scopes       []string   `json:"scopes"`
	Organization string     `json:"organization,omitempty"`
	ExpiresAt    *time.Time `json:"expires_at,omitempty"`
	// Rotation only.
	Replaces         string     `json:"replaces,omitempty" doc:"Rotation: the id of the key this one replaces."`
	OldKeyExpiresAt  *time.Time `json:"old_key_expires_at,omitempty" doc:"Rotation: when the replaced key stops working."`
	OldKeyValidHours int        `json:"old_key_valid_hours,omitempty"`
}

// KeyInfo describes a key (never its secret).
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

// KeyList is a page of keys.
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
	Errors        int64     `json:"errors" doc:"Responses with status 400 or above."`
	LatencyMS     Latencies `json:"latency_ms"`
	ErrorRate     float64   `json:"error_rate"`
}

// Latencies are latency percentiles in milliseconds (within 6.25 %).
type Latencies struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
}

// WhitelistRequest is the body of POST /api/keys/{key_id}/whitelist.
type WhitelistRequest struct {
	IPs []string `json:"ips" doc:"Addresses or CIDR ranges; an empty list lifts the restriction."`
}

// Whitelist answers POST /api/keys/{key_id}/whitelist.
type Whitelist struct {
	KeyID string   `json:"key_id"`
	IPs   []string `json:"ips"`
}
