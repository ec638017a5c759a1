package client

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/api"
)

// The v1 family. Every call needs a key (WithAPIKey) with the scope named on
// the method. Errors are *Error; their V1Code holds the uppercase code the
// API puts in front of the detail (V1PatientNotFound, V1NoInsurance, ...).

// PutPatient calls PUT /api/v1/patients/{patient_id} with env (build it
// with SealRecord): the service checks it like any envelope and keeps it
// exactly as sent, still encrypted, replacing the previous one. Records
// belong to the key's organization (else its rotation chain): other
// organizations neither see nor replace them, and their own PUT of the same
// patient_id registers a separate record. Scope patients. 400 (IsInvalid)
// when the envelope does not check out.
func (c *Client) PutPatient(ctx context.Context, env *healthagents.PatientData) error {
	if env == nil {
		return &healthagents.Error{Code: healthagents.CodeInvalid, Detail: "healthagents: nil envelope"}
	}
	return c.do(ctx, call{method: http.MethodPut, path: "/api/v1/patients/" + escape(env.PatientID), body: env})
}

// DeletePatient calls DELETE /api/v1/patients/{patient_id}. 404 with
// V1Code PATIENT_NOT_FOUND when the caller's organization has none
// registered under the id.
func (c *Client) DeletePatient(ctx context.Context, patientID string) error {
	return c.do(ctx, call{method: http.MethodDelete, path: "/api/v1/patients/" + escape(patientID)})
}

