package server

import (
	"context"
	"errors"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httputil"
	"sync"
	"time"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/audit"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/ratelimit"
	"github.com/healthagents/healthagents/trust"
	"github.com/healthagents/healthagents/webhook"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
)

// Deps are the parts the server needs. Service is required.
type Deps struct {
	// Service runs the agents.
	Service *healthagents.Service
	// Checks are the dependencies GET /health reports on (database, chain):
	// while any fails, /health answers 503.
	Checks []Check
	// Chain names the chain proofs are verified on, for GET /status.
	Chain ChainInfo
	// Federated reports the coordinator's round, for GET /status.
	Federated FederatedInfo
	// ZKSetup is the kind of trusted setup behind the proving keys
	// (zkp.System.Setup: "development" or "ceremony"), for GET /status;
	// empty: not reported.
	ZKSetup string
	// FederatedAPI serves the federated endpoints (federated.go); without it
	// they answer 503. *FederatedAPI is also a FederatedInfo.
	FederatedAPI *FederatedAPI
	// Keys authenticates and manages API keys (auth.go, keys.go). Without
	// it every caller is public and key-only routes answer 401.
	Keys *apikey.Service
	// Limiter enforces the per-tier rate limits
	// (docs/decisions/keys-and-limits.md); nil: none.
	Limiter *ratelimit.Limiter
	// V1 serves the /api/v1 patient, eligibility, prescription and
	// pharmacy routes (v1.go); nil: they answer 503.
	V1 *healthagents.V1
	// Webhooks keeps webhook endpoints (webhooks.go); nil: the webhook
	// routes answer 503.
	Webhooks *webhook.Registry
	// Audit records every access to patient data before the response is
	// sent (audit.go); nil: nothing is recorded and the audit routes
	// answer 503.
	Audit *audit.Log
	// Idempotency keeps Idempotency-Key answers in the database, across
	// restarts and replicas (idempotency_durable.go); nil: process memory
	// only.
	Idempotency IdempotencyStore
	// Issuers registers payers in the database and the chain's issuer
	// registry (issuers.go); nil: the issuer routes answer 503.
	Issuers IssuerRegistry
	// Trust is the COVERAGE_TRUST policy GET /status reports; nil: none.
	Trust TrustInfo
}

// TrustInfo is what GET /status reports of the COVERAGE_TRUST policy;
// *trust.Policy is one.
type TrustInfo interface {
	Mode() trust.Mode
	SelfKeyHash() *big.Int
}

// Check is a named dependency probe.
type Check struct {
	Name string
	Ping func(ctx context.Context) error
}

// ChainInfo names a chain. *chain.Ledger is one.
type ChainInfo interface {
	Network() (endpoint, name string)
}

// FederatedInfo reports the federated coordinator's state.
type FederatedInfo interface {
	FederatedStatus(ctx context.Context) (status healthagents.FederatedStatus, trained bool, err error)
}

type options struct {
	logger       *slog.Logger
	maxBody      int64
	corsOrigins  []string
	healthTTL    time.Duration
	checkTimeout time.Duration
	auth         authOptions          // auth.go
	admission    admissionOptions     // shed.go
	metrics      *prometheus.Registry // metrics.go
	tracer       trace.TracerProvider // tracing.go
}

// Option configures the server.
type Option func(*options) error

// WithLogger sets the logger for request and error logs. Log lines carry the
// method, path, status and latency, never bodies.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) error { o.logger = l; return nil }
}

// WithMaxBodyBytes bounds request bodies of the single-record endpoints
// (default DefaultMaxBodyBytes). Larger bodies get 413. Other routes have
// limits of their own (limits.go).
func WithMaxBodyBytes(n int64) Option {
	return func(o *options) error {
		if n <= 0 {
			return errors.New("server: max body bytes must be positive")
		}
		o.maxBody = n
		return nil
	}
}

// WithCORSOrigins restricts cross-origin requests to the given origins. By
// default every origin is allowed, with credentials, as the spec says.
func WithCORSOrigins(origins ...string) Option {
	return func(o *options) error { o.corsOrigins = origins; return nil }
}

// WithHealthCache sets how long a dependency check result is reused by
// GET /health (default 1 s), so /health stays cheap under load.
func WithHealthCache(d time.Duration) Option {
	return func(o *options) error { o.healthTTL = d; return nil }
}

