package server

import (
	"net/http"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/audit"
	"github.com/healthagents/healthagents/internal/openapi"
	"github.com/healthagents/healthagents/ratelimit"
)

// PatientRegistered answers PUT /api/v1/patients/{patient_id}.
type PatientRegistered struct {
	PatientID string `json:"patient_id"`
	Stored    bool   `json:"stored" doc:"The envelope is stored as received, still encrypted."`
}

// PatientDeleted answers DELETE /api/v1/patients/{patient_id}.
type PatientDeleted struct {
	PatientID string `json:"patient_id"`
	Deleted   bool   `json:"deleted"`
}

// BatchValidateRequest is the body of POST /api/v1/prescriptions/batch-validate.
type BatchValidateRequest struct {
	Prescriptions []healthagents.V1PrescriptionRequest `json:"prescriptions" required:"true" minItems:"1" maxItems:"25" doc:"Up to 25 prescriptions, each validated independently."`
}

// BatchItem is one prescription's outcome: a result, or the status and
// detail the single endpoint would have answered.
type BatchItem struct {
	Index  int                                `json:"index" doc:"Position in the request."`
	Status int                                `json:"status" doc:"The HTTP status POST /api/v1/prescriptions/validate would have answered."`
	Result *healthagents.V1PrescriptionResult `json:"result,omitempty"`
	Detail string                             `json:"detail,omitempty" doc:"The error detail, v1 code first, when status is not 200."`
}

// BatchValidateResult answers POST /api/v1/prescriptions/batch-validate.
type BatchValidateResult struct {
	Results   []BatchItem `json:"results"`
	Succeeded int         `json:"succeeded" doc:"Items with status 200 (whatever their validation_status)."`
	Failed    int         `json:"failed"`
}

var (
	patientIDParam      = []openapi.Param{{Name: "patient_id", Description: "The patient's de-identified code; must equal the envelope's patient_id.", Example: "PT-000123"}}
	prescriptionIDParam = []openapi.Param{{Name: "prescription_id", Description: "Returned by prescription validation.", Example: "rx_k3j5m7n9p1q3r5s7t9v1w3x5"}}
)

const (
	v1EligibilityErrors = "Errors carry a v1 code in front of detail: 404 `PATIENT_NOT_FOUND: ...` (no record registered under this id by the caller's owner), 422 `NO_INSURANCE: ...` (no coverage block, coverage not active on the service date, or member_id not the record's), 500 `PROOF_INVALID: ...` (proof generation failed or the verifier rejected it), 422 `PROOF_INVALID: the record cannot be proven: ...` (the record exceeds the ZK circuit's bounds), 503 `NETWORK_ERROR: Service temporarily unavailable` (the chain did not answer). 400 for a provider_npi failing the NPI check digit; 404 `Procedure code X not found`."
	v1PrescriptionDoc   = "Medications are resolved by NDC (4-4-2, 5-3-2, 5-4-1 or 11 digits, normalized to 11) and, for NDCs outside the catalogue, by name; each is checked against the patient's current medications, the other new medications, and the patient's allergies and conditions. " +
		"validation_status: `rejected` for a major or contraindicated finding, `requires_review` for moderate findings, prior authorization (specialty formulary tier) or no active coverage, else `approved`. " +
		"INTERACTION_FOUND, CONTRAINDICATED and INELIGIBLE are findings listed in `codes` of a 200 result (the result is stored and readable by id). Errors: 400 for bounds (quantity 1-5000, days_supply 1-365, refills 0-11, at most 10 medications), the same NDC on two lines (in any form) or a failed NPI check, 404 `PATIENT_NOT_FOUND: ...` or `Drug code X not found`, 500 `PROOF_FAILED: ...`, 422 `PROOF_FAILED: the record cannot be proven: ...`, 503 `PROOF_FAILED: ...` when the chain does not answer, 503 `PHARMACY_ERROR: ...` when the oracle cannot be read. " +
		"pharmacy_confirmation is read from the PharmacyOracle contract: `confirmed` with a date only when the pharmacy attested every NDC; otherwise `unconfirmed`. An approved prescription emits prescription.approved."
)

