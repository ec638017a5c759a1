package server

import (
	"bytes"
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/api"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/audit"
	"github.com/healthagents/healthagents/internal/openapi"
	"github.com/healthagents/healthagents/ratelimit"
)

// The access audit log (HIPAA 164.312(b)). Every route that decrypts,
// stores, reads or deletes a patient's data is wrapped by audited: the
// handler names the patient(s) it touched (notePatient, noteItem,
// noteRecords, or the path for the registry and prescription reads), its
// response is held back, and the wrapper appends one entry per access with
// the caller and the response status before the response is sent. When the
// entry cannot be written the caller gets 503 and not the result: the
// service fails closed (docs/decisions/audit.md).

var auditQueryParams = append([]openapi.Param{
	{Name: "patient_id", Description: "Only accesses to this patient; hashed by the server, never stored.", Example: "PT-000123"},
	{Name: "key_id", Description: "Only accesses by this API key id.", Example: "4Gq0bT2xZk"},
	{Name: "from", Description: "Only accesses at or after this time (RFC 3339).", Schema: &openapi.Schema{Type: openapi.Types{"string"}, Format: "date-time"}},
	{Name: "to", Description: "Only accesses before this time (RFC 3339).", Schema: &openapi.Schema{Type: openapi.Types{"string"}, Format: "date-time"}},
}, pageParams...)

func (s *srv) auditRoutes() []route {
	return []route{
		{Method: "GET", Path: "/api/v1/audit", Class: ratelimit.ClassGeneral,
			Handler: http.HandlerFunc(s.listAudit), Doc: openapi.Operation{
				OperationID: "listAuditEntries", Tags: []string{"audit"}, Summary: "Who accessed which patient's data, and when",
				Description: "The append-only access log: one entry per operation that decrypted, stored, read or deleted a patient's data, oldest first. Needs keys:admin; an admin key bound to an organization sees its organization's entries only. No medical data and no patient ids: filter by patient_id and the server hashes it.",
				QueryParams: auditQueryParams, Responses: ok("A page of entries.", api.AuditList{}),
				Errors: []int{400, 401, 403, 429, 503}, RateLimited: true, Auth: openapi.AuthRequired,
			}},
		{Method: "GET", Path: "/api/v1/audit/verify", Class: ratelimit.ClassGeneral,
			Handler: http.HandlerFunc(s.verifyAudit), Doc: openapi.Operation{
				OperationID: "verifyAuditLog", Tags: []string{"audit"}, Summary: "Recompute the audit log's hash chain",
				Description: "Reads every entry in order and checks that each one's prev_hash is its predecessor's hash and its hash recomputes. Needs keys:admin on a key bound to no organization.",
				Responses:   ok("The verification.", api.AuditVerification{}),
				Errors:      []int{401, 403, 429, 503}, RateLimited: true, Auth: openapi.AuthRequired,
			}},
	}
}

// auditSpec says how a route is audited.
type auditSpec struct {
	action           string
	pathPatient      bool // the path's {patient_id} is the patient
	pathPrescription bool // the path's {prescription_id} names the record read
}

// withAudit wraps the audited routes of rs (route.Audit). The v1 pharmacy
// attestation and the federated round phases carry no patient data and are
// not audited.
func (s *srv) withAudit(rs []route) []route {
	for i, rt := range rs {
		if rt.Audit != nil {
			rs[i].Handler = s.audited(*rt.Audit, rt.Handler)
		}
	}
	return rs
}

type auditNoteKey struct{}

// auditNote collects the accesses a handler reports.
type auditNote struct {
	mu    sync.Mutex
	items []notedAccess
}

type notedAccess struct {
	patientID, prescriptionID string
	records                   int
	status                    int // 0: the response's status
}

func note(r *http.Request, a notedAccess) {
	n, _ := r.Context().Value(auditNoteKey{}).(*auditNote)
	if n == nil || (a.patientID == "" && a.prescriptionID == "" && a.records == 0) {
		return // names nobody: refused before any patient data was touched
	}
	n.mu.Lock()
	n.items = append(n.items, a)
	n.mu.Unlock()
}

// notePatient reports that the request accesses patientID's data; the
// entry gets the response's status.
func notePatient(r *http.Request, patientID string) { note(r, notedAccess{patientID: patientID}) }

// noteItem reports one access of several (a batch item) with its own status.
func noteItem(r *http.Request, patientID string, status int) {
	note(r, notedAccess{patientID: patientID, status: status})
}

// noteRecords reports an access to n records of no single named patient.
func noteRecords(r *http.Request, n int) { note(r, notedAccess{records: n}) }

// auditWriteTimeout bounds the append; it runs even when the client has
// gone, since the access happened.
const auditWriteTimeout = 5 * time.Second

