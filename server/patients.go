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

// patientRoutes: the v1 patient registry (encrypted envelopes, by owner).
func (s *srv) patientRoutes() []route {
	return []route{
		{Method: "PUT", Path: "/api/v1/patients/{patient_id}", Scope: apikey.ScopePatients, Class: ratelimit.ClassGeneral, Body: bodySingleRecord, Audit: &auditSpec{action: audit.ActionPatientPut, pathPatient: true},
			Handler: http.HandlerFunc(s.putPatient), Doc: v1Auth(openapi.Operation{
				OperationID: "putPatient", Tags: []string{"v1"}, Summary: "Register a patient's encrypted record",
				Description: "Our extension: the v1 operations name a patient but carry no envelope, so the envelope is registered here first. It is checked like any envelope (hash, CID, decryption, record, patient_id) and stored exactly as received, still encrypted, replacing the caller's previous one. Records belong to the caller's owner (the key's organization, else its rotation chain): a patient_id names a record only within its owner, so other organizations can neither read, replace nor delete it, and their PUT of the same id registers a record of their own. Needs the patients scope.",
				PathParams:  patientIDParam, Request: healthagents.PatientData{}, Responses: ok("Stored.", PatientRegistered{}),
				Errors: []int{400, 401, 403, 413, 429, 503},
			})},
		{Method: "DELETE", Path: "/api/v1/patients/{patient_id}", Scope: apikey.ScopePatients, Class: ratelimit.ClassGeneral, Audit: &auditSpec{action: audit.ActionPatientDelete, pathPatient: true},
			Handler: http.HandlerFunc(s.deletePatient), Doc: v1Auth(openapi.Operation{
				OperationID: "deletePatient", Tags: []string{"v1"}, Summary: "Delete a patient's registered record",
				Description: "Removes the caller's envelope (retention rules require deletion). 404 `PATIENT_NOT_FOUND: ...` when the caller's owner has none registered under this id (another organization's record of the same id is neither visible nor touched).",
				PathParams:  patientIDParam, Responses: ok("Deleted.", PatientDeleted{}),
				Errors: []int{400, 401, 403, 404, 429, 503},
			})},
	}
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
