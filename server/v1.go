package server

import (
	"net/http"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/internal/openapi"
)

var (
	patientIDParam      = []openapi.Param{{Name: "patient_id", Description: "The patient's de-identified code; must equal the envelope's patient_id.", Example: "PT-000123"}}
	prescriptionIDParam = []openapi.Param{{Name: "prescription_id", Description: "Returned by prescription validation.", Example: "rx_k3j5m7n9p1q3r5s7t9v1w3x5"}}
)

const (
	v1EligibilityErrors = "Errors carry a v1 code in front of detail: 404 `PATIENT_NOT_FOUND: ...` (no record registered under this id by the caller's owner), 422 `NO_INSURANCE: ...` (no coverage block, coverage not active on the service date, or member_id not the record's), 422 `UNTRUSTED_CREDENTIAL: ...` (the record's coverage credential is revoked by its payer, expired, or from an issuer not registered or retired; none under COVERAGE_TRUST=registered), 500 `PROOF_INVALID: ...` (proof generation failed or the verifier rejected it), 422 `PROOF_INVALID: the record cannot be proven: ...` (the record exceeds the ZK circuit's bounds), 503 `NETWORK_ERROR: Service temporarily unavailable` (the chain did not answer). 400 for a provider_npi failing the NPI check digit; 404 `Procedure code X not found`."
	v1PrescriptionDoc   = "Medications are resolved by NDC (4-4-2, 5-3-2, 5-4-1 or 11 digits, normalized to 11) and, for NDCs outside the catalogue, by name; each is checked against the patient's current medications, the other new medications, and the patient's allergies and conditions. " +
		"validation_status: `rejected` for a major or contraindicated finding, `requires_review` for moderate findings, prior authorization (specialty formulary tier) or no active coverage, else `approved`. " +
		"INTERACTION_FOUND, CONTRAINDICATED and INELIGIBLE are findings listed in `codes` of a 200 result (the result is stored and readable by id). Errors: 400 for bounds (quantity 1-5000, days_supply 1-365, refills 0-11, at most 10 medications), the same NDC on two lines (in any form) or a failed NPI check, 404 `PATIENT_NOT_FOUND: ...` or `Drug code X not found`, 422 `UNTRUSTED_CREDENTIAL: ...` (the coverage credential is revoked, expired or from an issuer not registered or retired), 500 `PROOF_FAILED: ...`, 422 `PROOF_FAILED: the record cannot be proven: ...`, 503 `PROOF_FAILED: ...` when the chain does not answer, 503 `PHARMACY_ERROR: ...` when the oracle cannot be read. " +
		"pharmacy_confirmation is read from the PharmacyOracle contract: `confirmed` with a date only when the pharmacy attested every NDC; otherwise `unconfirmed`. An approved prescription emits prescription.approved."
)

// v1Auth marks a v1 operation as needing a key and rate limited.
func v1Auth(o openapi.Operation) openapi.Operation {
	o.Auth, o.RateLimited = openapi.AuthRequired, true
	return o
}

// v1OrFail returns the v1 operations, or answers 503 when none are wired.
func (s *srv) v1OrFail(w http.ResponseWriter) (*healthagents.V1, bool) {
	if s.deps.V1 == nil {
		writeDetail(w, http.StatusServiceUnavailable, detailUnavailable)
		return nil, false
	}
	return s.deps.V1, true
}

// v1Owner is the owner of the caller's v1 data: the key's organization, or
// else its rotation chain (as webhooks scope their endpoints). Registered
// patients are keyed by (owner, patient_id) and stored validations are
// readable by their owner only, so one organization never reaches
// another's records.
func v1Owner(r *http.Request) string {
	k := requestKey(r)
	if k == nil {
		return ""
	}
	if k.Organization != "" {
		return "org:" + k.Organization
	}
	return "key:" + k.Budget()
}
