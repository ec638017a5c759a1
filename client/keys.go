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
func (c *Client) ListKeysPage(ctx context.Context, offset, limit int) (Page[KeyInfo], error) {
	var out KeyList
	if err := c.do(ctx, call{method: http.MethodGet, path: "/api/keys", query: offsetLimit(offset, limit), out: &out}); err != nil {
		return Page[KeyInfo]{}, err
	}
	return Page[KeyInfo]{Items: out.Keys, Total: out.Total}, nil
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
	return Paginate(ctx, MaxPageSize, c.ListKeysPage)
}

// offsetLimit is the query of one page of an offset/limit list.
func offsetLimit(offset, limit int) url.Values {
	return url.Values{"offset": {strconv.Itoa(offset)}, "limit": {strconv.Itoa(limit)}}
}
