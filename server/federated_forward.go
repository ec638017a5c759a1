package server

import (
	"context"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

// FederatedLeader is implemented by a coordinator that may run on another
// replica (app's leader lease): LeaderAddress is the base URL the
// coordinating replica advertised (REPLICA_URL), or "" when this replica
// coordinates, none does, or the leader advertised no address. The round
// protocol of such a task is then forwarded to that replica.
type FederatedLeader interface {
	LeaderAddress(ctx context.Context) (string, error)
}

// forwardedHeader marks a request one replica forwarded to another. It
// grants nothing: it only stops a second hop (a replica that got a
// forwarded request and does not coordinate either answers it itself,
// with 503), so a client setting it merely opts out of forwarding.
const forwardedHeader = "Healthagents-Forwarded"

// toLeader forwards a request of the federated round protocol to the
// replica that coordinates its task, when that is another replica that
// advertised its address; otherwise the route serves it (and a follower
// answers 503). It runs before authentication, rate limits, idempotency
// and body limits: the coordinating replica applies them, once.
func (s *srv) toLeader(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(forwardedHeader) != "" {
			next.ServeHTTP(w, r)
			return
		}
		target := s.leaderOf(r)
		if target == nil {
			next.ServeHTTP(w, r)
			return
		}
		s.forwarder.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), leaderCtxKey{}, target)))
	})
}

// leaderCtxKey carries the coordinating replica's base URL to forwarder.
type leaderCtxKey struct{}

// newForwarder is the one reverse proxy of toLeader; each request carries
// its target (leaderCtxKey).
func (s *srv) newForwarder() *httputil.ReverseProxy {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.ResponseHeaderTimeout = 60 * time.Second // above a long poll's 25 s wait
	transport.MaxIdleConnsPerHost = 32
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(pr.In.Context().Value(leaderCtxKey{}).(*url.URL))
			// Keep the chain of addresses: the coordinating replica
			// believes it only when this one is in its TRUSTED_PROXIES.
			pr.Out.Header["X-Forwarded-For"] = pr.In.Header["X-Forwarded-For"]
			pr.SetXForwarded()
			pr.Out.Header.Set(forwardedHeader, "1")
		},
		Transport: transport,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			// The leader is gone or unreachable (its lease not yet run
			// out): the same answer as a follower without an address.
			target := r.Context().Value(leaderCtxKey{}).(*url.URL)
			s.logger.WarnContext(r.Context(), "federated: forwarding to the coordinating replica failed", "leader", target.Host, "err", err)
			w.Header().Set("Retry-After", "1")
			writeDetail(w, http.StatusServiceUnavailable, DetailFederatedElsewhere)
		},
	}
}

// DetailFederatedElsewhere is the 503 detail of a round call on a replica
// that neither coordinates the task nor reaches the one that does.
const DetailFederatedElsewhere = "Service temporarily unavailable: the federated coordinator runs on another replica; retry"

// leaderOf is the base URL of the replica coordinating r's task, or nil
// when r is to be served here.
func (s *srv) leaderOf(r *http.Request) *url.URL {
	f := s.deps.FederatedAPI
	if f == nil || f.Coordinator == nil {
		return nil
	}
	run, ok, err := f.taskRun(r.Context(), r.PathValue("task"))
	if err != nil || !ok {
		return nil
	}
	lf, ok := run.Coordinator.(FederatedLeader)
	if !ok {
		return nil
	}
	addr, err := lf.LeaderAddress(r.Context())
	if err != nil || addr == "" {
		return nil
	}
	u, err := url.Parse(addr)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil
	}
	return u
}