func (s *srv) v1Routes() []route {
	auth := func(o openapi.Operation) openapi.Operation {
		o.Auth, o.RateLimited = openapi.AuthRequired, true
		return o
	}
	return []route{
		{Method: "PUT", Path: "/api/v1/patients/{patient_id}", Scope: apikey.ScopePatients, Class: ratelimit.ClassGeneral, Body: bodySingleRecord, Audit: &auditSpec{action: audit.ActionPatientPut, pathPatient: true},
			Handler: http.HandlerFunc(s.putPatient), Doc: auth(openapi.Operation{
				OperationID: "putPatient", Tags: []string{"v1"}, Summary: "Register a patient's encrypted record",
				Description: "Our extension: the v1 operations name a patient but carry no envelope, so the envelope is registered here first. It is checked like any envelope (hash, CID, decryption, record, patient_id) and stored exactly as received, still encrypted, replacing the caller's previous one. Records belong to the caller's owner (the key's organization, else its rotation chain): a patient_id names a record only within its owner, so other organizations can neither read, replace nor delete it, and their PUT of the same id registers a record of their own. Needs the patients scope.",
				PathParams:  patientIDParam, Request: healthagents.PatientData{}, Responses: ok("Stored.", PatientRegistered{}),
				Errors: []int{400, 401, 403, 413, 429, 503},
			})},
		{Method: "DELETE", Path: "/api/v1/patients/{patient_id}", Scope: apikey.ScopePatients, Class: ratelimit.ClassGeneral, Audit: &auditSpec{action: audit.ActionPatientDelete, pathPatient: true},
			Handler: http.HandlerFunc(s.deletePatient), Doc: auth(openapi.Operation{
				OperationID: "deletePatient", Tags: []string{"v1"}, Summary: "Delete a patient's registered record",
				Description: "Removes the caller's envelope (retention rules require deletion). 404 `PATIENT_NOT_FOUND: ...` when the caller's owner has none registered under this id (another organization's record of the same id is neither visible nor touched).",
				PathParams:  patientIDParam, Responses: ok("Deleted.", PatientDeleted{}),
				Errors: []int{400, 401, 403, 404, 429, 503},
			})},
		{Method: "POST", Path: "/api/v1/eligibility/verify", Scope: apikey.ScopeEligibility, Class: ratelimit.ClassEligibilityV1, Gate: classProof, Body: SmallBodyBytes, Audit: &auditSpec{action: audit.ActionEligibilityVerifyV1},
			Handler: http.HandlerFunc(s.v1VerifyEligibility), Doc: auth(openapi.Operation{
				OperationID: "verifyEligibilityV1", Tags: []string{"v1"}, Summary: "Verify a registered patient's eligibility with a proof",
				Description: "Decides eligibility for the procedure today from the registered record, proves it in zero knowledge and has the proof verified in a mined transaction: verification_proof.blockchain_tx is that transaction's hash. A procedure the plan excludes is 200 with eligible=false and a reason. Needs the eligibility scope; the Pro tier may make 10,000 per UTC day. " + v1EligibilityErrors,
				Request:     healthagents.V1EligibilityRequest{}, Responses: ok("The decision and its proof.", healthagents.V1EligibilityResult{}),
				Errors: []int{400, 401, 403, 404, 413, 422, 429, 500, 503},
			})},
		{Method: "POST", Path: "/api/v1/prescriptions/validate", Scope: apikey.ScopePrescription, Class: ratelimit.ClassPrescription, Gate: classProof, Body: SmallBodyBytes, Audit: &auditSpec{action: audit.ActionPrescriptionV1},
			Handler: http.HandlerFunc(s.v1ValidatePrescription), Doc: auth(openapi.Operation{
				OperationID: "validatePrescriptionV1", Tags: []string{"v1"}, Summary: "Validate a multi-medication prescription",
				Description: v1PrescriptionDoc + " Needs the prescription scope.",
				Request:     healthagents.V1PrescriptionRequest{}, Responses: ok("The validation, stored under prescription_id.", healthagents.V1PrescriptionResult{}),
				Errors: []int{400, 401, 403, 404, 413, 422, 429, 500, 503},
			})},
		{Method: "POST", Path: "/api/v1/prescriptions/batch-validate", Scope: apikey.ScopePrescription, Class: ratelimit.ClassPrescription, Gate: classProof, Body: BatchBodyBytes, Audit: &auditSpec{action: audit.ActionPrescriptionV1},
			Handler: http.HandlerFunc(s.v1BatchValidate), Doc: auth(openapi.Operation{
				OperationID: "batchValidatePrescriptions", Tags: []string{"v1"}, Summary: "Validate up to 25 prescriptions",
				Description: "Each prescription is validated as POST /api/v1/prescriptions/validate would, independently: one failing does not fail the others, and each item carries the status and detail (or result) the single endpoint would have answered. The call itself is 200 unless the batch is malformed or larger than 25 (400). Needs the prescription scope. Rate limit: a batch of n costs n units of the prescription and per-key budgets, taken all or nothing before anything is validated: 429 when they do not fit, 400 when n exceeds the caller's per-minute limit; on success X-RateLimit-Remaining counts the whole batch.",
				Request:     BatchValidateRequest{}, Responses: ok("One item per prescription, in request order.", BatchValidateResult{}),
				Errors: []int{400, 401, 403, 413, 429, 503},
			})},
		{Method: "GET", Path: "/api/v1/prescriptions/{prescription_id}", Scope: apikey.ScopePrescription, Class: ratelimit.ClassGeneral, Audit: &auditSpec{action: audit.ActionPrescriptionRead, pathPrescription: true},
			Handler: http.HandlerFunc(s.v1GetPrescription), Doc: auth(openapi.Operation{
				OperationID: "getPrescription", Tags: []string{"v1"}, Summary: "Read a stored prescription validation",
				Description: "Readable by keys of the owner that made it (organization, or the key's rotation chain). Needs the prescription scope.",
				PathParams:  prescriptionIDParam, Responses: ok("The validation as returned when it was made.", healthagents.V1PrescriptionResult{}),
				Errors: []int{400, 401, 403, 404, 429, 503},
			})},
		{Method: "POST", Path: "/api/v1/pharmacy/attestations", Scope: apikey.ScopePharmacy, Class: ratelimit.ClassGeneral, Body: SmallBodyBytes,
			Handler: http.HandlerFunc(s.v1AttestAvailability), Doc: auth(openapi.Operation{
				OperationID: "attestPharmacyAvailability", Tags: []string{"v1"}, Summary: "Publish a pharmacy availability attestation",
				Description: "Writes (pharmacy_npi, NDC, estimated availability) to the PharmacyOracle contract in a mined transaction; prescription validation reads it back from the chain. Needs the pharmacy scope, which keys get only when created with it (a prescriber's key cannot confirm its own prescriptions). estimated_availability must be a date after 1970-01-01 and at most 366 days after today (UTC), else 400 `Validation error: field 'estimated_availability' must be after 1970-01-01 and at most 366 days after today (UTC)`. 400 `PHARMACY_ERROR: ...` when the oracle refuses the attestation as malformed; 503 `PHARMACY_ERROR: ...` when no oracle is configured or the chain does not answer.",
				Request:     healthagents.V1Attestation{}, Responses: map[int]openapi.Response{http.StatusCreated: {Description: "Written to the chain.", Body: healthagents.V1AttestationResult{}}},
				Errors: []int{400, 401, 403, 413, 429, 500, 503},
			})},
	}
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

func (s *srv) putPatient(w http.ResponseWriter, r *http.Request) {
	v1, ok := s.v1OrFail(w)
	if !ok {
		return
	}
	var env healthagents.PatientData
	if err := read(w, r, s.opts.maxBody, &env, "patient_id", "encrypted_data", "ipfs_cid", "data_hash"); err != nil {
		s.writeError(w, r, err)
		return
	}
	id := r.PathValue("patient_id")
	if err := v1.PutPatient(r.Context(), v1Owner(r), id, &env); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, PatientRegistered{PatientID: id, Stored: true})
}

