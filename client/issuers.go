package client

import (
	"context"
	"iter"
	"net/http"

	"github.com/healthagents/healthagents/api"
)

// The payer (credential issuer) registry's wire types.
type (
	IssuerRequest       = api.IssuerRequest
	Issuer              = api.Issuer
	IssuerList          = api.IssuerList
	UnsignedTransaction = api.UnsignedTransaction
	RevocationRequest   = api.RevocationRequest
	Revocation          = api.Revocation
	Nonce               = api.Nonce
)

// RegisterIssuer calls POST /api/v1/issuers: the payer is kept and
// registered on chain by the registry's owner — sent (Issuer.TxHash) when
// the service holds the owner's key, else returned unsigned
// (Issuer.OwnerAction). It needs a keys:admin key bound to no organization.
func (c *Client) RegisterIssuer(ctx context.Context, req IssuerRequest) (*Issuer, error) {
	var out Issuer
	if err := c.do(ctx, call{method: http.MethodPost, path: "/api/v1/issuers", body: req, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListIssuers walks GET /api/v1/issuers page by page (100 a page): every
// payer, oldest first, with its status read from the chain.
func (c *Client) ListIssuers(ctx context.Context) iter.Seq2[Issuer, error] {
	return Paginate(ctx, MaxPageSize, c.ListIssuersPage)
}

// ListIssuersPage calls GET /api/v1/issuers for one page of the payers
// (offset from 0, limit 1..100).
func (c *Client) ListIssuersPage(ctx context.Context, offset, limit int) (Page[Issuer], error) {
	var out IssuerList
	if err := c.do(ctx, call{method: http.MethodGet, path: "/api/v1/issuers", query: offsetLimit(offset, limit), out: &out}); err != nil {
		return Page[Issuer]{}, err
	}
	return Page[Issuer]{Items: out.Issuers, Total: out.Total}, nil
}

// GetIssuer calls GET /api/v1/issuers/{issuer_id} (the payer's public key).
func (c *Client) GetIssuer(ctx context.Context, id string) (*Issuer, error) {
	var out Issuer
	if err := c.do(ctx, call{method: http.MethodGet, path: "/api/v1/issuers/" + escape(id), out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// RetireIssuer calls DELETE /api/v1/issuers/{issuer_id}: the payer's
// credentials are refused from the next block on.
func (c *Client) RetireIssuer(ctx context.Context, id string) (*Issuer, error) {
	var out Issuer
	if err := c.do(ctx, call{method: http.MethodDelete, path: "/api/v1/issuers/" + escape(id), out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}

// RevokeCredential calls POST /api/v1/issuers/{issuer_id}/revocations: the
// payer's credential revocation nonce req.Nonce is revoked on chain from
// the next block on, so decisions on that credential are refused (422,
// V1Code UNTRUSTED_CREDENTIAL) while earlier ones stay valid. A keys:admin
// key bound to no organization (the registry's owner) sends it as it is;
// any other key needs req.AdminSignature, the payer's admin_address's
// EIP-712 signature of the revocation (docs/credentials.md shows it with
// ethers; Go programs can use chain.RevocationTypedData). Status "revoked"
// (TxHash, RevokedInBlock) when the service sent it or it was revoked
// before; "awaiting_signature" with WalletAction, the unsigned transaction
// for the caller's wallet, when the service does not hold the owner's key.
func (c *Client) RevokeCredential(ctx context.Context, issuerID string, req RevocationRequest) (*Revocation, error) {
	var out Revocation
	if err := c.do(ctx, call{method: http.MethodPost, path: "/api/v1/issuers/" + escape(issuerID) + "/revocations", body: req, out: &out}); err != nil {
		return nil, err
	}
	return &out, nil
}