// DefaultMaxBodyBytes is the default limit on single-record request
// bodies: one envelope at cipher.MaxEncryptedSize, with 64 KiB for the
// other fields and JSON escaping (an encoder that writes '/' as "\/" adds
// about 1.6 % to Base64 text).
const DefaultMaxBodyBytes = cipher.MaxEncryptedSize + SmallBodyBytes

type srv struct {
	deps   Deps
	opts   options
	logger *slog.Logger
	mux    *http.ServeMux
	routes []route

	idem  *idempotency
	gates map[gateClass]*admission // shed.go
	// metrics counts requests and refusals (metrics.go); nil without
	// WithMetrics.
	metrics *metrics
	// forwarder proxies the federated round protocol to the replica that
	// coordinates a task (federated_forward.go); nil without Leader routes.
	forwarder *httputil.ReverseProxy

	healthMu       sync.Mutex
	healthAt       time.Time
	healthErr      error
	healthChecking bool
}

// New returns the handler for the whole API. It starts no goroutine and opens
// no listener.
func New(deps Deps, opts ...Option) (http.Handler, error) {
	if deps.Service == nil {
		return nil, errors.New("server: Deps.Service is required")
	}
	s := &srv{deps: deps, opts: options{maxBody: DefaultMaxBodyBytes, healthTTL: time.Second, checkTimeout: 2 * time.Second}}
	for _, o := range opts {
		if err := o(&s.opts); err != nil {
			return nil, err
		}
	}
	s.logger = s.opts.logger
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.mux = http.NewServeMux()
	routes, err := s.routeTable()
	if err != nil {
		return nil, err
	}
	s.routes = routes
	s.idem = newIdempotency()
	s.gates = newGates(s.opts.admission)
	if s.metrics, err = newMetrics(s.opts.metrics, s.gates); err != nil {
		return nil, err
	}
	for class, g := range s.gates {
		g.onShed = func() { s.metrics.shedBy(class) }
		g.onWait = func(d time.Duration) { s.metrics.waited(class, d) }
	}
	for _, rt := range s.routes {
		if rt.Gate != "" {
			rt.Handler = s.gates[rt.Gate].admit(rt.Handler) // inside guard, outside body reading
		}
		if rt.Method == http.MethodPost {
			// Outside the gate: a retry waiting for its first attempt's
			// answer (or replaying it) holds no admission slot, and no
			// body: the layer hashes bodies as they stream, never
			// buffering one.
			rt.Handler = s.idempotent(rt.Handler)
		}
		if limit := s.bodyLimit(rt); limit > 0 {
			rt.Handler = limitBody(limit, rt.Handler) // limits.go
		}
		h := s.guard(rt)
		if rt.X12 {
			h = s.x12Errors(h) // x12.go
		}
		if rt.Leader {
			if s.forwarder == nil {
				s.forwarder = s.newForwarder()
			}
			h = s.toLeader(h) // federated_forward.go
		}
		s.mux.Handle(rt.Method+" "+rt.Path, s.metrics.instrument(rt, h))
	}
	var h http.Handler = http.HandlerFunc(s.dispatch)
	h = s.fhirErrors(h)
	h = s.cors(h)
	h = s.securityHeaders(h)
	h = s.logRequests(h)
	h = s.traced(h)
	h = s.recoverPanics(h)
	return h, nil
}

// dispatch serves a route, or a JSON 404/405 where the mux has none.
func (s *srv) dispatch(w http.ResponseWriter, r *http.Request) {
	if _, pattern := s.mux.Handler(r); pattern == "" {
		rec := &statusRecorder{header: make(http.Header)}
		s.mux.ServeHTTP(rec, r)
		switch rec.status {
		case http.StatusMethodNotAllowed:
			if allow := rec.header.Get("Allow"); allow != "" {
				w.Header().Set("Allow", allow)
			}
			writeDetail(w, http.StatusMethodNotAllowed, "Method Not Allowed")
		case http.StatusMovedPermanently, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
			writeDetail(w, http.StatusNotFound, "Not Found")
		default:
			writeDetail(w, http.StatusNotFound, "Not Found")
		}
		return
	}
	s.mux.ServeHTTP(w, r)
}

// statusRecorder captures the status the mux would send, discarding its
// plain-text body.
type statusRecorder struct {
	header http.Header
	status int
}

func (r *statusRecorder) Header() http.Header         { return r.header }
func (r *statusRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *statusRecorder) WriteHeader(status int)      { r.status = status }
