package client_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/server"
)

// methodFor names the client method of an operation of the server's OpenAPI
// document, by operationId, where the name does not follow from the
// operationId (see candidates).
var methodFor = map[string]string{
	"getHealth":             "Health",
	"getStatus":             "Status",
	"verifyEligibility":     "VerifyEligibility",
	"validatePrescription":  "ValidatePrescription",
	"createKey":             "CreateKey",
	"listKeys":              "ListKeys",
	"rotateKey":             "RotateKey",
	"revokeKey":             "RevokeKey",
	"getKeyUsage":           "KeyUsage",
	"whitelistKey":          "WhitelistKey",
	"createWebhook":         "CreateWebhook",
	"listWebhooks":          "ListWebhooks",
	"getWebhook":            "GetWebhook",
	"deleteWebhook":         "DeleteWebhook",
	"listWebhookDeliveries": "ListWebhookDeliveries",
	"listFederatedTasks":    "ListFederatedTasks",
	// GET /api/v1/federated/tasks/{task}: FederatedTask on a client of
	// ForFederatedTask.
	"getFederatedTaskByID": "FederatedTask",
	// POST /api/v1/eligibility/x12: the X12 270 → 271.
	"verifyEligibilityX12": "EligibilityX12",
}

// TestEveryEndpointHasAMethod fails when the server documents an operation
// the SDK has no method for: the SDK grows with the API.
func TestEveryEndpointHasAMethod(t *testing.T) {
	t.Parallel()
	doc, err := server.OpenAPI()
	require.NoError(t, err)
	var d struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(doc, &d))
	typ := reflect.TypeFor[*client.Client]()
	n := 0
	for path, ops := range d.Paths {
		for method, op := range ops {
			if op.OperationID == "" {
				continue // path-level fields such as "parameters"
			}
			n++
			found := false
			for _, name := range candidates(op.OperationID) {
				if _, ok := typ.MethodByName(name); ok {
					found = true
					break
				}
			}
			assert.True(t, found, "no client method for %s %s (operationId %s; tried %v)", method, path, op.OperationID, candidates(op.OperationID))
		}
	}
	assert.Positive(t, n)
}

// candidates are the method names an operationId may have: the one in
// methodFor, the operationId capitalized (createWebhook → CreateWebhook),
// and without a leading "get" (getKeyUsage → KeyUsage); an operationId
// ending ForTask takes the methods of the one without.
func candidates(id string) []string {
	var c []string
	// A task's round protocol (/api/v1/federated/tasks/{task}/...) is the
	// default task's methods on a client of ForFederatedTask.
	if base, ok := strings.CutSuffix(id, "ForTask"); ok {
		c = append(c, candidates(base)...)
	}
	if m, ok := methodFor[id]; ok {
		c = append(c, m)
	}
	c = append(c, strings.ToUpper(id[:1])+id[1:])
	if rest, ok := strings.CutPrefix(id, "get"); ok && rest != "" {
		c = append(c, rest)
	}
	return c
}
