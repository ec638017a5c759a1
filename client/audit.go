package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"time"
)

// AuditQuery filters the audit log; zero fields select everything.
// PatientID is sent to the server, which hashes it to find the entries.
type AuditQuery struct {
	PatientID string
	KeyID     string
	From, To  time.Time // From inclusive, To exclusive
}

func (q AuditQuery) values(offset, limit int) url.Values {
	v := offsetLimit(offset, limit)
	if q.PatientID != "" {
		v.Set("patient_id", q.PatientID)
	}
	if q.KeyID != "" {
		v.Set("key_id", q.KeyID)
	}
	if !q.From.IsZero() {
		v.Set("from", q.From.UTC().Format(time.RFC3339Nano))
	}
	if !q.To.IsZero() {
		v.Set("to", q.To.UTC().Format(time.RFC3339Nano))
	}
	return v
}

// ListAuditEntriesPage calls GET /api/v1/audit for one page (offset from
// 0, limit 1..100). The client's key needs the keys:admin scope; an admin
// key bound to an organization sees that organization's entries only.
func (c *Client) ListAuditEntriesPage(ctx context.Context, q AuditQuery, offset, limit int) (Page[AuditEntry], error) {
	var out AuditList
	if err := c.do(ctx, call{method: http.MethodGet, path: "/api/v1/audit", query: q.values(offset, limit), out: &out}); err != nil {
		return Page[AuditEntry]{}, err
	}
	return Page[AuditEntry]{Items: out.Entries, Total: out.Total}, nil
}

// ListAuditEntries walks GET /api/v1/audit page by page (100 entries a
// page), oldest entry first.
func (c *Client) ListAuditEntries(ctx context.Context, q AuditQuery) iter.Seq2[AuditEntry, error] {
	return Paginate(ctx, MaxPageSize, func(ctx context.Context, offset, limit int) (Page[AuditEntry], error) {
		return c.ListAuditEntriesPage(ctx, q, offset, limit)
	})
}

// VerifyAuditLog calls GET /api/v1/audit/verify: the server recomputes the
// log's hash chain. It needs a keys:admin key bound to no organization.
// Keep Entries and HeadHash somewhere else: a later log with fewer
// entries, or whose entry at that position has another hash, was cut or
// rewritten.
func (c *Client) VerifyAuditLog(ctx context.Context) (*AuditVerification, error) {
	var out AuditVerification
	if err := c.do(ctx, call{method: http.MethodGet, path: "/api/v1/audit/verify", out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}
