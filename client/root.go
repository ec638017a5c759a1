package client

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/api"
)

// Agents is what a program needs from the healthcare agents, in-process or
// remote: *healthagents.Service and *Client both satisfy it, so code written
// against Agents switches between the two by changing one constructor.
type Agents interface {
	VerifyEligibility(ctx context.Context, env *healthagents.PatientData, procedureCode string) (*healthagents.EligibilityResult, error)
	ValidatePrescription(ctx context.Context, env *healthagents.PatientData, drugCode string) (*healthagents.PrescriptionResult, error)
}

var (
	_ Agents = (*Client)(nil)
	_ Agents = (*healthagents.Service)(nil)
)

// Health calls GET /health. A server whose dependencies are down answers 503,
// which is returned as an *Error (IsUnavailable) after the retries.
func (c *Client) Health(ctx context.Context) (*healthagents.Health, error) {
	var out healthagents.Health
	if err := c.do(ctx, call{method: http.MethodGet, path: "/health", out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// Livez calls GET /livez: the process serves HTTP.
func (c *Client) Livez(ctx context.Context) (*api.Liveness, error) {
	var out api.Liveness
	if err := c.do(ctx, call{method: http.MethodGet, path: "/livez", out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// Readyz calls GET /readyz: every dependency answers (an *Error with
// status 503 otherwise).
func (c *Client) Readyz(ctx context.Context) (*api.Readiness, error) {
	var out api.Readiness
	if err := c.do(ctx, call{method: http.MethodGet, path: "/readyz", out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// Status calls GET /status.
func (c *Client) Status(ctx context.Context) (*healthagents.SystemStatus, error) {
	var out healthagents.SystemStatus
	if err := c.do(ctx, call{method: http.MethodGet, path: "/status", out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// VerifyEligibility calls POST /verify-eligibility: is the patient sealed in
// env covered for procedureCode? Build env with SealRecord. Errors: 400
// (IsInvalid) for an envelope that does not check out, 404 (IsNotFound) for
// an unknown procedure, 500 for a failed proof, 503 when the chain is down.
func (c *Client) VerifyEligibility(ctx context.Context, env *healthagents.PatientData, procedureCode string) (*healthagents.EligibilityResult, error) {
	var out healthagents.EligibilityResult
	req := healthagents.EligibilityRequest{PatientData: env, ProcedureCode: procedureCode}
	if err := c.do(ctx, call{method: http.MethodPost, path: "/verify-eligibility", body: req, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// ValidatePrescription calls POST /validate-prescription: is drugCode safe
// and covered for the patient sealed in env? A detected interaction or
// contraindication is a 422 (IsUnprocessable) whose Detail names it; an
// unknown drug is a 404.
func (c *Client) ValidatePrescription(ctx context.Context, env *healthagents.PatientData, drugCode string) (*healthagents.PrescriptionResult, error) {
	var out healthagents.PrescriptionResult
	req := healthagents.PrescriptionRequest{PatientData: env, DrugCode: drugCode}
	if err := c.do(ctx, call{method: http.MethodPost, path: "/validate-prescription", body: req, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// OpenAPI returns the OpenAPI 3.1 document the server serves at
// GET /openapi.json: the machine-readable contract of every endpoint.
func (c *Client) OpenAPI(ctx context.Context) ([]byte, error) {
	var out json.RawMessage
	if err := c.do(ctx, call{method: http.MethodGet, path: "/openapi.json", out: &out}); err != nil {
		return nil, err
	}
	return out, nil
}
