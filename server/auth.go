package server

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/internal/openapi"
	"github.com/healthagents/healthagents/ratelimit"
)

// The details of authentication and error answers (docs/decisions.md,
// "Errors and statuses").
const (
	detailUnauthorized = "Unauthorized: Invalid API key"
	detailForbidden    = "Forbidden: Insufficient permissions"
	detailUnavailable  = "Service temporarily unavailable"
	// A live key, or in production the admin token, that reached us over
	// plain HTTP: it crossed the network in clear and must be rotated;
	// distinct from a missing scope so the caller knows what to fix.
	detailLiveNeedsHTTPS  = "Forbidden: HTTPS required for live keys"
	detailAdminNeedsHTTPS = "Forbidden: HTTPS required for the admin token"
)

// authOptions are the settings of the authentication and limit middleware.
type authOptions struct {
	production bool
	trusted    []netip.Prefix
}

// WithProduction marks the server as running in production: sk_dev_ keys are
// refused (401) and keys created through POST /auth/keys default to sk_live_.
func WithProduction(on bool) Option {
	return func(o *options) error { o.auth.production = on; return nil }
}

// WithTrustedProxies names the reverse proxies (addresses or CIDR ranges)
// whose X-Forwarded-For and X-Forwarded-Proto headers are believed. From any
// other peer those headers are ignored: the client address is the TCP peer
// and HTTPS means a TLS connection to this server.
func WithTrustedProxies(proxies ...string) Option {
	return func(o *options) error {
		ps, err := apikey.ParseAllowList(proxies)
		if err != nil {
			return fmt.Errorf("server: trusted proxies: %w", err)
		}
		o.auth.trusted = ps
		return nil
	}
}

type keyCtxKey struct{}

// callerCtxKey holds the ratelimit.Caller the gate charged, for handlers
// that charge more once they know a request's cost (charge).
type callerCtxKey struct{}

// requestKey returns the API key the request authenticated with, or nil.
func requestKey(r *http.Request) *apikey.Key {
	k, _ := r.Context().Value(keyCtxKey{}).(*apikey.Key)
	return k
}

// guard wraps a route with authentication, permission and rate-limit
// checks, and usage recording. Routes documented with AuthNone (the
// documentation pages) pass through untouched.
func (s *srv) guard(rt route) http.Handler {
	if rt.Doc.Auth == openapi.AuthNone {
		return rt.Handler
	}
	class, scope := rt.Class, rt.Scope
	required := rt.Doc.Auth == openapi.AuthRequired
	adminBearer := rt.AdminBearer
	next := rt.Handler
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		remote, https := s.clientOf(r)
		bearer, present, wellFormed := bearerToken(r)
		var key *apikey.Key
		switch {
		case present && !wellFormed:
			s.authFailed(w, r, remote, http.StatusUnauthorized, "")
			return
		case present && adminBearer && !strings.HasPrefix(bearer, "sk_") && s.opts.auth.production && !https:
			// The admin token (or anything in its place) over plain HTTP
			// from a peer that is not a trusted proxy saying https:
			// refused before it is looked at, so no key is handed back in
			// clear.
			s.authFailed(w, r, remote, http.StatusForbidden, detailAdminNeedsHTTPS)
			return
		case present && !(adminBearer && !strings.HasPrefix(bearer, "sk_")):
			status, detail, k := s.authenticate(r, bearer, remote, https, scope)
			if status != 0 {
				s.authFailed(w, r, remote, status, detail)
				return
			}
			key = k
		case !present && required:
			writeDetail(w, http.StatusUnauthorized, detailUnauthorized)
			return
		}
		caller := ratelimit.Caller{IP: remote}
		if key == nil && adminBearer && present && s.deps.Keys != nil && s.deps.Keys.IsAdminToken(bearer) {
			// The operator's ADMIN_TOKEN gets the authenticated budget, not
			// the public one.
			caller = ratelimit.Caller{Key: apikey.ByAdminToken, Tier: string(apikey.Enterprise), IP: remote}
		}
		if key != nil {
			caller = ratelimit.Caller{
				Key: key.Budget(), Dev: key.Env == apikey.Dev, Tier: string(key.Tier),
				RateLimit: key.RateLimit, DailyQuota: key.DailyQuota, IP: remote,
			}
		}
		if !s.limit(w, r, class, caller) {
			if key != nil {
				s.deps.Keys.RecordUsage(key.ID, http.StatusTooManyRequests, time.Since(start))
			}
			return
		}
		if key == nil {
			next.ServeHTTP(w, r)
			return
		}
		rec := &responseRecorder{ResponseWriter: w}
		ctx := context.WithValue(context.WithValue(r.Context(), keyCtxKey{}, key), callerCtxKey{}, caller)
		// The Service's events carry the key's owner (Event.Owner), so a
		// tenant-scoped webhook registry delivers them only to its endpoints.
		ctx = healthagents.ContextWithOwner(ctx, ownerOf(key))
		next.ServeHTTP(rec, r.WithContext(ctx))
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		s.deps.Keys.RecordUsage(key.ID, status, time.Since(start))
	})
}