// audited holds the handler's response until the accesses it reported are
// in the audit log. A handler that reports none (a request refused before
// it named a patient) is answered as is.
func (s *srv) audited(spec auditSpec, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.deps.Audit == nil {
			next.ServeHTTP(w, r)
			return
		}
		n := &auditNote{}
		if spec.pathPatient {
			n.items = append(n.items, notedAccess{patientID: r.PathValue("patient_id")})
		}
		if spec.pathPrescription {
			n.items = append(n.items, notedAccess{prescriptionID: r.PathValue("prescription_id")})
		}
		held := &heldResponse{w: w}
		next.ServeHTTP(held, r.WithContext(context.WithValue(r.Context(), auditNoteKey{}, n)))
		n.mu.Lock()
		items := n.items
		n.mu.Unlock()
		if len(items) == 0 {
			held.release()
			return
		}
		status := held.status
		if status == 0 {
			status = http.StatusOK
		}
		actor := audit.Access{ActorType: audit.ActorPublic, Action: spec.action, RequestID: w.Header().Get("X-Request-ID"), Time: time.Now()}
		if ip, _ := s.clientOf(r); ip.IsValid() {
			actor.ClientIP = ip.String()
		}
		if k := requestKey(r); k != nil {
			actor.ActorType, actor.KeyID, actor.Organization = audit.ActorKey, k.ID, k.Organization
		}
		as := make([]audit.Access, len(items))
		for i, it := range items {
			a := actor
			a.PatientID, a.PrescriptionID, a.Records, a.Status = it.patientID, it.prescriptionID, it.records, it.status
			if it.prescriptionID != "" {
				a.Resource = "prescription:" + it.prescriptionID
			}
			if a.Status == 0 {
				a.Status = status
			}
			as[i] = a
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), auditWriteTimeout)
		defer cancel()
		if err := s.deps.Audit.Record(ctx, as...); err != nil {
			s.logger.ErrorContext(r.Context(), "audit log write failed; response withheld", "route", r.Pattern, "err", err)
			writeDetail(w, http.StatusServiceUnavailable, detailUnavailable)
			return
		}
		held.release()
	})
}

// heldResponse keeps a handler's status and body until release; headers go
// to the real writer's map directly (a 503 in its place overwrites the
// ones that matter).
type heldResponse struct {
	w      http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (h *heldResponse) Header() http.Header { return h.w.Header() }

func (h *heldResponse) WriteHeader(status int) {
	if h.status == 0 {
		h.status = status
	}
}

func (h *heldResponse) Write(b []byte) (int, error) {
	if h.status == 0 {
		h.status = http.StatusOK
	}
	return h.body.Write(b)
}

func (h *heldResponse) release() {
	if h.status == 0 {
		h.status = http.StatusOK
	}
	h.w.WriteHeader(h.status)
	_, _ = h.w.Write(h.body.Bytes())
}

// auditOrFail returns the log, or answers 503 when none is wired.
func (s *srv) auditOrFail(w http.ResponseWriter) (*audit.Log, bool) {
	if s.deps.Audit == nil {
		writeDetail(w, http.StatusServiceUnavailable, detailUnavailable)
		return nil, false
	}
	return s.deps.Audit, true
}

// maxAuditFilter bounds the patient_id and key_id filters.
const maxAuditFilter = 256

func (s *srv) listAudit(w http.ResponseWriter, r *http.Request) {
	caller := requestKey(r)
	if caller == nil || !caller.HasScope(apikey.ScopeKeysAdmin) {
		writeDetail(w, http.StatusForbidden, detailForbidden)
		return
	}
	log, ok := s.auditOrFail(w)
	if !ok {
		return
	}
	offset, limit, err := parsePage(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	q := r.URL.Query()
	query := audit.Query{PatientID: q.Get("patient_id"), KeyID: q.Get("key_id"), Organization: caller.Organization, Offset: offset, Limit: limit}
	if len(query.PatientID) > maxAuditFilter || len(query.KeyID) > maxAuditFilter {
		s.writeError(w, r, healthagents.Errorf(healthagents.CodeInvalid, "Validation error: patient_id and key_id are at most %d characters", maxAuditFilter))
		return
	}
	for _, p := range []struct {
		name string
		dst  *time.Time
	}{{"from", &query.From}, {"to", &query.To}} {
		if v := q.Get(p.name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				s.writeError(w, r, healthagents.Errorf(healthagents.CodeInvalid, "Validation error: %s must be an RFC 3339 time such as 2026-01-02T15:04:05Z", p.name))
				return
			}
			*p.dst = t
		}
	}
	if !query.From.IsZero() && !query.To.IsZero() && !query.From.Before(query.To) {
		s.writeError(w, r, healthagents.Errorf(healthagents.CodeInvalid, "Validation error: from must be before to"))
		return
	}
	es, total, err := log.List(r.Context(), query)
	if err != nil {
		s.logger.ErrorContext(r.Context(), "reading the audit log failed", "err", err)
		writeDetail(w, http.StatusServiceUnavailable, detailUnavailable)
		return
	}
	out := api.AuditList{Entries: make([]api.AuditEntry, len(es)), Total: total, Offset: offset, Limit: limit}
	for i, e := range es {
		out.Entries[i] = api.AuditEntry{
			Seq: e.Seq, Time: e.Time, Actor: e.ActorType, KeyID: e.KeyID, Organization: e.Organization,
			ClientIP: e.ClientIP, Action: e.Action, PatientRef: e.PatientRef, Resource: e.Resource,
			Records: e.Records, Outcome: e.Outcome, Status: e.Status, RequestID: e.RequestID,
			PrevHash: e.PrevHash, Hash: e.Hash,
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *srv) verifyAudit(w http.ResponseWriter, r *http.Request) {
	caller := requestKey(r)
	if caller == nil || !caller.HasScope(apikey.ScopeKeysAdmin) || caller.Organization != "" {
		writeDetail(w, http.StatusForbidden, detailForbidden)
		return
	}
	log, ok := s.auditOrFail(w)
	if !ok {
		return
	}
	v, err := log.Verify(r.Context())
	if err != nil {
		s.logger.ErrorContext(r.Context(), "reading the audit log failed", "err", err)
		writeDetail(w, http.StatusServiceUnavailable, detailUnavailable)
		return
	}
	writeJSON(w, http.StatusOK, api.AuditVerification{Valid: v.Valid, Entries: v.Entries, FirstBrokenSeq: v.FirstBrokenSeq, HeadHash: v.HeadHash})
}
