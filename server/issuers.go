package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/healthagents/healthagents/api"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/internal/openapi"
	"github.com/healthagents/healthagents/ratelimit"
)

// IssuerRegistry registers, lists and retires payers (credential issuers);
// *issuers.Registry (package issuers) is one.
type IssuerRegistry interface {
	Register(ctx context.Context, req api.IssuerRequest) (api.Issuer, bool, error)
	List(ctx context.Context) ([]api.Issuer, error)
	Get(ctx context.Context, id string) (api.Issuer, error)
	Retire(ctx context.Context, id string) (api.Issuer, error)
}

// CredentialRevoker revokes one of a payer's credential nonces (for the
// registry's owner, or with the payer's admin's signature); the server
// finds it on Deps.Issuers by type assertion. *issuers.Registry (package issuers) is one.
type CredentialRevoker interface {
	RevokeNonce(ctx context.Context, issuerID string, req api.RevocationRequest, byOwner bool) (api.Revocation, bool, error)
}

var issuerIDParam = []openapi.Param{{Name: "issuer_id", Description: "The issuer's public key (64 hex digits).",
	Example: "c5f2ba5b4c8d2a2e8c0b5e1c4b3a29181716151413121110090807060504030201"}}

const issuerAuth = " Needs keys:admin on a key bound to no organization."

func (s *srv) issuerRoutes() []route {
	return []route{
		{Method: "POST", Path: "/api/v1/issuers", Class: ratelimit.ClassGeneral, Body: SmallBodyBytes,
			Handler: http.HandlerFunc(s.registerIssuer), Doc: openapi.Operation{
				OperationID: "registerIssuer", Tags: []string{"issuers"}, Summary: "Register a payer whose coverage credentials are accepted",
				Description: "Keeps the payer and registers its key hash in the chain's issuer registry. Only the registry's owner can: when the service holds the owner's key the registration is sent (tx_hash), otherwise the answer carries the unsigned transaction for the owner's wallet (owner_action) and the status is awaiting_owner until it is mined. " +
					"201 for a new payer, 200 for one registered before; 409 for a retired one." + issuerAuth,
				Request: api.IssuerRequest{}, Responses: map[int]openapi.Response{
					http.StatusCreated: {Description: "The payer.", Body: api.Issuer{}},
					http.StatusOK:      {Description: "The payer, registered before.", Body: api.Issuer{}},
				},
				Errors: []int{400, 401, 403, 409, 429, 503}, RateLimited: true, Auth: openapi.AuthRequired,
			}},
		{Method: "GET", Path: "/api/v1/issuers", Class: ratelimit.ClassGeneral,
			Handler: http.HandlerFunc(s.listIssuers), Doc: openapi.Operation{
				OperationID: "listIssuers", Tags: []string{"issuers"}, Summary: "List payers",
				Description: "Every payer ever registered, oldest first, with its status read from the chain; a page of them with offset and limit, total counting them all." + issuerAuth,
				Responses:   ok("The payers.", api.IssuerList{}), QueryParams: wholeListPageParams,
				Errors: []int{401, 403, 429, 503}, RateLimited: true, Auth: openapi.AuthRequired,
			}},
		{Method: "GET", Path: "/api/v1/issuers/{issuer_id}", Class: ratelimit.ClassGeneral,
			Handler: http.HandlerFunc(s.getIssuer), Doc: openapi.Operation{
				OperationID: "getIssuer", Tags: []string{"issuers"}, Summary: "Get a payer",
				Description: "The payer with its status read from the chain." + issuerAuth,
				PathParams:  issuerIDParam, Responses: ok("The payer.", api.Issuer{}),
				Errors: []int{401, 403, 404, 429, 503}, RateLimited: true, Auth: openapi.AuthRequired,
			}},
		{Method: "DELETE", Path: "/api/v1/issuers/{issuer_id}", Class: ratelimit.ClassGeneral,
			Handler: http.HandlerFunc(s.retireIssuer), Doc: openapi.Operation{
				OperationID: "retireIssuer", Tags: []string{"issuers"}, Summary: "Retire a payer",
				Description: "Retires the payer in the chain's issuer registry from the next block on (sent, or returned unsigned for the owner's wallet) and here: its credentials are refused from then on, while earlier statements stay verifiable at their blocks. A retired payer cannot be registered again." + issuerAuth,
				PathParams:  issuerIDParam, Responses: ok("The payer, retired or awaiting the owner's signature.", api.Issuer{}),
				Errors: []int{401, 403, 404, 429, 503}, RateLimited: true, Auth: openapi.AuthRequired,
			}},
		{Method: "POST", Path: "/api/v1/issuers/{issuer_id}/revocations", Class: ratelimit.ClassGeneral, Body: SmallBodyBytes,
			Handler: http.HandlerFunc(s.revokeCredential), Doc: openapi.Operation{
				OperationID: "revokeCredential", Tags: []string{"issuers"}, Summary: "Revoke one of a payer's coverage credentials",
				Description: "Revokes the credential revocation nonce `nonce` of the payer in the chain's issuer registry from the next block on: decisions on a credential with that nonce are refused from then on (422 UNTRUSTED_CREDENTIAL on the v1 family, 422 `... Untrusted coverage credential: ...` on the root family), while decisions recorded before stay valid at their blocks (verify-decision says \"revoked later\"). " +
					"Who may: the registry's owner (a keys:admin key bound to no organization), or any key carrying admin_signature, the payer's admin_address's EIP-712 signature of the revocation (docs/credentials.md). When the service holds the registry owner's key (the embedded chain) it sends the revocation (status revoked, tx_hash); otherwise the answer carries the unsigned transaction for the caller's wallet (wallet_action, from the owner or the payer's admin, status awaiting_signature). " +
					"201 when revoked or prepared now, 200 when the nonce was revoked before (revoked_in_block). 403 for a caller that is neither, or a signature that is not the payer's admin's; 404 for an unknown payer.",
				PathParams: issuerIDParam, Request: api.RevocationRequest{}, Responses: map[int]openapi.Response{
					http.StatusCreated: {Description: "Revoked now, or prepared for the wallet.", Body: api.Revocation{}},
					http.StatusOK:      {Description: "Revoked before.", Body: api.Revocation{}},
				},
				Errors: []int{400, 401, 403, 404, 429, 503}, RateLimited: true, Auth: openapi.AuthRequired,
			}},
	}
}