// authenticate checks a key and its right to this request, returning a
// status (401, 403 or 503) on refusal, with its detail when it is not the
// status's usual one.
func (s *srv) authenticate(r *http.Request, bearer string, remote netip.Addr, https bool, scope apikey.Scope) (int, string, *apikey.Key) {
	if s.deps.Keys == nil {
		return http.StatusUnauthorized, "", nil
	}
	k, err := s.deps.Keys.Authenticate(r.Context(), bearer, remote)
	switch {
	case errors.Is(err, apikey.ErrInvalid):
		return http.StatusUnauthorized, "", nil
	case errors.Is(err, apikey.ErrForbidden):
		return http.StatusForbidden, "", nil
	case err != nil:
		s.logger.ErrorContext(r.Context(), "authenticating a key failed", "err", err)
		return http.StatusServiceUnavailable, "", nil
	case k.Env == apikey.Dev && s.opts.auth.production:
		return http.StatusUnauthorized, "", nil // sk_dev_ keys do not exist for a production server
	case k.Env == apikey.Live && !https:
		return http.StatusForbidden, detailLiveNeedsHTTPS, nil // production keys only over HTTPS
	case scope != "" && !k.HasScope(scope):
		return http.StatusForbidden, "", nil
	}
	return 0, "", k
}

// authFailed answers a refused credential. Failures count against the
// client address's public budget, so guessing keys is rate limited too.
func (s *srv) authFailed(w http.ResponseWriter, r *http.Request, remote netip.Addr, status int, detail string) {
	if status != http.StatusServiceUnavailable && !s.limit(w, r, ratelimit.ClassGeneral, ratelimit.Caller{IP: remote}) {
		return
	}
	switch {
	case detail != "":
		writeDetail(w, status, detail)
	case status == http.StatusUnauthorized:
		writeDetail(w, status, detailUnauthorized)
	case status == http.StatusForbidden:
		writeDetail(w, status, detailForbidden)
	default:
		writeDetail(w, http.StatusServiceUnavailable, detailUnavailable)
	}
}

// limit applies the rate limits, sets the X-RateLimit headers and answers
// 429 when the request is refused. A limiter failure lets the request
// through (and is logged): limits degrade, the service stays up.
func (s *srv) limit(w http.ResponseWriter, r *http.Request, class ratelimit.Class, caller ratelimit.Caller) bool {
	if s.deps.Limiter == nil {
		return true
	}
	d, err := s.deps.Limiter.Allow(r.Context(), class, caller)
	if err != nil {
		s.logger.WarnContext(r.Context(), "rate limiter failed; request let through", "err", err)
		return true
	}
	if !answerLimit(w, d) {
		s.metrics.limited(class)
		return false
	}
	return true
}

// answerLimit sets the X-RateLimit headers of d and, when d refuses the
// request, answers 429 with Retry-After.
func answerLimit(w http.ResponseWriter, d ratelimit.Decision) bool {
	if err := limitHeaders(w, d); err != nil {
		writeDetail(w, http.StatusTooManyRequests, err.Detail)
		return false
	}
	return true
}

// limitHeaders sets the X-RateLimit headers of d and, when d refuses the
// request, Retry-After and Date; the refusal is returned (CodeRateLimited,
// the 429's detail).
func limitHeaders(w http.ResponseWriter, d ratelimit.Decision) *healthagents.Error {
	if d.Limit > 0 {
		h := w.Header()
		h.Set("X-RateLimit-Limit", strconv.Itoa(d.Limit))
		h.Set("X-RateLimit-Remaining", strconv.Itoa(d.Remaining))
		h.Set("X-RateLimit-Reset", strconv.FormatInt(d.ResetUnix(), 10))
	}
	if d.Allowed {
		return nil
	}
	wait, reset, date := retryInstant(d)
	h := w.Header()
	h.Set("Date", date)
	h.Set("Retry-After", strconv.FormatInt(wait, 10))
	if d.Limit > 0 {
		h.Set("X-RateLimit-Reset", strconv.FormatInt(reset, 10))
	}
	return healthagents.Errorf(healthagents.CodeRateLimited, "%s", rateLimitedDetail(wait))
}