// VerifyEligibilityV1 calls POST /api/v1/eligibility/verify for a patient
// registered with PutPatient by the caller's organization. Scope
// eligibility. V1 codes: PATIENT_NOT_FOUND (404), NO_INSURANCE (422),
// UNTRUSTED_CREDENTIAL (422: the payer's credential is revoked, expired or
// from an issuer not registered), PROOF_INVALID (500; 422 for a record
// beyond the ZK circuit's bounds), NETWORK_ERROR (503).
// VerificationProof.BlockchainTx is the hash of the transaction that
// verified the proof on chain.
func (c *Client) VerifyEligibilityV1(ctx context.Context, req healthagents.V1EligibilityRequest) (*healthagents.V1EligibilityResult, error) {
	var out healthagents.V1EligibilityResult
	if err := c.do(ctx, call{method: http.MethodPost, path: "/api/v1/eligibility/verify", body: req, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// FHIRMediaType is the media type of the FHIR R4 answers.
const FHIRMediaType = "application/fhir+json"

// VerifyEligibilityV1FHIR is VerifyEligibilityV1 asking for the answer as a
// FHIR R4 CoverageEligibilityResponse (docs/decisions/fhir.md), returned
// as its JSON. Errors are those of VerifyEligibilityV1.
func (c *Client) VerifyEligibilityV1FHIR(ctx context.Context, req healthagents.V1EligibilityRequest) (json.RawMessage, error) {
	var out json.RawMessage
	if err := c.do(ctx, call{method: http.MethodPost, path: "/api/v1/eligibility/verify", body: req, out: &out, accept: FHIRMediaType}); err != nil {
		return nil, err
	}
	return out, nil
}

// ValidatePrescriptionV1FHIR is ValidatePrescriptionV1 asking for the
// findings as a FHIR R4 Bundle of DetectedIssue resources, returned as its
// JSON. Errors are those of ValidatePrescriptionV1.
func (c *Client) ValidatePrescriptionV1FHIR(ctx context.Context, req healthagents.V1PrescriptionRequest) (json.RawMessage, error) {
	var out json.RawMessage
	if err := c.do(ctx, call{method: http.MethodPost, path: "/api/v1/prescriptions/validate", body: req, out: &out, accept: FHIRMediaType}); err != nil {
		return nil, err
	}
	return out, nil
}

// ValidatePrescriptionV1 calls POST /api/v1/prescriptions/validate. A
// rejected or requires_review prescription is a result, not an error: see
// ValidationStatus and Codes. Scope prescription. Errors: 400 for bounds,
// an NPI or the same NDC on two lines, 404 (PATIENT_NOT_FOUND, or an
// unknown drug), 500/503 PROOF_FAILED (422 for a record beyond the ZK
// circuit's bounds), 503 PHARMACY_ERROR.
func (c *Client) ValidatePrescriptionV1(ctx context.Context, req healthagents.V1PrescriptionRequest) (*healthagents.V1PrescriptionResult, error) {
	var out healthagents.V1PrescriptionResult
	if err := c.do(ctx, call{method: http.MethodPost, path: "/api/v1/prescriptions/validate", body: req, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// Prescription calls GET /api/v1/prescriptions/{prescription_id}: a stored
// validation, as it was returned.
func (c *Client) Prescription(ctx context.Context, prescriptionID string) (*healthagents.V1PrescriptionResult, error) {
	var out healthagents.V1PrescriptionResult
	if err := c.do(ctx, call{method: http.MethodGet, path: "/api/v1/prescriptions/" + escape(prescriptionID), out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// MaxBatch is the most prescriptions BatchValidatePrescriptions takes.
const MaxBatch = healthagents.MaxBatch

// BatchItem is one prescription's outcome in a batch, the same type as in
// process (healthagents.V1BatchItem): Err is nil and Result set when the
// single endpoint would have answered 200; otherwise Err is the *Error it
// would have answered.
type BatchItem = healthagents.V1BatchItem

// BatchValidatePrescriptions calls POST /api/v1/prescriptions/batch-validate
// with up to MaxBatch prescriptions. Each is validated independently; the
// call fails only when the batch itself is refused. Items are in request
// order.
func (c *Client) BatchValidatePrescriptions(ctx context.Context, reqs []healthagents.V1PrescriptionRequest) ([]BatchItem, error) {
	var out api.BatchValidateResult
	body := api.BatchValidateRequest{Prescriptions: reqs}
	if err := c.do(ctx, call{method: http.MethodPost, path: "/api/v1/prescriptions/batch-validate", body: body, out: &out}); err != nil {
		return nil, err
	}
	items := make([]BatchItem, len(out.Results))
	for i, r := range out.Results {
		if r.Status == http.StatusOK && r.Result != nil {
			items[i].Result = r.Result
			continue
		}
		e := &Error{StatusCode: r.Status, Code: codeOf(r.Status), Detail: r.Detail, V1Code: v1Code(r.Detail)}
		e.he = &healthagents.Error{Code: e.Code, Detail: e.Detail}
		items[i].Err = e
	}
	return items, nil
}

// AttestPharmacyAvailability calls POST /api/v1/pharmacy/attestations: the
// pharmacy's statement that it can dispense the NDC from the given date is
// written to the oracle contract on the chain. Scope prescription. 400
// (IsInvalid) when the date is not after 1970-01-01 or more than 366 days
// ahead.
func (c *Client) AttestPharmacyAvailability(ctx context.Context, a healthagents.V1Attestation) (*healthagents.V1AttestationResult, error) {
	var out healthagents.V1AttestationResult
	if err := c.do(ctx, call{method: http.MethodPost, path: "/api/v1/pharmacy/attestations", body: a, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// EventPrescriptionApproved is the event RegisterPrescriptionWebhook
// subscribes to.
const EventPrescriptionApproved = healthagents.EventPrescriptionApproved

// PrescriptionWebhook is the endpoint RegisterPrescriptionWebhook created.
// Secret verifies deliveries; it is shown once.
type PrescriptionWebhook struct {
	ID        string    `json:"id"`
	URL       string    `json:"url"`
	Events    []string  `json:"events"`
	Secret    string    `json:"secret"`
	CreatedAt time.Time `json:"created_at"`
}

// RegisterPrescriptionWebhook is the spec's prescription-webhook client
// operation: it calls POST /webhooks for the prescription.approved event, so
// url is told of every prescription of the caller's organization that is
// approved. Scope webhooks.
func (c *Client) RegisterPrescriptionWebhook(ctx context.Context, url string) (*PrescriptionWebhook, error) {
	var out PrescriptionWebhook
	body := WebhookCreateRequest{URL: url, Events: []string{EventPrescriptionApproved}}
	if err := c.do(ctx, call{method: http.MethodPost, path: "/webhooks", body: body, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}
