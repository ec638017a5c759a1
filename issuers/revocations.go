package issuers

import (
	"context"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/healthagents/healthagents/api"
	"github.com/healthagents/healthagents/chain"
)

// ErrNotAdmin: a revocation neither from the registry's owner nor signed by
// the payer's admin address (none registered, or another signer).
// It is api.ErrNotIssuerAdmin.
var ErrNotAdmin = api.ErrNotIssuerAdmin

// RevokeNonce revokes nonce req.Nonce of the payer id on chain, from the
// next block on: for the registry's owner (byOwner) as it is, otherwise
// only with req.AdminSignature, the payer's on-chain admin's EIP-712
// signature of the revocation (chain.RevocationTypedData). The service
// sends it with the owner's key when it holds it; otherwise the answer is
// the unsigned transaction for the caller's wallet (the owner's, or the
// admin's: the registry takes revokeNonce from either). A nonce revoked
// before is reported with its block and created false. req must be valid
// (api.RevocationRequest.Validate).
func (g *Registry) RevokeNonce(ctx context.Context, id string, req api.RevocationRequest, byOwner bool) (api.Revocation, bool, error) {
	r, err := g.store.Issuer(ctx, strings.ToLower(id))
	if err != nil {
		return api.Revocation{}, false, err
	}
	h, ok := new(big.Int).SetString(r.KeyHash, 10)
	if !ok {
		return api.Revocation{}, false, fmt.Errorf("issuers: stored key hash of %s is not decimal", r.ID)
	}
	nonce := uint64(req.Nonce)
	wallet := g.chain.Owner()
	if req.AdminSignature != "" {
		if wallet, err = g.admin(ctx, h, nonce, req.AdminSignature); err != nil {
			return api.Revocation{}, false, err
		}
	} else if !byOwner {
		return api.Revocation{}, false, ErrNotAdmin
	}
	out := api.Revocation{IssuerID: r.ID, KeyHash: r.KeyHash, Nonce: req.Nonce}
	at, err := g.chain.RevokedIn(ctx, h, nonce)
	if err != nil {
		return api.Revocation{}, false, fmt.Errorf("issuers: read the chain: %w", err)
	}
	if at != 0 {
		out.Status, out.RevokedInBlock = "revoked", at
		return out, false, nil
	}
	gov, err := g.chain.RevokeNonce(ctx, h, nonce, wallet)
	if err != nil {
		return api.Revocation{}, false, fmt.Errorf("issuers: revoke on chain: %w", err)
	}
	switch {
	case gov.Receipt != nil:
		out.Status, out.TxHash = "revoked", gov.Receipt.TxHash.Hex()
		out.RevokedInBlock = gov.Receipt.BlockNumber.Uint64()
	case gov.Unsigned != nil:
		out.Status, out.WalletAction = "awaiting_signature", unsignedView(gov.Unsigned)
	default: // revoked meanwhile (another replica, the admin's own wallet)
		if out.RevokedInBlock, err = g.chain.RevokedIn(ctx, h, nonce); err != nil {
			return api.Revocation{}, false, fmt.Errorf("issuers: read the chain: %w", err)
		}
		out.Status = "revoked"
		return out, false, nil
	}
	return out, true, nil
}

// admin checks sig is the EIP-712 signature of the revocation by the
// issuer's admin address on chain, and returns that address.
func (g *Registry) admin(ctx context.Context, keyHash *big.Int, nonce uint64, sig string) (common.Address, error) {
	st, err := g.chain.Issuer(ctx, keyHash)
	if err != nil {
		return common.Address{}, fmt.Errorf("issuers: read the chain: %w", err)
	}
	if st.Admin == (common.Address{}) {
		return common.Address{}, fmt.Errorf("%w: the payer has no admin_address on chain", ErrNotAdmin)
	}
	raw, err := hexutil.Decode(sig)
	if err != nil {
		return common.Address{}, fmt.Errorf("%w: %w", ErrNotAdmin, err)
	}
	signer, err := chain.RevocationSigner(chain.RevocationTypedData(g.chain.ChainID(), g.chain.Registry(), keyHash, nonce), raw)
	if err != nil {
		return common.Address{}, fmt.Errorf("%w: %w", ErrNotAdmin, err)
	}
	if signer != st.Admin {
		return common.Address{}, fmt.Errorf("%w: admin_signature is not the payer's admin_address's signature of this revocation", ErrNotAdmin)
	}
	return signer, nil
}
