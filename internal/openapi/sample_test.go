package openapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/internal/openapi"
)

// The sample API: a few of the service's shapes, enough to exercise every
// feature of the generator in one document (testdata/sample.json).

type patientData struct {
	PatientID     string `json:"patient_id" doc:"De-identified patient code." example:"PT-000123"`
	EncryptedData string `json:"encrypted_data" doc:"Fernet token, or Base64 of one."`
	IPFSCID       string `json:"ipfs_cid" doc:"CID of the encrypted data."`
	DataHash      string `json:"data_hash" pattern:"^[0-9a-f]{64}$" doc:"SHA-256 of the plaintext, lowercase hex."`
}

type eligibilityRequest struct {
	PatientData   patientData `json:"patient_data"`
	ProcedureCode string      `json:"procedure_code" example:"PROC001"`
}

type eligibilityResult struct {
	Eligible              bool    `json:"eligible"`
	CoveragePct           float64 `json:"coverage_pct" minimum:"0" maximum:"100"`
	PrivacyPreserved      bool    `json:"privacy_preserved"`
	ProcedureCode         string  `json:"procedure_code"`
	RequiresAuthorization bool    `json:"requires_authorization"`
	ZKProofVerified       bool    `json:"zk_proof_verified"`
	Reason                *string `json:"reason" doc:"Why not eligible; null when eligible."`
}

type health struct {
	Status  string `json:"status" enum:"healthy"`
	Version string `json:"version"`
	Message string `json:"message"`
}

type keyUsage struct {
	KeyID     string             `json:"key_id"`
	Requests  int64              `json:"requests" minimum:"0"`
	Errors    int64              `json:"errors" minimum:"0"`
	Latencies map[string]float64 `json:"latencies_ms" doc:"Latency percentiles in milliseconds, keyed p50, p95, p99."`
	Since     time.Time          `json:"since"`
	Whitelist []string           `json:"whitelist,omitempty"`
}

type eventData struct {
	PatientID          string `json:"patient_id" doc:"Hashed patient code."`
	CoveragePercentage int    `json:"coverage_percentage"`
	RequiresAuth       bool   `json:"requires_auth"`
}

type event struct {
	Event     string    `json:"event" enum:"eligibility.verified"`
	Timestamp time.Time `json:"timestamp"`
	Data      eventData `json:"data"`
}

type pageInfo struct {
	Offset int `json:"offset" minimum:"0"`
	Limit  int `json:"limit" minimum:"1" maximum:"100"`
	Total  int `json:"total" minimum:"0"`
}

type keyList struct {
	pageInfo
	Keys []keyUsage `json:"keys"`
}

// sampleDocument builds the sample API's document.
func sampleDocument(t testing.TB) *openapi.Document {
	t.Helper()
	d := openapi.New(openapi.Info{
		Title: "Sample", Version: "0.1.0", Description: "The generator's golden sample.",
		Servers: []openapi.Server{{URL: "http://localhost:8000", Description: "Development"}},
		Tags:    []openapi.Tag{{Name: "service", Description: "Health and status."}, {Name: "eligibility"}, {Name: "keys", Description: "API key management."}},
	})
	ops := []openapi.Operation{
		{
			Method: http.MethodGet, Path: "/health", OperationID: "getHealth", Tags: []string{"service"},
			Summary:     "Service health",
			Responses:   map[int]openapi.Response{200: {Description: "Healthy.", Body: health{}}},
			Errors:      []int{503},
			RateLimited: true, Auth: openapi.AuthOptional,
		},
		{
			Method: http.MethodPost, Path: "/verify-eligibility", OperationID: "verifyEligibility",
			Tags: []string{"eligibility"}, Summary: "Check eligibility",
			Request:     eligibilityRequest{},
			Responses:   map[int]openapi.Response{200: {Description: "The decision.", Body: eligibilityResult{}}},
			Errors:      []int{400, 404, 429, 500},
			RateLimited: true, Auth: openapi.AuthOptional,
		},
		{
			Method: http.MethodGet, Path: "/api/keys/{key_id}/usage", OperationID: "getKeyUsage",
			Tags: []string{"keys"}, Summary: "Usage of a key",
			PathParams: []openapi.Param{{Name: "key_id", Description: "The key's ID.", Example: "key_01"}},
			Responses:  map[int]openapi.Response{200: {Description: "Usage.", Body: keyUsage{}}},
			Errors:     []int{401, 403, 404},
			Auth:       openapi.AuthRequired,
		},
		{
			Method: http.MethodDelete, Path: "/api/keys/{key_id}", OperationID: "revokeKey",
			Tags: []string{"keys"}, Summary: "Revoke a key",
			Responses: map[int]openapi.Response{204: {Description: "Revoked."}},
			Errors:    []int{401, 403, 404},
			Auth:      openapi.AuthRequired,
		},
		{
			Method: http.MethodGet, Path: "/api/keys", OperationID: "listKeys", Tags: []string{"keys"},
			Summary: "List keys", Deprecated: true,
			QueryParams: []openapi.Param{
				{Name: "offset", Description: "Results to skip.", Schema: &openapi.Schema{Type: openapi.Types{"integer"}, Minimum: ptr(0.0), Default: 0}},
				{Name: "limit", Description: "Results to return.", Schema: &openapi.Schema{Type: openapi.Types{"integer"}, Minimum: ptr(1.0), Maximum: ptr(100.0), Default: 10}},
			},
			Responses: map[int]openapi.Response{200: {
				Description: "A page of keys.", Body: keyList{},
				Headers: map[string]openapi.Header{"X-Total-Count": {Description: "All keys.", Value: 0}},
			}},
			Errors: []int{401},
			Auth:   openapi.AuthRequired,
		},
	}
	for _, op := range ops {
		require.NoError(t, d.Add(op), op.OperationID)
	}
	require.NoError(t, d.AddWebhook("eligibility.verified", openapi.Operation{
		OperationID: "eligibilityVerified", Summary: "An eligibility check completed",
		Request:   event{},
		Responses: map[int]openapi.Response{200: {Description: "Any 2xx acknowledges the event."}},
	}))
	return d
}

func ptr[T any](v T) *T { return &v }
