package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/internal/openapi"
	"github.com/healthagents/healthagents/ratelimit"
)

// TestRouteDescriptionsComplete walks every route: each one that a caller
// reaches through the guard names its rate-limit class, a scope where its
// family needs one, a body limit where it takes a body, and its OpenAPI
// operation; the mux and the middleware read nothing else.
func TestRouteDescriptionsComplete(t *testing.T) {
	t.Parallel()
	rs, err := (&srv{opts: options{maxBody: DefaultMaxBodyBytes}}).routeTable()
	require.NoError(t, err)
	seen := map[string]bool{}
	classes := []ratelimit.Class{ratelimit.ClassHealth, ratelimit.ClassStatus, ratelimit.ClassEligibility, ratelimit.ClassEligibilityV1,
		ratelimit.ClassPrescription, ratelimit.ClassFederated, ratelimit.ClassGeneral}
	for _, rt := range rs {
		pattern := rt.Method + " " + rt.Path
		assert.False(t, seen[pattern], "%s described twice", pattern)
		seen[pattern] = true
		require.NotNil(t, rt.Handler, pattern)
		if rt.Doc.Auth == openapi.AuthNone {
			assert.True(t, rt.Method == http.MethodGet, "%s: only documentation pages go unguarded", pattern)
			continue
		}
		assert.Contains(t, classes, rt.Class, "%s: rate-limit class", pattern)
		assert.NotEmpty(t, rt.Doc.OperationID, "%s: OpenAPI operation id", pattern)
		assert.NotEmpty(t, rt.Doc.Summary, "%s: OpenAPI summary", pattern)
		assert.NotEmpty(t, rt.Doc.Responses, "%s: OpenAPI responses", pattern)
		if rt.Doc.Request != nil || len(rt.Doc.RequestMedia) > 0 {
			assert.NotZero(t, rt.Body, "%s: body limit", pattern)
		}
		// Every family that holds patient data or acts for an organization
		// names its scope; key management and the audit log are gated by
		// their handlers (a key's own keys, the admin scope).
		for prefix, scope := range map[string]apikey.Scope{
			"/api/v1/patients": apikey.ScopePatients, "/api/v1/eligibility": apikey.ScopeEligibility,
			"/api/v1/prescriptions": apikey.ScopePrescription, "/api/v1/pharmacy": apikey.ScopePharmacy,
			"/api/v1/federated": apikey.ScopeFederated, "/webhooks": apikey.ScopeWebhooks,
		} {
			if strings.HasPrefix(rt.Path, prefix) {
				assert.Equal(t, scope, rt.Scope, "%s: scope", pattern)
			}
		}
		if rt.Gate != "" && rt.Method != http.MethodPost {
			// The one GET behind a gate: a proved round's keys, set up on
			// first request (seconds of CPU) and megabytes to send.
			assert.Contains(t, []string{"GET /api/v1/federated/proof-keys/{shape}", "GET /api/v1/federated/tasks/{task}/proof-keys/{shape}"},
				pattern, "only POSTs and the proof keys do CPU-bound work")
		}
		if rt.Audit != nil {
			assert.NotEmpty(t, rt.Audit.action, "%s: audit action", pattern)
		}
	}
}
