package server

import (
	"log/slog"
	"net/http"

	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/audit"
	"github.com/healthagents/healthagents/internal/openapi"
	"github.com/healthagents/healthagents/ratelimit"
)

const levelRequest = slog.LevelInfo

// route is one endpoint, described once: what the mux serves, what the
// middleware applies to it (scope, rate-limit class, admission gate, body
// limit, audit) and what the OpenAPI document says about it, built from the
// same Go types the handler decodes and encodes. Method and Path fill Doc's
// own. Adding an endpoint is one route value plus its handler;
// TestRouteDescriptionsComplete checks every value is complete.
type route struct {
	Method, Path string
	Handler      http.Handler
	Doc          openapi.Operation
	Hidden       bool // not in the OpenAPI document (documentation pages)

	// Scope is the scope a key needs ("" for none beyond a valid key).
	Scope apikey.Scope
	// Class is the rate-limit class the request draws on.
	Class ratelimit.Class
	// AdminBearer: the route also takes the ADMIN_TOKEN or a bootstrap
	// token as bearer, which its handler checks; only sk_ bearers are keys
	// there (POST /auth/keys).
	AdminBearer bool
	// Gate is the admission gate of a CPU-bound route ("" for none).
	Gate gateClass
	// Body is the most the route reads of a request body: a byte count, or
	// bodySingleRecord / bodyGradient, whose sizes are settings. Zero: the
	// route documents no body (GET, DELETE, key rotation) and reads at most
	// the single-record limit.
	Body int64
	// Audit says how the route is written to the access log (nil: it
	// touches no patient data).
	Audit *auditSpec
}

// routeTable lists every endpoint. Each resource file contributes its routes
// through this table so the mux and the OpenAPI document cannot disagree.
func (s *srv) routeTable() ([]route, error) {
	var rs []route
	rs = append(rs, s.rootRoutes()...)
	rs = append(rs, s.keyRoutes()...)
	rs = append(rs, s.v1Routes()...)
	rs = append(rs, s.federatedRoutes()...)
	rs = append(rs, s.webhookRoutes()...)
	rs = append(rs, s.auditRoutes()...)
	rs = append(rs, s.probeRoutes()...)
	rs = append(rs, s.metricsRoutes()...)
	rs = s.withAudit(rs) // audit.go
	for i := range rs {
		if rs[i].Doc.Request != nil {
			rs[i].Doc.Errors = withTooLarge(rs[i].Doc.Errors) // limits.go
		}
	}
	docs, err := s.docRoutes(rs)
	if err != nil {
		return nil, err
	}
	return append(rs, docs...), nil
}

func ok(description string, body any) map[int]openapi.Response {
	return map[int]openapi.Response{http.StatusOK: {Description: description, Body: body}}
}

func (s *srv) rootRoutes() []route {
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
				Responses: ok("Agents, federated round and chain.", statusResponse), Errors: []int{429}, RateLimited: true, Auth: openapi.AuthOptional,
			}},
		{Method: "POST", Path: "/verify-eligibility", Scope: apikey.ScopeEligibility, Class: ratelimit.ClassEligibility, Gate: classProof, Body: bodySingleRecord, Audit: &auditSpec{action: audit.ActionEligibilityVerify},
			Handler: http.HandlerFunc(s.verifyEligibility), Doc: openapi.Operation{
				OperationID: "verifyEligibility", Tags: []string{"eligibility"}, Summary: "Check insurance eligibility for a procedure",
				Description: "Opens the encrypted record, decides eligibility for the procedure today, proves the decision in zero knowledge and has the proof verified by EVM code in a mined transaction. An unknown procedure is a 404.",
				Request:     eligibilityRequest, Responses: ok("The eligibility decision; no medical data.", eligibilityResult),
				Errors: []int{400, 401, 403, 404, 413, 422, 429, 500, 503}, RateLimited: true, Auth: openapi.AuthOptional,
			}},
		{Method: "POST", Path: "/validate-prescription", Scope: apikey.ScopePrescription, Class: ratelimit.ClassPrescription, Gate: classProof, Body: bodySingleRecord, Audit: &auditSpec{action: audit.ActionPrescriptionValidate},
			Handler: http.HandlerFunc(s.validatePrescription), Doc: openapi.Operation{
				OperationID: "validatePrescription", Tags: []string{"prescription"}, Summary: "Validate a prescription",
				Description: "Checks the drug against the patient's current medications, allergies and conditions, and proves coverage. A major or contraindicated finding gives 422 `Prescription validation failed: Drug interaction detected with <drug_name>`.",
				Request:     prescriptionRequest, Responses: ok("The prescription is valid.", prescriptionResult),
				Errors: []int{400, 401, 403, 404, 413, 422, 429, 500, 503}, RateLimited: true, Auth: openapi.AuthOptional,
			}},
	}
}
