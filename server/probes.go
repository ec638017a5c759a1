package server

import (
	"net/http"

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
			Description: "Runs every dependency check now (database, chain, and Redis and IPFS when configured): 200 with the checks when all answer, 503 `Service temporarily unavailable` otherwise (the log names the failing one).",
			Responses:   ok("Every dependency answers.", api.Readiness{}), Errors: []int{503}, Auth: openapi.AuthNone,
		}},
	}
}

func (s *srv) readyz(w http.ResponseWriter, r *http.Request) {
	if err := s.runChecks(r.Context(), false); err != nil {
		writeDetail(w, http.StatusServiceUnavailable, detailUnavailable)
		return
	}
	out := api.Readiness{Status: "ready", Checks: map[string]string{}}
	for _, c := range s.deps.Checks {
		out.Checks[c.Name] = "ok"
	}
	writeJSON(w, http.StatusOK, out)
}