func (s *srv) deletePatient(w http.ResponseWriter, r *http.Request) {
	v1, ok := s.v1OrFail(w)
	if !ok {
		return
	}
	id := r.PathValue("patient_id")
	if err := v1.DeletePatient(r.Context(), v1Owner(r), id); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, PatientDeleted{PatientID: id, Deleted: true})
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
	writeJSON(w, http.StatusOK, res)
}

func (s *srv) v1BatchValidate(w http.ResponseWriter, r *http.Request) {
	v1, ok := s.v1OrFail(w)
	if !ok {
		return
	}
	var req BatchValidateRequest
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
	out := BatchValidateResult{Results: make([]BatchItem, len(items))}
	for i, it := range items {
		out.Results[i] = BatchItem{Index: i, Status: http.StatusOK, Result: it.Result}
		if it.Err != nil {
			code := healthagents.ErrorCode(it.Err)
			if code == healthagents.CodeInternal {
				s.logger.ErrorContext(r.Context(), "batch item failed", "index", i, "err", it.Err)
			}
			out.Results[i] = BatchItem{Index: i, Status: StatusOf(code), Detail: healthagents.ErrorDetail(it.Err)}
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
	writeJSON(w, http.StatusOK, res)
}

func (s *srv) v1AttestAvailability(w http.ResponseWriter, r *http.Request) {
	v1, ok := s.v1OrFail(w)
	if !ok {
		return
	}
	// The route's Scope (apikey.ScopePharmacy) already requires the pharmacy scope
	// (auth.go); checked again so writing to the chain stays closed to
	// other keys if the route moves.
	if k := requestKey(r); k == nil || !k.HasScope(apikey.ScopePharmacy) {
		writeDetail(w, http.StatusForbidden, detailForbidden)
		return
	}
	var req healthagents.V1Attestation
	if err := read(w, r, s.opts.maxBody, &req, "pharmacy_npi", "ndc_code", "estimated_availability"); err != nil {
		s.writeError(w, r, err)
		return
	}
	res, err := v1.AttestAvailability(r.Context(), req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, res)
}
