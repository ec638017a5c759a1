package server

import (
	"net/http"
	"time"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/audit"
	"github.com/healthagents/healthagents/fhir"
	"github.com/healthagents/healthagents/internal/openapi"
	"github.com/healthagents/healthagents/ratelimit"
)

// eligibilityRoutes: the root family's check on a sealed record and the v1 check on a
// registered patient.
func (s *srv) eligibilityRoutes() []route {
	return []route{
		{Method: "POST", Path: "/verify-eligibility", Scope: apikey.ScopeEligibility, Class: ratelimit.ClassEligibility, Gate: classProof, Body: bodySingleRecord, Audit: &auditSpec{action: audit.ActionEligibilityVerify},
			Handler: http.HandlerFunc(s.verifyEligibility), Doc: openapi.Operation{
				OperationID: "verifyEligibility", Tags: []string{"eligibility"}, Summary: "Check insurance eligibility for a procedure",
				Description: "Opens the encrypted record, decides eligibility for the procedure today, proves the decision in zero knowledge and has the proof verified by EVM code in a mined transaction. Beside the spec's fields the answer carries that transaction (blockchain_tx), the statement the proof makes (statement) and its issuer: pass the whole answer to `healthagents verify-decision --statement` to check it from the chain alone (docs/verify.md). An unknown procedure is a 404; a coverage credential the service does not trust (issuer unknown or retired, nonce revoked, expired; no credential under COVERAGE_TRUST=registered) is a 422 `Eligibility check failed: Untrusted coverage credential: ...`.",
				Request:     eligibilityRequest, Responses: ok("The eligibility decision; no medical data.", eligibilityResult),
				Errors: []int{400, 401, 403, 404, 413, 422, 429, 500, 503}, RateLimited: true, Auth: openapi.AuthOptional,
			}},
		{Method: "POST", Path: "/api/v1/eligibility/verify", Scope: apikey.ScopeEligibility, Class: ratelimit.ClassEligibilityV1, Gate: classProof, Body: SmallBodyBytes, Audit: &auditSpec{action: audit.ActionEligibilityVerifyV1},
			Handler: http.HandlerFunc(s.v1VerifyEligibility), Doc: v1Auth(openapi.Operation{
				OperationID: "verifyEligibilityV1", Tags: []string{"v1"}, Summary: "Verify a registered patient's eligibility with a proof",
				Description: "Decides eligibility for the procedure today from the registered record, proves it in zero knowledge and has the proof verified in a mined transaction: verification_proof.blockchain_tx is that transaction's hash. A procedure the plan excludes is 200 with eligible=false and a reason. Needs the eligibility scope; the Pro tier may make 10,000 per UTC day. " + v1EligibilityErrors,
				Request:     healthagents.V1EligibilityRequest{}, Responses: withFHIR(ok("The decision and its proof.", healthagents.V1EligibilityResult{}), fhirEligibilitySchema),
				Errors: []int{400, 401, 403, 404, 413, 422, 429, 500, 503},
			})},
	}
}

func (s *srv) verifyEligibility(w http.ResponseWriter, r *http.Request) {
	var req healthagents.EligibilityRequest
	if err := read(w, r, s.opts.maxBody, &req, "patient_data", "procedure_code"); err != nil {
		s.writeError(w, r, err)
		return
	}
	notePatient(r, req.PatientData.PatientID)
	res, err := s.deps.Service.VerifyEligibility(r.Context(), req.PatientData, req.ProcedureCode)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *srv) v1VerifyEligibility(w http.ResponseWriter, r *http.Request) {
	v1, ok := s.v1OrFail(w)
	if !ok {
		return
	}
	var req healthagents.V1EligibilityRequest
	if err := read(w, r, s.opts.maxBody, &req, "patient_id", "member_id", "procedure_code", "provider_npi"); err != nil {
		s.writeError(w, r, err)
		return
	}
	notePatient(r, req.PatientID)
	res, err := v1.VerifyEligibility(r.Context(), v1Owner(r), req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if wantsFHIR(r) {
		writeFHIR(w, http.StatusOK, fhir.CoverageEligibilityResponse(fhirEligibility(req, res, time.Now())))
		return
	}
	writeJSON(w, http.StatusOK, res)
}