// retryInstant is the one instant a refused caller is told to come back
// at, in the three forms it is told (docs/decisions/first-hour.md): the
// Retry-After seconds, counted from the second of the Date header; the
// X-RateLimit-Reset Unix second (Date + Retry-After); and the Date header
// itself, the limiter's clock when it decided. The instant is the limiter's
// d.At+d.RetryAfter rounded up to a whole second, at least a second after
// Date.
func retryInstant(d ratelimit.Decision) (wait, reset int64, date string) {
	at := d.At
	if at.IsZero() {
		at = time.Now()
	}
	from := at.Truncate(time.Second)
	wait = int64(math.Ceil(at.Add(d.RetryAfter).Sub(from).Seconds()))
	wait = max(wait, 1)
	return wait, from.Unix() + wait, from.UTC().Format(http.TimeFormat)
}

// rateLimitedDetail is the 429 body's detail: the spec's sentence, with the
// wait Retry-After gives (the spec's example is a 60 s window's).
func rateLimitedDetail(wait int64) string {
	if wait == 1 {
		return "Rate limit exceeded. Try again in 1 second."
	}
	return fmt.Sprintf("Rate limit exceeded. Try again in %d seconds.", wait)
}

// charge takes the rest of a request's cost once its handler knows it,
// before any work: the gate took one unit of class before the body was
// read, so a request of n units (a batch of n) takes n-1 more here, all or
// nothing (ratelimit.Limiter.AllowN). Refused: 429 with the headers of
// this decision. n above what the caller's limits can ever hold: 400
// naming field, as no wait would help (a 429 would invite retries). The
// gate's unit is not given back in either case. Headers are those of this
// final decision. A limiter failure lets the request through, as in limit.
func (s *srv) charge(w http.ResponseWriter, r *http.Request, class ratelimit.Class, n int, field string) bool {
	if err := s.admit(w, r, class, n, "field '"+field+"'"); err != nil {
		writeDetail(w, StatusOf(err.Code), err.Detail)
		return false
	}
	return true
}

// admit is charge for a handler that answers its refusal itself: the
// headers are set, the refusal returned (CodeRateLimited, or CodeInvalid
// when n is more than the caller's limits ever admit; what names the
// request's items).
func (s *srv) admit(w http.ResponseWriter, r *http.Request, class ratelimit.Class, n int, what string) *healthagents.Error {
	if s.deps.Limiter == nil || n <= 1 {
		return nil
	}
	caller, ok := r.Context().Value(callerCtxKey{}).(ratelimit.Caller)
	if !ok {
		remote, _ := s.clientOf(r)
		caller = ratelimit.Caller{IP: remote}
	}
	if most := s.deps.Limiter.MaxN(class, caller); most > 0 && n > most {
		return healthagents.Errorf(healthagents.CodeInvalid, "Validation error: %s holds %d items; this caller's rate limit admits at most %d per minute", what, n, most)
	}
	d, err := s.deps.Limiter.AllowN(r.Context(), class, caller, n-1)
	if err != nil {
		s.logger.WarnContext(r.Context(), "rate limiter failed; request let through", "err", err)
		return nil
	}
	return limitHeaders(w, d)
}

// bearerToken reads "Authorization: Bearer <token>". present reports a
// header at all; wellFormed a Bearer credential in it.
func bearerToken(r *http.Request) (token string, present, wellFormed bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", false, false
	}
	scheme, tok, ok := strings.Cut(h, " ")
	tok = strings.TrimSpace(tok)
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" || len(tok) > 512 {
		return "", true, false
	}
	return tok, true, true
}

// clientOf returns the client's address and whether the request reached
// us over HTTPS, believing X-Forwarded-For / X-Forwarded-Proto only from a
// trusted proxy.
func (s *srv) clientOf(r *http.Request) (netip.Addr, bool) {
	peer := netip.Addr{}
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		peer = ap.Addr().Unmap()
	} else if a, err := netip.ParseAddr(r.RemoteAddr); err == nil {
		peer = a.Unmap()
	}
	https := r.TLS != nil
	if !s.trusted(peer) {
		return peer, https
	}
	if p := lastValue(r.Header.Values("X-Forwarded-Proto")); p != "" {
		https = strings.EqualFold(p, "https")
	}
	// The client is the rightmost X-Forwarded-For entry that is not one of
	// our proxies: entries to its left were written by the client itself.
	client := peer
	xff := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(xff) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(xff[i]))
		if err != nil {
			break
		}
		client = a.Unmap()
		if !s.trusted(client) {
			break
		}
	}
	return client, https
}

func (s *srv) trusted(a netip.Addr) bool {
	for _, p := range s.opts.auth.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func lastValue(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	parts := strings.Split(vs[len(vs)-1], ",")
	return strings.TrimSpace(parts[len(parts)-1])
}
