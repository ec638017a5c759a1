package server

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// cors allows every origin with credentials by default (the spec), echoing
// the request's Origin since browsers refuse "*" with credentials. With
// WithCORSOrigins, only the listed origins get CORS headers.
func (s *srv) cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Add("Vary", "Origin")
		allowed := len(s.opts.corsOrigins) == 0 || slices.Contains(s.opts.corsOrigins, origin)
		if allowed {
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Credentials", "true")
			h.Set("Access-Control-Expose-Headers", "X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, X-Request-ID")
		}
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			if allowed {
				h.Add("Vary", "Access-Control-Request-Method")
				h.Add("Vary", "Access-Control-Request-Headers")
				h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE, OPTIONS")
				if rh := r.Header.Get("Access-Control-Request-Headers"); rh != "" {
					h.Set("Access-Control-Allow-Headers", rh)
				}
				h.Set("Access-Control-Max-Age", "600")
			}
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// securityHeaders sets headers every API response should carry. HSTS goes
// on responses that reached us over HTTPS: a TLS connection to this server,
// or X-Forwarded-Proto: https from a trusted proxy terminating TLS.
func (s *srv) securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if !strings.HasPrefix(r.URL.Path, "/docs") && !strings.HasPrefix(r.URL.Path, "/redoc") {
			h.Set("Cache-Control", "no-store")
			h.Set("X-Frame-Options", "DENY")
		}
		if _, https := s.clientOf(r); https {
			h.Set("Strict-Transport-Security", "max-age=31536000")
		}
		next.ServeHTTP(w, r)
	})
}

// responseRecorder remembers the status written.
type responseRecorder struct {
	http.ResponseWriter
	status int
}

func (r *responseRecorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *responseRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *responseRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// logRequests logs one line per request: method, route pattern, status,
// latency and request id. Never the body, the query or headers.
func (s *srv) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-ID")
		if !validRequestID(id) {
			var b [8]byte
			_, _ = rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		w.Header().Set("X-Request-ID", id)
		start := time.Now()
		rec := &responseRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if !s.logger.Enabled(r.Context(), levelRequest) {
			return
		}
		pattern := r.Pattern
		if pattern == "" {
			pattern = "(unmatched)"
		}
		args := []any{"method", r.Method, "route", pattern, "status", rec.status,
			"duration_ms", float64(time.Since(start).Microseconds()) / 1000, "request_id", id}
		if tid := traceID(r.Context()); tid != "" {
			args = append(args, "trace_id", tid) // the caller's traceparent, or our span's
		}
		s.logger.Log(r.Context(), levelRequest, "request", args...)
	})
}

// validRequestID accepts a client's X-Request-ID: 1 to 64 characters of
// [A-Za-z0-9._-]. The id goes into the request log and the audit log, so
// anything else (spaces, quotes, control characters, other scripts, long
// text that could carry data) is replaced by a fresh id.
func validRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// recoverPanics turns a panic in a handler into a 500 with a generic detail.
// The log carries the stack only: a panic value could hold request data.
func (s *srv) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.logger.ErrorContext(r.Context(), "panic serving request", "route", r.Pattern, "stack", string(debug.Stack()))
				writeDetail(w, http.StatusInternalServerError, "Internal server error")
			}
		}()
		next.ServeHTTP(w, r)
	})
}
