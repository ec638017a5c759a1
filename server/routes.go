package server

import (
	"log/slog"
	"net/http"

	"github.com/healthagents/healthagents/apikey"
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
	// Leader: the route is served by the replica coordinating its
	// federated task; another replica forwards it there (toLeader).
	Leader bool
	// X12: the route answers X12 (x12.go): the JSON errors of the layers
	// around its handler are answered in X12 too (x12Errors).
	X12 bool
}

// routeTable lists every endpoint. Each resource file contributes its routes
// through this table so the mux and the OpenAPI document cannot disagree.
func (s *srv) routeTable() ([]route, error) {
	var rs []route
	rs = append(rs, s.healthRoutes()...)
	rs = append(rs, s.eligibilityRoutes()...)
	rs = append(rs, s.x12Routes()...)
	rs = append(rs, s.prescriptionRoutes()...)
	rs = append(rs, s.keyRoutes()...)
	rs = append(rs, s.patientRoutes()...)
	rs = append(rs, s.pharmacyRoutes()...)
	rs = append(rs, s.federatedRoutes()...)
	rs = append(rs, s.webhookRoutes()...)
	rs = append(rs, s.auditRoutes()...)
	rs = append(rs, s.issuerRoutes()...)
	rs = append(rs, s.probeRoutes()...)
	rs = append(rs, s.metricsRoutes()...)
	rs = s.withAudit(rs) // audit.go
	for i := range rs {
		if rs[i].Doc.Request != nil || len(rs[i].Doc.RequestMedia) > 0 {
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
