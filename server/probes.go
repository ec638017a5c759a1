package server

import (
	"context"
	"net/http"
	"strings"
	"sync"

	"github.com/healthagents/healthagents/api"
	"github.com/healthagents/healthagents/internal/openapi"
	"github.com/healthagents/healthagents/ratelimit"
)

// probeRoutes are the orchestrator's probes: /livez says the process serves
// HTTP (restart it otherwise), /readyz that its dependencies answer (send it
// traffic). Neither is rate limited nor needs a key.
func (s *srv) probeRoutes() []route {
	return []route{
		{Method: "GET", Path: "/livez", Class: ratelimit.ClassHealth,
			Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				writeJSON(w, http.StatusOK, api.Liveness{Status: "alive"})
			}), Doc: openapi.Operation{
				OperationID: "getLivez", Tags: []string{"service"}, Summary: "Liveness probe",
				Description: "200 while the process serves HTTP; checks no dependency (a failing database must not get the process restarted).",
				Responses:   ok("The process is alive.", api.Liveness{}), Auth: openapi.AuthNone,
			}},
		{Method: "GET", Path: "/readyz", Class: ratelimit.ClassHealth, Handler: http.HandlerFunc(s.readyz), Doc: openapi.Operation{
			OperationID: "getReadyz", Tags: []string{"service"}, Summary: "Readiness probe",
			Description: "Runs every dependency check now (database, chain, and Redis and IPFS when configured), side by side: 200 with the checks when all answer; otherwise 503 `Service temporarily unavailable: not answering: <names>` naming each failing one (names only: no address or error text; the log has the error).",
			Responses:   ok("Every dependency answers.", api.Readiness{}), Errors: []int{503}, Auth: openapi.AuthNone,
		}},
	}
}

func (s *srv) readyz(w http.ResponseWriter, r *http.Request) {
	failed := s.runAllChecks(r.Context())
	checks := map[string]string{}
	var names []string
	for _, c := range s.deps.Checks {
		checks[c.Name] = "ok"
		if failed[c.Name] {
			checks[c.Name] = "failing"
			names = append(names, c.Name)
		}
	}
	if len(names) > 0 {
		// Error bodies hold only detail: the names, never an address or
		// the error's text.
		writeDetail(w, http.StatusServiceUnavailable, detailUnavailable+": not answering: "+strings.Join(names, ", "))
		return
	}
	writeJSON(w, http.StatusOK, api.Readiness{Status: "ready", Checks: checks})
}

// runAllChecks runs every dependency check at once, each within the check
// timeout, and returns the names of those that failed (their errors are
// logged, never answered: they may hold addresses).
func (s *srv) runAllChecks(ctx context.Context) map[string]bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.checkTimeout)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	failed := map[string]bool{}
	for _, c := range s.deps.Checks {
		wg.Go(func() {
			if err := c.Ping(ctx); err != nil {
				s.logger.WarnContext(ctx, "dependency check failed", "dependency", c.Name, "err", err)
				mu.Lock()
				failed[c.Name] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return failed
}
