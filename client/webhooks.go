package client

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/healthagents/healthagents/api"
)

// The webhook endpoints' wire types.
type (
	// WebhookCreateRequest is the body of POST /webhooks.
	WebhookCreateRequest = api.WebhookCreateRequest
	// WebhookEndpoint is a registered webhook endpoint.
	WebhookEndpoint = api.WebhookEndpoint
	// WebhookCreated is a new endpoint with its signing secret, shown once.
	WebhookCreated = api.WebhookCreated
	// WebhookAttempt is one delivery attempt to an endpoint.
	WebhookAttempt = api.WebhookAttempt
)

// CreateWebhook calls POST /webhooks: events of the caller's requests go to
// url, signed with the returned secret (keep it: it is shown once). An
// unknown event or an unsafe URL is a 400 (IsInvalid).
func (c *Client) CreateWebhook(ctx context.Context, endpointURL string, events []string) (*WebhookCreated, error) {
	var out WebhookCreated
	body := WebhookCreateRequest{URL: endpointURL, Events: events}
	if err := c.do(ctx, call{method: http.MethodPost, path: "/webhooks", body: body, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListWebhooks walks all of the caller's endpoints, oldest first, a page
// at a time.
func (c *Client) ListWebhooks(ctx context.Context) iter.Seq2[WebhookEndpoint, error] {
	return Paginate(ctx, MaxPageSize, c.ListWebhooksPage)
}

// ListWebhooksPage calls GET /webhooks for one page of the caller's
// endpoints.
func (c *Client) ListWebhooksPage(ctx context.Context, offset, limit int) (Page[WebhookEndpoint], error) {
	var out struct {
		Webhooks []WebhookEndpoint `json:"webhooks"`
		Total    int               `json:"total"`
	}
	if err := c.do(ctx, call{method: http.MethodGet, path: "/webhooks", query: webhookPageQuery(offset, limit), out: &out}); err != nil {
		return Page[WebhookEndpoint]{}, err
	}
	return Page[WebhookEndpoint]{Items: out.Webhooks, Total: out.Total}, nil
}

// GetWebhook calls GET /webhooks/{id}.
func (c *Client) GetWebhook(ctx context.Context, id string) (*WebhookEndpoint, error) {
	var out WebhookEndpoint
	if err := c.do(ctx, call{method: http.MethodGet, path: "/webhooks/" + escape(id), out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteWebhook calls DELETE /webhooks/{id}; undelivered events go with it.
func (c *Client) DeleteWebhook(ctx context.Context, id string) error {
	return c.do(ctx, call{method: http.MethodDelete, path: "/webhooks/" + escape(id)})
}

// ListWebhookDeliveries walks the delivery attempts to endpoint id, newest
// first, a page at a time.
func (c *Client) ListWebhookDeliveries(ctx context.Context, id string) iter.Seq2[WebhookAttempt, error] {
	return Paginate(ctx, MaxPageSize, func(ctx context.Context, offset, limit int) (Page[WebhookAttempt], error) {
		return c.ListWebhookDeliveriesPage(ctx, id, offset, limit)
	})
}

// ListWebhookDeliveriesPage calls GET /webhooks/{id}/deliveries for one page
// of the endpoint's delivery attempts, newest first.
func (c *Client) ListWebhookDeliveriesPage(ctx context.Context, id string, offset, limit int) (Page[WebhookAttempt], error) {
	var out struct {
		Attempts []WebhookAttempt `json:"attempts"`
		Total    int              `json:"total"`
	}
	if err := c.do(ctx, call{method: http.MethodGet, path: "/webhooks/" + escape(id) + "/deliveries", query: webhookPageQuery(offset, limit), out: &out}); err != nil {
		return Page[WebhookAttempt]{}, err
	}
	return Page[WebhookAttempt]{Items: out.Attempts, Total: out.Total}, nil
}

func webhookPageQuery(offset, limit int) url.Values {
	q := url.Values{}
	q.Set("offset", strconv.Itoa(offset))
	q.Set("limit", strconv.Itoa(limit))
	return q
}

// Errors of VerifyWebhook. A receiver answers 400 or 401 to any of them and
// must not act on the body.
var (
	// ErrWebhookSecret: the secret is not whsec_ + Base64.
	ErrWebhookSecret = errors.New("client: malformed webhook secret")
	// ErrWebhookHeaders: webhook-id, webhook-timestamp or webhook-signature
	// is missing or malformed.
	ErrWebhookHeaders = errors.New("client: missing or malformed webhook headers")
	// ErrWebhookTimestamp: webhook-timestamp is outside the tolerance (a
	// replay, or a skewed clock).
	ErrWebhookTimestamp = errors.New("client: webhook timestamp outside the tolerance")
	// ErrWebhookSignature: no signature in webhook-signature matches.
	ErrWebhookSignature = errors.New("client: webhook signature does not match")
	// ErrWebhookTolerance: WithWebhookTolerance was given zero or less. To
	// verify without the timestamp check, say so with
	// WithoutWebhookTimestampCheck.
	ErrWebhookTolerance = errors.New("client: webhook tolerance must be positive (WithoutWebhookTimestampCheck turns the check off)")
)

// DefaultWebhookTolerance is how far webhook-timestamp may be from now.
const DefaultWebhookTolerance = 5 * time.Minute

// WebhookOption configures VerifyWebhook.
type WebhookOption func(*webhookVerifier)

type webhookVerifier struct {
	tolerance time.Duration
	noCheck   bool
	now       func() time.Time
}

// WithWebhookTolerance sets how far the timestamp may be from now, either
// way (default 5 min). It must be positive: zero or less makes every
// verification fail with ErrWebhookTolerance rather than silently skip the
// replay check. Sub-second values work: the timestamp has whole seconds,
// so a delivery passes if any instant of its second is within d of now.
func WithWebhookTolerance(d time.Duration) WebhookOption {
	return func(v *webhookVerifier) { v.tolerance = d }
}

// WithoutWebhookTimestampCheck verifies the signature only, accepting a
// delivery of any age. Only for replaying stored deliveries (tests, audits):
// a live receiver that uses it accepts replays of captured deliveries.
func WithoutWebhookTimestampCheck() WebhookOption {
	return func(v *webhookVerifier) { v.noCheck = true }
}

// WithWebhookClock sets the clock the timestamp is compared with (default
// time.Now).
func WithWebhookClock(now func() time.Time) WebhookOption {
	return func(v *webhookVerifier) { v.now = now }
}

// VerifyWebhook checks a delivery as the Standard Webhooks specification
// says: webhook-signature must hold a "v1,<Base64 HMAC-SHA256>" entry (of
// possibly several, space-separated, as during secret rotation) matching
// "{webhook-id}.{webhook-timestamp}.{body}" under the Base64-decoded part of
// secret after "whsec_", compared in constant time; and webhook-timestamp
// must be within the tolerance of now (5 min unless WithWebhookTolerance
// says otherwise). Pass the body exactly as received,
// before any JSON decoding. Deliveries are at least once: deduplicate on
// webhook-id.
func VerifyWebhook(secret string, headers http.Header, body []byte, opts ...WebhookOption) error {
	v := webhookVerifier{tolerance: DefaultWebhookTolerance, now: time.Now}
	for _, o := range opts {
		o(&v)
	}
	if !v.noCheck && v.tolerance <= 0 {
		return ErrWebhookTolerance
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || len(key) == 0 {
		return ErrWebhookSecret
	}
	id, ts, sigs := headers.Get("webhook-id"), headers.Get("webhook-timestamp"), headers.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return ErrWebhookHeaders
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return ErrWebhookHeaders
	}
	if !v.noCheck {
		// The sender signed at some instant of second sec: accept when one
		// of [sec, sec+1s) is within the tolerance of now.
		signed := time.Unix(sec, 0)
		now := v.now()
		if now.Sub(signed.Add(time.Second)) >= v.tolerance || signed.Sub(now) > v.tolerance {
			return ErrWebhookTimestamp
		}
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	want := m.Sum(nil)
	for _, s := range strings.Fields(sigs) {
		version, sig, ok := strings.Cut(s, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrWebhookSignature
}

// WebhookEvent is a verified delivery.
type WebhookEvent struct {
	// ID is webhook-id: the same for every attempt of one event, so a
	// receiver that saw it before can acknowledge without acting again.
	ID        string          `json:"-"`
	Event     string          `json:"event"`
	Timestamp time.Time       `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// ParseWebhook verifies a delivery with VerifyWebhook and decodes it.
func ParseWebhook(secret string, headers http.Header, body []byte, opts ...WebhookOption) (*WebhookEvent, error) {
	if err := VerifyWebhook(secret, headers, body, opts...); err != nil {
		return nil, err
	}
	var e WebhookEvent
	if err := json.Unmarshal(body, &e); err != nil {
		return nil, fmt.Errorf("client: decoding webhook body: %w", err)
	}
	e.ID = headers.Get("webhook-id")
	return &e, nil
}
