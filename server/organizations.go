package server

import (
	"net/http"
	"time"

	"github.com/healthagents/healthagents/api"
	"github.com/healthagents/healthagents/federated"
)

// Organization is a registered federated participant (the federated
// package's type is the wire format).
type Organization = federated.Organization

func (s *srv) registerOrganization(w http.ResponseWriter, r *http.Request) {
	f := s.fed(w)
	if f == nil {
		return
	}
	org, ok := s.organizationOf(w, r)
	if !ok {
		return
	}
	if f.Organizations == nil {
		writeDetail(w, http.StatusServiceUnavailable, detailUnavailable)
		return
	}
	var req api.OrganizationRequest
	if err := read(w, r, s.opts.maxBody, &req, "organization_name", "encryption_key"); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := req.Validate(); err != nil {
		writeDetail(w, http.StatusBadRequest, err.Error())
		return
	}
	o, err := federated.NewOrganization(org, req.OrganizationName, req.Endpoint, req.EncryptionKey)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	now := time.Now
	if f.Now != nil {
		now = f.Now
	}
	o.CreatedAt = now().UTC()
	o.UpdatedAt = o.CreatedAt
	created, err := f.Organizations.RegisterOrganization(r.Context(), o)
	if err != nil {
		s.writeError(w, r, fedError(err))
		return
	}
	got, err := f.Organizations.Organization(r.Context(), org)
	if err != nil {
		s.writeError(w, r, fedError(err))
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, got)
}

// ParseX25519PublicKey reads a 32-byte X25519 public key; see
// federated.ParseX25519PublicKey.
func ParseX25519PublicKey(s string) ([]byte, error) { return federated.ParseX25519PublicKey(s) }
