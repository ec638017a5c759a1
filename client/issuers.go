package client

import (
	"context"
	"net/http"

	"github.com/healthagents/healthagents/api"
)

// The payer (credential issuer) registry's wire types.
type (
	IssuerRequest       = api.IssuerRequest
	Issuer              = api.Issuer
	IssuerList          = api.IssuerList
	UnsignedTransaction = api.UnsignedTransaction
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

// ListIssuers calls GET /api/v1/issuers: every payer, oldest first, with
// its status read from the chain.
func (c *Client) ListIssuers(ctx context.Context) ([]Issuer, error) {
	var out IssuerList
	if err := c.do(ctx, call{method: http.MethodGet, path: "/api/v1/issuers", out: &out}); err != nil {
		return nil, err
	}
	return out.Issuers, nil
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
