package server

import (
	"net/http"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/api"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/audit"
	"github.com/healthagents/healthagents/fhir"
	"github.com/healthagents/healthagents/internal/openapi"
	"github.com/healthagents/healthagents/ratelimit"
)

// prescriptionRoutes: validation on a sealed record (root family) and on a
// registered patient (v1), batches, and stored validations.
func (s *srv) prescriptionRoutes() []route {
	return []route{
		{Method: "POST", Path: "/validate-prescription", Scope: apikey.ScopePrescription, Class: ratelimit.ClassPrescription, Gate: classProof, Body: bodySingleRecord, Audit: &auditSpec{action: audit.ActionPrescriptionValidate},
			Handler: http.HandlerFunc(s.validatePrescription), Doc: openapi.Operation{
				OperationID: "validatePrescription", Tags: []string{"prescription"}, Summary: "Validate a prescription",
				Description: "Checks the drug against the patient's current medications, allergies and conditions, and proves coverage. Beside the spec's fields the answer carries the transaction that recorded the proof (blockchain_tx), its statement and issuer, as /verify-eligibility does. A major or contraindicated finding gives 422 `Prescription validation failed: Drug interaction detected with <drug_name>`; an untrusted coverage credential 422 `Prescription validation failed: Untrusted coverage credential: ...`.",
				Request:     prescriptionRequest, Responses: ok("The prescription is valid.", prescriptionResult),
				Errors: []int{400, 401, 403, 404, 413, 422, 429, 500, 503}, RateLimited: true, Auth: openapi.AuthOptional,
			}},
		{Method: "POST", Path: "/api/v1/prescriptions/validate", Scope: apikey.ScopePrescription, Class: ratelimit.ClassPrescription, Gate: classProof, Body: SmallBodyBytes, Audit: &auditSpec{action: audit.ActionPrescriptionV1},
			Handler: http.HandlerFunc(s.v1ValidatePrescription), Doc: v1Auth(openapi.Operation{
				OperationID: "validatePrescriptionV1", Tags: []string{"v1"}, Summary: "Validate a multi-medication prescription",
				Description: v1PrescriptionDoc + " Needs the prescription scope.",
				Request:     healthagents.V1PrescriptionRequest{}, Responses: withFHIR(ok("The validation, stored under prescription_id.", healthagents.V1PrescriptionResult{}), fhirDetectedIssuesSchema),
				Errors: []int{400, 401, 403, 404, 413, 422, 429, 500, 503},
			})},
		{Method: "POST", Path: "/api/v1/prescriptions/batch-validate", Scope: apikey.ScopePrescription, Class: ratelimit.ClassPrescription, Gate: classProof, Body: BatchBodyBytes, Audit: &auditSpec{action: audit.ActionPrescriptionV1},
			Handler: http.HandlerFunc(s.v1BatchValidate), Doc: v1Auth(openapi.Operation{
				OperationID: "batchValidatePrescriptions", Tags: []string{"v1"}, Summary: "Validate up to 25 prescriptions",
				Description: "Each prescription is validated as POST /api/v1/prescriptions/validate would, independently: one failing does not fail the others, and each item carries the status and detail (or result) the single endpoint would have answered. The call itself is 200 unless the batch is malformed or larger than 25 (400). Needs the prescription scope. Rate limit: a batch of n costs n units of the prescription and per-key budgets, taken all or nothing before anything is validated: 429 when they do not fit, 400 when n exceeds the caller's per-minute limit; on success X-RateLimit-Remaining counts the whole batch.",
				Request:     api.BatchValidateRequest{}, Responses: ok("One item per prescription, in request order.", api.BatchValidateResult{}),
				Errors: []int{400, 401, 403, 413, 429, 503},
			})},
		{Method: "GET", Path: "/api/v1/prescriptions/{prescription_id}", Scope: apikey.ScopePrescription, Class: ratelimit.ClassGeneral, Audit: &auditSpec{action: audit.ActionPrescriptionRead, pathPrescription: true},
			Handler: http.HandlerFunc(s.v1GetPrescription), Doc: v1Auth(openapi.Operation{
				OperationID: "getPrescription", Tags: []string{"v1"}, Summary: "Read a stored prescription validation",
				Description: "Readable by keys of the owner that made it (organization, or the key's rotation chain). Needs the prescription scope.",
				PathParams:  prescriptionIDParam, Responses: withFHIR(ok("The validation as returned when it was made.", healthagents.V1PrescriptionResult{}), fhirDetectedIssuesSchema),
				Errors: []int{400, 401, 403, 404, 429, 503},
			})},
	}
}

func (s *srv) validatePrescription(w http.ResponseWriter, r *http.Request) {
	var req healthagents.PrescriptionRequest
	if err := read(w, r, s.opts.maxBody, &req, "patient_data", "drug_code"); err != nil {
		s.writeError(w, r, err)
		return
	}
	notePatient(r, req.PatientData.PatientID)
	res, err := s.deps.Service.ValidatePrescription(r.Context(), req.PatientData, req.DrugCode)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *srv) v1ValidatePrescription(w http.ResponseWriter, r *http.Request) {
	v1, ok := s.v1OrFail(w)
	if !ok {
		return
	}
	var req healthagents.V1PrescriptionRequest
	if err := read(w, r, s.opts.maxBody, &req, "patient_id", "provider_npi", "medications"); err != nil {
		s.writeError(w, r, err)
		return
	}
	notePatient(r, req.PatientID)
	res, err := v1.ValidatePrescription(r.Context(), v1Owner(r), req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if wantsFHIR(r) {
		writeFHIR(w, http.StatusOK, fhir.DetectedIssues(fhirPrescription(req.PatientID, res)))
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *srv) v1BatchValidate(w http.ResponseWriter, r *http.Request) {
	v1, ok := s.v1OrFail(w)
	if !ok {
		return
	}
	var req api.BatchValidateRequest
	if err := read(w, r, s.opts.maxBody, &req, "prescriptions"); err != nil {
		s.writeError(w, r, err)
		return
	}
	// Each prescription costs one unit of the prescription budget; a batch
	// whose size BatchValidate refuses (400) costs only the gate's unit.
	if n := len(req.Prescriptions); n <= healthagents.MaxBatch && !s.charge(w, r, ratelimit.ClassPrescription, n, "prescriptions") {
		return
	}
	items, err := v1.BatchValidate(r.Context(), v1Owner(r), req.Prescriptions)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := api.BatchValidateResult{Results: make([]api.BatchValidateEntry, len(items))}
	for i, it := range items {
		out.Results[i] = api.BatchValidateEntry{Index: i, Status: http.StatusOK, Result: it.Result}
		if it.Err != nil {
			code := healthagents.ErrorCode(it.Err)
			if code == healthagents.CodeInternal {
				s.logger.ErrorContext(r.Context(), "batch item failed", "index", i, "err", it.Err)
			}
			out.Results[i] = api.BatchValidateEntry{Index: i, Status: StatusOf(code), Detail: healthagents.ErrorDetail(it.Err)}
			out.Failed++
		} else {
			out.Succeeded++
		}
		noteItem(r, req.Prescriptions[i].PatientID, out.Results[i].Status)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *srv) v1GetPrescription(w http.ResponseWriter, r *http.Request) {
	v1, ok := s.v1OrFail(w)
	if !ok {
		return
	}
	res, err := v1.Prescription(r.Context(), v1Owner(r), r.PathValue("prescription_id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if wantsFHIR(r) {
		writeFHIR(w, http.StatusOK, fhir.DetectedIssues(fhirPrescription("", res)))
		return
	}
	writeJSON(w, http.StatusOK, res)
}
