package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"time"
)

// policy is the retry policy of one call: go-retryablehttp calls checkRetry
// after each attempt and backoff before each retry. Both run on the calling
// goroutine, one after the other, so the fields need no lock.
type policy struct {
	s          *settings
	method     string
	path       string
	replayable bool // idempotent method, or the request carries an Idempotency-Key
	now        func() time.Time

	attempts int
	wait     time.Duration // decided by checkRetry, returned by backoff
}

// retryableStatus lists the statuses worth another attempt: the request
// timed out, was rate limited, or met a gateway or service that was briefly
// unavailable. 500 is not among them: the service answers 500 for a failed
// proof, which a retry would only repeat.
func retryableStatus(code int) bool {
	switch code {
	case http.StatusRequestTimeout, http.StatusTooManyRequests,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// checkRetry decides whether to try again and, if so, how long to wait.
func (p *policy) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	p.attempts++
	if ctxErr := ctx.Err(); ctxErr != nil {
		return false, ctxErr
	}
	if err != nil {
		if !retryableTransportError(err) {
			return false, err
		}
		// A request that may have reached the server is repeated only when
		// repeating it is safe; one whose connection never opened always is.
		if !p.replayable && !isDialError(err) {
			return false, err
		}
		return p.schedule(ctx, p.exponential(), nil), nil
	}
	if !retryableStatus(resp.StatusCode) || !p.replayable {
		return false, nil
	}
	wait := p.exponential()
	if d, ok := p.serverWait(resp); ok {
		if d > p.s.maxRetryWait {
			p.debug(ctx, "not retrying: server asks to wait longer than the cap",
				"status", resp.StatusCode, "wait", d, "cap", p.s.maxRetryWait)
			return false, nil
		}
		wait = d
	}
	return p.schedule(ctx, wait, resp), nil
}

// schedule records the wait before the next attempt; it refuses a wait that
// would outlast ctx's deadline, since that attempt could never finish.
func (p *policy) schedule(ctx context.Context, wait time.Duration, resp *http.Response) bool {
	if p.attempts >= p.s.maxAttempts {
		return false
	}
	if dl, ok := ctx.Deadline(); ok && p.now().Add(wait).After(dl) {
		p.debug(ctx, "not retrying: the wait would outlast the deadline", "wait", wait)
		return false
	}
	p.wait = wait
	args := []any{"attempt", p.attempts, "wait", wait}
	if resp != nil {
		args = append(args, "status", resp.StatusCode, "request_id", resp.Header.Get("X-Request-ID"))
	}
	p.debug(ctx, "retrying", args...)
	return true
}

// backoff is go-retryablehttp's Backoff hook: the wait checkRetry chose.
func (p *policy) backoff(_, _ time.Duration, _ int, _ *http.Response) time.Duration {
	return p.wait
}

// exponential is the wait before retry n = attempts-1 when the server names
// none: uniform in [0, min(max, initial·2ⁿ)) — "full jitter", which spreads
// the retries of many clients hit by one outage.
func (p *policy) exponential() time.Duration {
	n := max(p.attempts-1, 0)
	ceil := p.s.backoffMax
	if n < 30 {
		if d := p.s.backoffInitial << n; d > 0 && d < ceil {
			ceil = d
		}
	}
	if ceil <= 0 {
		return 0
	}
	return rand.N(ceil)
}

// serverWait is how long the server asked the client to wait: Retry-After
// (seconds or HTTP date) on any retryable status, or on a 429 without it the
// time until X-RateLimit-Reset (Unix seconds).
func (p *policy) serverWait(resp *http.Response) (time.Duration, bool) {
	now := p.now()
	if d, ok := retryAfter(resp.Header, now); ok {
		return d, true
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		if n, ok := headerInt(resp.Header, "X-RateLimit-Reset"); ok {
			return max(time.Unix(n, 0).Sub(now), 0), true
		}
	}
	return 0, false
}

func (p *policy) debug(ctx context.Context, msg string, args ...any) {
	if p.s.logger == nil {
		return
	}
	p.s.logger.Log(ctx, slog.LevelDebug, msg, append([]any{"method", p.method, "path", p.path}, args...)...)
}

// retryableTransportError reports whether a failed round trip may succeed
// when repeated: not a certificate or protocol error, which would fail the
// same way again.
func retryableTransportError(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var (
		unknownAuthority x509.UnknownAuthorityError
		hostname         x509.HostnameError
		invalid          x509.CertificateInvalidError
		verify           *tls.CertificateVerificationError
		recordHeader     tls.RecordHeaderError
	)
	if errors.As(err, &unknownAuthority) || errors.As(err, &hostname) || errors.As(err, &invalid) ||
		errors.As(err, &verify) || errors.As(err, &recordHeader) {
		return false
	}
	msg := err.Error()
	for _, s := range []string{"unsupported protocol scheme", "stopped after", "server gave HTTP response to HTTPS client", "invalid header"} {
		if strings.Contains(msg, s) {
			return false
		}
	}
	return true
}

// isDialError reports an error from opening the connection: the request was
// never sent.
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
