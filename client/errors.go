package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/api"
)

// Error is the one error type for a response the API answered with a status
// other than 2xx. It unwraps to a *healthagents.Error carrying the same Code
// and Detail, so code written against the in-process service works
// unchanged against the remote one:
//
//	var he *healthagents.Error
//	if errors.As(err, &he) && he.Code == healthagents.CodeNotFound { ... }
//
// Transport failures (connection refused, ctx cancelled, deadline) are not
// *Error: they wrap the underlying error, so errors.Is(err,
// context.DeadlineExceeded) works.
type Error struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Code is the service's error code for StatusCode (the inverse of the
	// server's code → status table).
	Code healthagents.Code
	// Detail is the body's "detail" text as sent, or the status text when the
	// body had none.
	Detail string
	// V1Code is the uppercase v1 error code carried at the front of Detail
	// ("PATIENT_NOT_FOUND: ..."), or "".
	V1Code string
	// RateLimit holds the rate-limit headers of the response, nil when it had
	// none. On 429 its RetryAfter says how long to wait.
	RateLimit *RateLimit
	// RequestID is the X-Request-ID the server answered with; quote it when
	// reporting a problem.
	RequestID string

	he *healthagents.Error
}

func (e *Error) Error() string {
	return fmt.Sprintf("healthagents: %d %s", e.StatusCode, e.Detail)
}

// Unwrap returns the *healthagents.Error with the same Code and Detail.
func (e *Error) Unwrap() error {
	if e.he == nil {
		return &healthagents.Error{Code: e.Code, Detail: e.Detail}
	}
	return e.he
}

// V1 error codes the API puts at the front of a detail: the root package's
// (healthagents.V1PatientNotFound, …), named here too so that code using
// only the SDK reads them from one place. errors.Is(err,
// healthagents.ErrPatientNotFound) and the other sentinels of
// healthagents.Error.Is answer as they do in process.
const (
	V1PatientNotFound     = healthagents.V1PatientNotFound
	V1NoInsurance         = healthagents.V1NoInsurance
	V1UntrustedCredential = healthagents.V1UntrustedCredential
	V1ProofInvalid        = healthagents.V1ProofInvalid
	V1NetworkError        = healthagents.V1NetworkError
	V1InteractionFound    = healthagents.V1InteractionFound
	V1Contraindicated     = healthagents.V1Contraindicated
	V1Ineligible          = healthagents.V1Ineligible
	V1Unidentified        = healthagents.V1Unidentified
	V1PharmacyError       = healthagents.V1PharmacyError
	V1ProofFailed         = healthagents.V1ProofFailed
)

// codeOf maps an HTTP status back to the service's code. It is the inverse of
// the server's table; statuses the server never sends map by class.
func codeOf(status int) healthagents.Code {
	switch status {
	case http.StatusBadRequest, http.StatusMethodNotAllowed, http.StatusNotAcceptable,
		http.StatusUnsupportedMediaType:
		return healthagents.CodeInvalid
	case http.StatusUnauthorized:
		return healthagents.CodeUnauthorized
	case http.StatusForbidden:
		return healthagents.CodeForbidden
	case http.StatusNotFound, http.StatusGone:
		return healthagents.CodeNotFound
	case http.StatusConflict:
		return healthagents.CodeConflict
	case http.StatusRequestEntityTooLarge:
		return healthagents.CodeTooLarge
	case http.StatusUnprocessableEntity:
		return healthagents.CodeUnprocessable
	case http.StatusTooManyRequests:
		return healthagents.CodeRateLimited
	case http.StatusServiceUnavailable, http.StatusBadGateway:
		return healthagents.CodeUnavailable
	case http.StatusGatewayTimeout, http.StatusRequestTimeout:
		return healthagents.CodeTimeout
	}
	if status >= 400 && status < 500 {
		return healthagents.CodeInvalid
	}
	return healthagents.CodeInternal
}

// maxDetail bounds the detail kept from an error body that is not JSON (a
// proxy's HTML page, say).
const maxDetail = 512

// parseError builds the *Error for a non-2xx response from its status,
// headers and (already size-limited) body.
func parseError(status int, h http.Header, body []byte, now time.Time) *Error {
	e := &Error{
		StatusCode: status,
		Code:       codeOf(status),
		RateLimit:  parseRateLimit(h, now),
		RequestID:  h.Get("X-Request-ID"),
	}
	var b struct {
		Detail *string `json:"detail"`
	}
	if json.Unmarshal(body, &b) == nil && b.Detail != nil && *b.Detail != "" {
		e.Detail = *b.Detail
	} else if t := strings.TrimSpace(string(body)); t != "" && !strings.HasPrefix(t, "{") && !strings.HasPrefix(t, "<") {
		e.Detail = truncate(t, maxDetail)
	}
	if e.Detail == "" {
		e.Detail = http.StatusText(status)
		if e.Detail == "" {
			e.Detail = "HTTP " + strconv.Itoa(status)
		}
	}
	e.V1Code = v1Code(e.Detail)
	e.he = &healthagents.Error{Code: e.Code, Detail: e.Detail}
	return e
}

