package api

import "time"

// The access audit log: GET /api/v1/audit and /api/v1/audit/verify.

// AuditEntry is one access in GET /api/v1/audit. It carries no medical data
// and no patient id: patient_ref is a keyed hash of it.
type AuditEntry struct {
	Seq          int64     `json:"seq" doc:"Position in the log, from 1, without gaps."`
	Time         time.Time `json:"time" doc:"When the access was answered (UTC)."`
	Actor        string    `json:"actor" enum:"key,public" doc:"key: an API key; public: an unauthenticated caller of the root endpoints."`
	KeyID        string    `json:"key_id,omitempty" doc:"The key's public id (never its secret)."`
	Organization string    `json:"organization,omitempty" doc:"The key's organization."`
	ClientIP     string    `json:"client_ip,omitempty" doc:"The caller's address as the server saw it (X-Forwarded-For only from a trusted proxy)."`
	Action       string    `json:"action" enum:"eligibility.verify,prescription.validate,patient.put,patient.delete,v1.eligibility.verify,v1.prescription.validate,v1.prescription.read,federated.submit"`
	PatientRef   string    `json:"patient_ref,omitempty" doc:"HMAC-SHA256 of the patient id under the deployment's pseudonym key, the same for every account (webhook payloads carry a per-account pseudonym derived from it, webhook.OwnerPseudonym); absent when the access named no single patient."`
	Resource     string    `json:"resource,omitempty" doc:"Another object the access named, e.g. prescription:rx_..."`
	Records      int       `json:"records,omitempty" doc:"Records carried by a federated submission."`
	Outcome      string    `json:"outcome" enum:"success,denied,error" doc:"success below 400, denied for 401/403, error otherwise."`
	Status       int       `json:"status" doc:"The HTTP status answered for this access (a batch item's own status)."`
	RequestID    string    `json:"request_id,omitempty" doc:"The request's X-Request-ID."`
	PrevHash     string    `json:"prev_hash" doc:"The previous entry's hash (64 zeros for the first)."`
	Hash         string    `json:"hash" doc:"SHA-256(prev_hash bytes || canonical encoding of the entry), hex."`
}

// AuditList is a page of the audit log, oldest first.
type AuditList struct {
	Entries []AuditEntry `json:"entries"`
	Total   int          `json:"total" doc:"Entries the filters select."`
	Offset  int          `json:"offset"`
	Limit   int          `json:"limit"`
}

// AuditVerification answers GET /api/v1/audit/verify.
type AuditVerification struct {
	Valid          bool   `json:"valid" doc:"Every entry chains to its predecessor and its hash recomputes."`
	Entries        int64  `json:"entries"`
	FirstBrokenSeq *int64 `json:"first_broken_seq,omitempty" doc:"The first position whose entry is missing, altered or out of place."`
	HeadHash       string `json:"head_hash" doc:"The last entry's hash; keep it elsewhere to detect truncation later."`
}
