package client

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Defaults.
const (
	// DefaultTimeout bounds one call, retries and waits included: the spec's
	// client timeout.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxAttempts is how many times a retryable call is tried.
	DefaultMaxAttempts = 3
	// DefaultMaxRetryWait caps a single wait between attempts. A server that
	// asks for a longer wait (Retry-After, X-RateLimit-Reset) gets no retry:
	// the call returns the *Error and its RateLimit says how long to wait.
	DefaultMaxRetryWait = 60 * time.Second

	defaultBackoffInitial = 500 * time.Millisecond
	defaultBackoffMax     = 8 * time.Second

	// maxAttemptsLimit bounds WithMaxAttempts so that a typo cannot turn a
	// client into a load generator.
	maxAttemptsLimit = 10
)

// settings is what options configure. A Client holds one; With copies it and
// applies more options on the copy.
type settings struct {
	apiKey         string
	httpClient     *http.Client
	timeout        time.Duration
	maxAttempts    int
	backoffInitial time.Duration
	backoffMax     time.Duration
	maxRetryWait   time.Duration
	logger         *slog.Logger
	userAgent      string
	autoIdemKeys   bool
	idemKey        string
	header         http.Header
	info           *ResponseInfo
	insecureLive   bool
}

func (s settings) clone() settings {
	s.header = s.header.Clone()
	return s
}

// Option configures a Client. Every option works both in New, for all calls,
// and in Client.With, for the calls made through the derived client; the
// last one applied wins. WithIdempotencyKey and WithResponseInfo are only
// accepted by With: one key or one ResponseInfo shared by every call of a
// client would be a bug.
type Option func(*settings) error

// WithAPIKey sends key as "Authorization: Bearer <key>". The root family
// works without a key at the public rate limit; /api/v1/* and /api/keys/*
// need one. The key never appears in errors or logs.
func WithAPIKey(key string) Option {
	return func(s *settings) error {
		if strings.ContainsAny(key, "\r\n") {
			return errors.New("client: API key contains a line break")
		}
		s.apiKey = key
		return nil
	}
}

// WithInsecureLiveKey lets the client send an sk_live_ key over plain HTTP
// to a host that is not a loopback address. By default it refuses before
// sending anything, since the key would cross the network in clear text (the
// server refuses it too, unless a trusted proxy says the request was HTTPS —
// the one case this option is for).
func WithInsecureLiveKey(allow bool) Option {
	return func(s *settings) error {
		s.insecureLive = allow
		return nil
	}
}

// WithHTTPClient sends requests through hc (its Transport, Jar and
// CheckRedirect). Its Timeout, if set, bounds each attempt; WithTimeout
// bounds the whole call. The default is a client with its own pooled
// transport, never http.DefaultClient.
func WithHTTPClient(hc *http.Client) Option {
	return func(s *settings) error {
		if hc == nil {
			return errors.New("client: nil *http.Client")
		}
		s.httpClient = hc
		return nil
	}
}

// WithTimeout bounds one call, retries and waits between them included
// (default DefaultTimeout, 30 s). Zero leaves only the caller's ctx to bound
// a call. A retry whose wait would end after the deadline is not made.
func WithTimeout(d time.Duration) Option {
	return func(s *settings) error {
		if d < 0 {
			return errors.New("client: negative timeout")
		}
		s.timeout = d
		return nil
	}
}

// WithMaxAttempts sets how many times a retryable call is tried, the first
// attempt included (default DefaultMaxAttempts; 1 disables retries; at most
// 10).
func WithMaxAttempts(n int) Option {
	return func(s *settings) error {
		if n < 1 || n > maxAttemptsLimit {
			return fmt.Errorf("client: max attempts must be 1..%d", maxAttemptsLimit)
		}
		s.maxAttempts = n
		return nil
	}
}