// v1Code returns the uppercase code at the front of detail ("NO_INSURANCE:
// ..."): at least three characters of A-Z, 0-9 and _, starting with a
// letter, followed by a colon.
func v1Code(detail string) string {
	i := strings.IndexByte(detail, ':')
	if i < 3 {
		return ""
	}
	code := detail[:i]
	for j := 0; j < len(code); j++ {
		c := code[j]
		switch {
		case c >= 'A' && c <= 'Z':
		case j > 0 && (c == '_' || (c >= '0' && c <= '9')):
		default:
			return ""
		}
	}
	return code
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// RateLimit is what the rate-limit headers of a response say.
type RateLimit struct {
	Limit     int       // X-RateLimit-Limit: requests allowed in the window; -1 if absent
	Remaining int       // X-RateLimit-Remaining: requests left; -1 if absent
	Reset     time.Time // X-RateLimit-Reset (Unix seconds); zero if absent
	// RetryAfter is Retry-After (seconds or an HTTP date) as a duration from
	// the response's arrival; zero if absent.
	RetryAfter time.Duration
}

// parseRateLimit reads the rate-limit headers; nil when none is present or
// parses.
func parseRateLimit(h http.Header, now time.Time) *RateLimit {
	rl := RateLimit{Limit: -1, Remaining: -1}
	found := false
	if n, ok := headerInt(h, "X-RateLimit-Limit"); ok {
		rl.Limit, found = int(n), true
	}
	if n, ok := headerInt(h, "X-RateLimit-Remaining"); ok {
		rl.Remaining, found = int(n), true
	}
	if n, ok := headerInt(h, "X-RateLimit-Reset"); ok {
		rl.Reset, found = time.Unix(n, 0), true
	}
	if d, ok := retryAfter(h, now); ok {
		rl.RetryAfter, found = d, true
	}
	if !found {
		return nil
	}
	return &rl
}

// headerInt parses a non-negative integer header value.
func headerInt(h http.Header, key string) (int64, bool) {
	v := strings.TrimSpace(h.Get(key))
	if v == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > 1<<40 {
		return 0, false
	}
	return n, true
}

// retryAfter parses Retry-After as delay-seconds or an HTTP date (RFC 9110
// §10.2.3). A date in the past gives 0.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 || n > 1<<31 {
			return 0, false
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// Helpers that test an error's code. They work on *Error and on the
// *healthagents.Error the in-process service returns alike.
func hasCode(err error, c healthagents.Code) bool {
	var he *healthagents.Error
	return errors.As(err, &he) && he.Code == c
}

// IsInvalid reports a 400: the request was malformed or its data did not
// check out (hash mismatch, bad CID, undecryptable data).
func IsInvalid(err error) bool { return hasCode(err, healthagents.CodeInvalid) }

// IsUnauthorized reports a 401: a missing, invalid or expired API key.
func IsUnauthorized(err error) bool { return hasCode(err, healthagents.CodeUnauthorized) }

// IsForbidden reports a 403: the key lacks permission or the caller's address
// is not allowed.
func IsForbidden(err error) bool { return hasCode(err, healthagents.CodeForbidden) }

// IsNotRegistered reports a v1 federated round endpoint's 403 for a key
// whose organization is not registered (RegisterFederatedOrganization).
func IsNotRegistered(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.StatusCode == http.StatusForbidden && e.Detail == api.NotRegisteredDetail
}

// IsNotFound reports a 404: an unknown procedure, drug, key or route.
func IsNotFound(err error) bool { return hasCode(err, healthagents.CodeNotFound) }

// IsConflict reports a 409.
func IsConflict(err error) bool { return hasCode(err, healthagents.CodeConflict) }

// IsTooLarge reports a 413: the request body exceeded the server's limit.
func IsTooLarge(err error) bool { return hasCode(err, healthagents.CodeTooLarge) }

// IsUnprocessable reports a 422: the request was understood and refused, such
// as a prescription with a drug interaction.
func IsUnprocessable(err error) bool { return hasCode(err, healthagents.CodeUnprocessable) }

// IsRateLimited reports a 429. RateLimitOf gives the headers.
func IsRateLimited(err error) bool { return hasCode(err, healthagents.CodeRateLimited) }

// IsUnavailable reports a 503 (or 502): the service or a dependency of it is
// down; retrying later may succeed.
func IsUnavailable(err error) bool { return hasCode(err, healthagents.CodeUnavailable) }

// V1CodeOf returns the v1 error code of err ("PATIENT_NOT_FOUND"), or "".
func V1CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.V1Code
	}
	var he *healthagents.Error
	if errors.As(err, &he) {
		return v1Code(he.Detail)
	}
	return ""
}

// RateLimitOf returns the rate-limit headers of the response behind err, or
// nil.
func RateLimitOf(err error) *RateLimit {
	var e *Error
	if errors.As(err, &e) {
		return e.RateLimit
	}
	return nil
}