// issuerCaller checks the caller is a global admin and the registry is
// configured.
func (s *srv) issuerCaller(w http.ResponseWriter, r *http.Request) (IssuerRegistry, bool) {
	caller := requestKey(r)
	if caller == nil || !caller.HasScope(apikey.ScopeKeysAdmin) || caller.Organization != "" {
		writeDetail(w, http.StatusForbidden, detailForbidden)
		return nil, false
	}
	if s.deps.Issuers == nil {
		writeDetail(w, http.StatusServiceUnavailable, detailUnavailable)
		return nil, false
	}
	return s.deps.Issuers, true
}

func (s *srv) issuerError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, api.ErrNotIssuerAdmin):
		writeDetail(w, http.StatusForbidden, "Forbidden: "+err.Error())
	case errors.Is(err, api.ErrIssuerNotFound):
		writeDetail(w, http.StatusNotFound, "Issuer not found")
	case errors.Is(err, api.ErrIssuerRetired):
		writeDetail(w, http.StatusConflict, "Conflict: "+api.ErrIssuerRetired.Error())
	default:
		s.logger.ErrorContext(r.Context(), "issuer registry failed", "err", err)
		writeDetail(w, http.StatusServiceUnavailable, detailUnavailable)
	}
}

func (s *srv) registerIssuer(w http.ResponseWriter, r *http.Request) {
	reg, ok := s.issuerCaller(w, r)
	if !ok {
		return
	}
	var req api.IssuerRequest
	if err := read(w, r, SmallBodyBytes, &req, "public_key", "name"); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := req.Validate(); err != nil {
		writeDetail(w, http.StatusBadRequest, err.Error())
		return
	}
	iss, created, err := reg.Register(r.Context(), req)
	if err != nil {
		s.issuerError(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, iss)
}

func (s *srv) listIssuers(w http.ResponseWriter, r *http.Request) {
	reg, ok := s.issuerCaller(w, r)
	if !ok {
		return
	}
	list, err := reg.List(r.Context())
	if err != nil {
		s.issuerError(w, r, err)
		return
	}
	page, err := pageOfWhole(r, list)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.IssuerList{Issuers: page, Total: len(list)})
}

func (s *srv) getIssuer(w http.ResponseWriter, r *http.Request) {
	reg, ok := s.issuerCaller(w, r)
	if !ok {
		return
	}
	iss, err := reg.Get(r.Context(), r.PathValue("issuer_id"))
	if err != nil {
		s.issuerError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, iss)
}

func (s *srv) retireIssuer(w http.ResponseWriter, r *http.Request) {
	reg, ok := s.issuerCaller(w, r)
	if !ok {
		return
	}
	iss, err := reg.Retire(r.Context(), r.PathValue("issuer_id"))
	if err != nil {
		s.issuerError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, iss)
}

// revokeCredential revokes one credential nonce of a payer. Any key may ask;
// the registry's owner (keys:admin, no organization) as it is, anyone else
// only with the payer's admin's signature, which the registry checks.
func (s *srv) revokeCredential(w http.ResponseWriter, r *http.Request) {
	caller := requestKey(r)
	if caller == nil {
		writeDetail(w, http.StatusForbidden, detailForbidden)
		return
	}
	revoker, ok := s.deps.Issuers.(CredentialRevoker)
	if !ok {
		writeDetail(w, http.StatusServiceUnavailable, detailUnavailable)
		return
	}
	var req api.RevocationRequest
	if err := read(w, r, SmallBodyBytes, &req, "nonce"); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := req.Validate(); err != nil {
		writeDetail(w, http.StatusBadRequest, err.Error())
		return
	}
	byOwner := caller.HasScope(apikey.ScopeKeysAdmin) && caller.Organization == ""
	if !byOwner && req.AdminSignature == "" {
		writeDetail(w, http.StatusForbidden, detailForbidden)
		return
	}
	rev, created, err := revoker.RevokeNonce(r.Context(), r.PathValue("issuer_id"), req, byOwner)
	if err != nil {
		s.issuerError(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, rev)
}
