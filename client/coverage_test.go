package client_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/server"
)

// methodFor names the client method of each operation of the server's
// OpenAPI document, by operationId.
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
			name, ok := methodFor[op.OperationID]
			if !assert.True(t, ok, "no client method for %s %s (operationId %s)", method, path, op.OperationID) {
				continue
			}
			_, ok = typ.MethodByName(name)
			assert.True(t, ok, "client.Client has no method %s for %s", name, op.OperationID)
		}
	}
	assert.Positive(t, n)
}