// WithRetryBackoff sets the exponential backoff between attempts when the
// server does not say how long to wait: before retry n (from 0) the client
// waits a random duration in [0, min(max, initial·2ⁿ)) ("full jitter").
// Defaults: 500 ms and 8 s.
func WithRetryBackoff(initial, max time.Duration) Option {
	return func(s *settings) error {
		if initial <= 0 || max < initial {
			return errors.New("client: retry backoff needs 0 < initial <= max")
		}
		s.backoffInitial, s.backoffMax = initial, max
		return nil
	}
}

// WithMaxRetryWait caps one wait between attempts (default
// DefaultMaxRetryWait, 60 s). When Retry-After or X-RateLimit-Reset asks for
// longer, the client does not retry and returns the error at once.
func WithMaxRetryWait(d time.Duration) Option {
	return func(s *settings) error {
		if d <= 0 {
			return errors.New("client: max retry wait must be positive")
		}
		s.maxRetryWait = d
		return nil
	}
}

// WithLogger logs each attempt, retry and failure at debug level: method,
// path, status, attempt, wait and request id. Never bodies, headers, query
// strings or keys. Without it the client is silent.
func WithLogger(l *slog.Logger) Option {
	return func(s *settings) error {
		s.logger = l
		return nil
	}
}

// WithUserAgent replaces the User-Agent header (default
// "healthagents-go/<version>").
func WithUserAgent(ua string) Option {
	return func(s *settings) error {
		if strings.ContainsAny(ua, "\r\n") {
			return errors.New("client: user agent contains a line break")
		}
		s.userAgent = ua
		return nil
	}
}

// WithHeader sets an extra request header. Authorization, User-Agent and
// Idempotency-Key have their own options and cannot be set here.
func WithHeader(key, value string) Option {
	return func(s *settings) error {
		switch http.CanonicalHeaderKey(key) {
		case "Authorization", "User-Agent", "Idempotency-Key", "Content-Type", "Content-Length":
			return fmt.Errorf("client: header %s has its own option", key)
		}
		if key == "" || strings.ContainsAny(key+value, "\r\n") {
			return errors.New("client: invalid header")
		}
		if s.header == nil {
			s.header = make(http.Header)
		}
		s.header.Set(key, value)
		return nil
	}
}

// WithAutoIdempotencyKeys turns on (the default) or off the random
// Idempotency-Key the client adds to every POST. The key is the same on every
// attempt of one call, which is what makes retrying a POST safe: the server
// answers a repeated key with the first answer instead of doing the work
// twice. Without a key a POST is retried only when the connection could not
// be opened, so the request never reached the server.
func WithAutoIdempotencyKeys(on bool) Option {
	return func(s *settings) error {
		s.autoIdemKeys = on
		return nil
	}
}

// WithIdempotencyKey sends key as the Idempotency-Key header (per call only:
// pass it to Client.With). Use a key derived from your own request id to make
// a POST safe to repeat across process restarts, not only across retries.
func WithIdempotencyKey(key string) Option {
	return func(s *settings) error {
		if key == "" || len(key) > 255 || strings.ContainsAny(key, "\r\n") {
			return errors.New("client: idempotency key must be 1..255 characters without line breaks")
		}
		s.idemKey = key
		return nil
	}
}

// WithResponseInfo fills *info after each call made through the derived
// client (per call only: pass it to Client.With) with the status, request id,
// rate-limit headers and number of attempts of the last response, whether the
// call succeeded or not.
func WithResponseInfo(info *ResponseInfo) Option {
	return func(s *settings) error {
		if info == nil {
			return errors.New("client: nil *ResponseInfo")
		}
		s.info = info
		return nil
	}
}

// ResponseInfo describes the last HTTP response of a call.
type ResponseInfo struct {
	StatusCode     int
	RequestID      string     // X-Request-ID
	RateLimit      *RateLimit // nil when the response carried no rate-limit headers
	Attempts       int        // attempts made, 1 when the first one answered
	IdempotencyKey string     // the Idempotency-Key sent, if any
}
