package server

import (
	"context"
	"math/big"
	"net/http"
	"time"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/internal/openapi"
	"github.com/healthagents/healthagents/ratelimit"
	"github.com/healthagents/healthagents/trust"
)

var (
	healthResponse      = healthagents.Health{}
	statusResponse      = healthagents.SystemStatus{}
	eligibilityRequest  = healthagents.EligibilityRequest{}
	eligibilityResult   = healthagents.EligibilityResult{}
	prescriptionRequest = healthagents.PrescriptionRequest{}
	prescriptionResult  = healthagents.PrescriptionResult{}
)

// healthRoutes: service health and status.
func (s *srv) healthRoutes() []route {
	return []route{
		{Method: "GET", Path: "/health", Class: ratelimit.ClassHealth,
			Handler: http.HandlerFunc(s.health), Doc: openapi.Operation{
				OperationID: "getHealth", Tags: []string{"service"}, Summary: "Service health",
				Description: "200 while the service and its dependencies (database, chain) answer; 503 `Service temporarily unavailable` otherwise.",
				Responses:   ok("The service is healthy.", healthResponse), Errors: []int{429, 503}, RateLimited: true, Auth: openapi.AuthOptional,
			}},
		{Method: "GET", Path: "/status", Class: ratelimit.ClassStatus,
			Handler: http.HandlerFunc(s.status), Doc: openapi.Operation{
				OperationID: "getStatus", Tags: []string{"service"}, Summary: "System status",
				Responses: ok("Agents, federated round, chain and the kind of ZK setup.", statusResponse), Errors: []int{429}, RateLimited: true, Auth: openapi.AuthOptional,
			}},
	}
}

func (s *srv) health(w http.ResponseWriter, r *http.Request) {
	if err := s.checkDeps(r.Context()); err != nil {
		writeDetail(w, http.StatusServiceUnavailable, "Service temporarily unavailable")
		return
	}
	h := healthagents.Health{
		Status:  "healthy",
		Version: healthagents.Version,
		Message: "Healthcare agents service is running",
	}
	for _, c := range s.deps.Checks {
		h.Checked = append(h.Checked, c.Name)
	}
	writeJSON(w, http.StatusOK, h)
}

// checkDeps returns the cached result of the dependency checks, refreshing it
// when older than the cache TTL. One request refreshes while the others keep
// the previous answer, so a slow dependency never stalls /health traffic.
func (s *srv) checkDeps(ctx context.Context) error {
	if len(s.deps.Checks) == 0 {
		return nil
	}
	s.healthMu.Lock()
	fresh := time.Since(s.healthAt) < s.opts.healthTTL
	err := s.healthErr
	refresh := !fresh && !s.healthChecking
	if refresh {
		s.healthChecking = true
	}
	first := s.healthAt.IsZero()
	s.healthMu.Unlock()
	if !refresh && !first {
		return err
	}
	if !refresh {
		// First call while another runs the first check: wait for it.
		return s.runChecks(ctx, false)
	}
	return s.runChecks(ctx, true)
}

func (s *srv) runChecks(ctx context.Context, store bool) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.checkTimeout)
	defer cancel()
	var err error
	for _, c := range s.deps.Checks {
		if err = c.Ping(ctx); err != nil {
			s.logger.WarnContext(ctx, "dependency check failed", "dependency", c.Name, "err", err)
			break
		}
	}
	if store {
		s.healthMu.Lock()
		s.healthAt, s.healthErr, s.healthChecking = time.Now(), err, false
		s.healthMu.Unlock()
	}
	return err
}

// chainRegistry is the optional part of ChainInfo that names the registry a
// third party checks decisions against (hex, "" while none) and the chain's
// id; *chain.Ledger has it.
type chainRegistry interface {
	RegistryHex() string
	ChainID() *big.Int
}

// chainAnchor is the optional part of ChainInfo that names how decisions
// are anchored ("each" or "batch"); *chain.Ledger has it.
type chainAnchor interface {
	AnchorName() string
}

func (s *srv) status(w http.ResponseWriter, r *http.Request) {
	st := healthagents.SystemStatus{
		Status: "operational",
		Agents: healthagents.AgentsStatus{
			Eligibility:    "active",
			Prescription:   "active",
			DiagnosisModel: "untrained",
		},
		Blockchain: healthagents.ChainStatus{Endpoint: "none", Network: "none"},
		ZKSetup:    s.deps.ZKSetup,
	}
	if s.deps.Chain != nil {
		st.Blockchain.Endpoint, st.Blockchain.Network = s.deps.Chain.Network()
		if a, ok := s.deps.Chain.(chainAnchor); ok {
			st.Blockchain.Anchor = a.AnchorName()
		}
		if reg, ok := s.deps.Chain.(chainRegistry); ok {
			st.Blockchain.Registry = reg.RegistryHex()
			if id := reg.ChainID(); id != nil {
				st.Blockchain.ChainID = id.String()
			}
		}
	}
	if s.deps.Trust != nil {
		st.Issuer = string(s.deps.Trust.Mode())
		if st.Issuer == string(trust.Self) {
			st.SelfIssuerKeyHash = s.deps.Trust.SelfKeyHash().String()
		}
	}
	if s.deps.Federated != nil {
		fs, trained, err := s.deps.Federated.FederatedStatus(r.Context())
		if err != nil {
			s.logger.WarnContext(r.Context(), "federated status unavailable", "err", err)
			st.Status = "degraded"
		} else {
			st.FederatedLearning = fs
			if trained {
				st.Agents.DiagnosisModel = "trained"
			}
		}
	}
	writeJSON(w, http.StatusOK, st)
}
