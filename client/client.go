package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/go-cleanhttp"
	"github.com/hashicorp/go-retryablehttp"

	"github.com/healthagents/healthagents"
)

// Client calls the healthagents HTTP API. Create one with New and share it:
// it is safe for concurrent use and keeps a pool of connections.
type Client struct {
	base *url.URL
	s    settings
	now  func() time.Time
	err  error // an invalid option given to With, returned by every call
	// fedTask is the federated task of ForFederatedTask; "": the default.
	fedTask string
}

// maxResponseBytes bounds a response body the client reads.
const maxResponseBytes = 16 << 20

// New returns a client for the API at baseURL, e.g. "http://localhost:8000"
// or "https://api.example.org/healthagents" when the server is mounted under
// a path prefix.
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil {
		return nil, fmt.Errorf("client: base URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: base URL must be http:// or https:// with a host, got %q", u.Redacted())
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("client: base URL must carry no user info, query or fragment")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	c := &Client{
		base: u,
		s: settings{
			timeout:        DefaultTimeout,
			maxAttempts:    DefaultMaxAttempts,
			backoffInitial: defaultBackoffInitial,
			backoffMax:     defaultBackoffMax,
			maxRetryWait:   DefaultMaxRetryWait,
			userAgent:      "healthagents-go/" + healthagents.Version,
			autoIdemKeys:   true,
		},
		now: time.Now,
	}
	for _, o := range opts {
		if err := o(&c.s); err != nil {
			return nil, err
		}
	}
	if c.s.idemKey != "" {
		return nil, errors.New("client: WithIdempotencyKey is a per-call option: pass it to Client.With")
	}
	if c.s.info != nil {
		return nil, errors.New("client: WithResponseInfo is a per-call option: pass it to Client.With")
	}
	if c.s.httpClient == nil {
		c.s.httpClient = cleanhttp.DefaultPooledClient()
	}
	return c, nil
}

// With returns a client that shares c's connections and applies opts on top
// of c's options. Use it for per-call settings:
//
//	res, err := c.With(client.WithIdempotencyKey(orderID), client.WithTimeout(5*time.Second)).
//		VerifyEligibility(ctx, env, "PROC001")
//
// An invalid option does not panic: every call made through the derived
// client returns its error. The methods keep the exact shapes of
// healthagents.Service's, which is why per-call options go through With
// rather than a variadic parameter.
func (c *Client) With(opts ...Option) *Client {
	d := &Client{base: c.base, s: c.s.clone(), now: c.now, err: c.err}
	for _, o := range opts {
		if d.err != nil {
			break
		}
		d.err = o(&d.s)
	}
	return d
}

// BaseURL returns the base URL requests are made against.
func (c *Client) BaseURL() string { return c.base.String() }

// call describes one API call.
type call struct {
	method string
	path   string     // below the base URL, starting with "/"
	query  url.Values // may be nil
	body   any        // JSON-encoded when non-nil
	out    any        // JSON-decoded from a 2xx body when non-nil
	accept string     // the Accept header; "" is application/json
	// raw, when set, is the request body as is, sent with contentType
	// (instead of body's JSON).
	raw         []byte
	contentType string
	// rawOut, when set, receives the response body as is, whatever the
	// status, when its Content-Type is rawType; it is then not parsed as
	// an error's detail.
	rawOut  *[]byte
	rawType string
	// limit bounds the response body; 0 is maxResponseBytes.
	limit int64
}

// do makes the call with retries and decodes the result or the error.
func (c *Client) do(ctx context.Context, cl call) error {
	if c.err != nil {
		return c.err
	}
	s := &c.s
	if err := c.checkTransport(); err != nil {
		return err
	}
	if s.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.timeout)
		defer cancel()
	}
	var payload []byte
	if cl.raw != nil {
		payload = cl.raw
	} else if cl.body != nil {
		var err error
		if payload, err = json.Marshal(cl.body); err != nil {
			return fmt.Errorf("healthagents: encoding %s %s request: %w", cl.method, cl.path, err)
		}
	}
	// cl.path holds escaped segments (escape): keep them as the raw path
	// so an id with '/' or '%' stays one segment and is not escaped twice.
	u := *c.base
	u.RawPath = c.base.EscapedPath() + cl.path
	unescaped, err := url.PathUnescape(u.RawPath)
	if err != nil {
		return fmt.Errorf("healthagents: bad path %q: %w", cl.path, err)
	}
	u.Path = unescaped
	if len(cl.query) > 0 {
		u.RawQuery = cl.query.Encode()
	}
	var rawBody any
	if payload != nil {
		rawBody = payload
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, cl.method, u.String(), rawBody)
	if err != nil {
		return fmt.Errorf("healthagents: %s %s: %w", cl.method, cl.path, err)
	}
	h := req.Header
	accept := cl.accept
	if accept == "" {
		accept = "application/json"
	}
	h.Set("Accept", accept)
	switch {
	case cl.raw != nil:
		h.Set("Content-Type", cl.contentType)
	case payload != nil:
		h.Set("Content-Type", "application/json")
	}
	h.Set("User-Agent", s.userAgent)
	for k, v := range s.header {
		h[k] = slices.Clone(v)
	}
	if s.apiKey != "" {
		h.Set("Authorization", "Bearer "+s.apiKey)
	}
	idem := s.idemKey
	if idem == "" && s.autoIdemKeys && cl.method == http.MethodPost {
		idem = newIdempotencyKey()
	}
	if idem != "" {
		h.Set("Idempotency-Key", idem)
	}

	p := &policy{
		s:          s,
		method:     cl.method,
		path:       cl.path,
		replayable: idempotentMethod(cl.method) || idem != "",
		now:        c.now,
	}
	rc := &retryablehttp.Client{
		HTTPClient:   s.httpClient,
		Logger:       nil,
		RetryMax:     s.maxAttempts - 1,
		RetryWaitMin: s.backoffInitial,
		RetryWaitMax: s.backoffMax,
		CheckRetry:   p.checkRetry,
		Backoff:      p.backoff,
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
	}
	resp, err := rc.Do(req)
	if s.info != nil {
		*s.info = ResponseInfo{Attempts: p.attempts, IdempotencyKey: idem}
	}
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		c.log(ctx, "request failed", "method", cl.method, "path", cl.path, "attempts", p.attempts, "err", err)
		if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			err = fmt.Errorf("%w (%w)", ctxErr, err)
		}
		return fmt.Errorf("healthagents: %s %s: %w", cl.method, cl.path, err)
	}
	defer resp.Body.Close()
	limit := cl.limit
	if limit <= 0 {
		limit = maxResponseBytes
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	now := c.now()
	if s.info != nil {
		s.info.StatusCode = resp.StatusCode
		s.info.RequestID = resp.Header.Get("X-Request-ID")
		s.info.RateLimit = parseRateLimit(resp.Header, now)
	}
	c.log(ctx, "response", "method", cl.method, "path", cl.path, "status", resp.StatusCode,
		"attempts", p.attempts, "request_id", resp.Header.Get("X-Request-ID"))
	if err != nil {
		return fmt.Errorf("healthagents: %s %s: reading response: %w", cl.method, cl.path, err)
	}
	if int64(len(body)) > limit {
		return fmt.Errorf("healthagents: %s %s: response larger than %d bytes", cl.method, cl.path, limit)
	}
	if cl.rawOut != nil && strings.HasPrefix(resp.Header.Get("Content-Type"), cl.rawType) {
		*cl.rawOut = body
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			return parseError(resp.StatusCode, resp.Header, nil, now)
		}
		return nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return parseError(resp.StatusCode, resp.Header, body, now)
	}
	if cl.out == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(cl.out); err != nil {
		return fmt.Errorf("healthagents: %s %s: decoding response: %w", cl.method, cl.path, err)
	}
	return nil
}

// ErrInsecureLiveKey is returned, before anything is sent, for a call that
// would carry an sk_live_ key over plain HTTP to a non-loopback host.
var ErrInsecureLiveKey = errors.New("client: refusing to send an sk_live_ key over plain HTTP (use https://, or WithInsecureLiveKey behind a TLS-terminating proxy)")

func (c *Client) checkTransport() error {
	if c.base.Scheme != "http" || c.s.insecureLive || !strings.HasPrefix(c.s.apiKey, "sk_live_") {
		return nil
	}
	host := c.base.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsLoopback() {
		return nil
	}
	return ErrInsecureLiveKey
}

func (c *Client) log(ctx context.Context, msg string, args ...any) {
	if c.s.logger != nil {
		c.s.logger.Log(ctx, slog.LevelDebug, msg, args...)
	}
}

// newIdempotencyKey returns 128 random bits as hex.
func newIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

func idempotentMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodOptions:
		return true
	}
	return false
}

// escape returns s as one path segment.
func escape(s string) string { return url.PathEscape(s) }
