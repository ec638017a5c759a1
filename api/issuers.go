package api

import (
	"encoding/hex"
	"errors"
	"time"

	"github.com/healthagents/healthagents/credential"
)

// The payer (issuer) registry: POST/GET/DELETE /api/v1/issuers.

// The payer registry's refusals: package issuers returns them, package
// server answers each with its status (404, 409, 403). They are declared
// here, with the registry's wire types, so that server needs none of the
// registry's chain code to recognise them.
var (
	// ErrIssuerNotFound: no issuer has the id.
	ErrIssuerNotFound = errors.New("issuer not found")
	// ErrIssuerRetired: the issuer was retired and cannot be registered again.
	ErrIssuerRetired = errors.New("the issuer was retired and cannot be registered again; a payer with a new key registers the new key")
	// ErrNotIssuerAdmin: a revocation neither from the registry's owner nor
	// signed by the payer's admin address (none registered, or another signer).
	ErrNotIssuerAdmin = errors.New("only the registry's owner or the payer's admin_address may revoke its credential nonces")
)

// IssuerRequest registers a payer whose coverage credentials the service
// accepts (COVERAGE_TRUST=registered) and proves.
type IssuerRequest struct {
	// PublicKey is the payer's Baby Jubjub public key, iden3 compressed
	// form, 64 hex digits (`healthagents issuer keygen` prints it).
	PublicKey string `json:"public_key" doc:"The payer's Baby Jubjub public key in iden3 compressed form: 64 hex digits."`
	Name      string `json:"name" doc:"A name for the payer, 1-100 characters; decisions proven with its credentials name it as their issuer."`
	// Admin, optional, is an Ethereum address (the payer's own) that may
	// revoke the payer's credential nonces on chain besides the owner.
	Admin string `json:"admin_address,omitempty" doc:"Optional Ethereum address that may revoke this payer's credential nonces on chain."`
}

// MaxIssuerName is the longest issuer name accepted.
const MaxIssuerName = 100

// Validate checks the key's form, the name and the admin address.
func (r IssuerRequest) Validate() error {
	if _, err := credential.ParsePublicKey(r.PublicKey); err != nil {
		return invalid(err, "field 'public_key' must be a Baby Jubjub public key in iden3 compressed form (64 hex digits)")
	}
	if r.Name == "" || len(r.Name) > MaxIssuerName {
		return invalid(nil, "field 'name' must be 1-%d characters", MaxIssuerName)
	}
	for _, c := range r.Name {
		if c < 0x20 || c == 0x7f {
			return invalid(nil, "field 'name' contains control characters")
		}
	}
	if r.Admin != "" && !isHexAddress(r.Admin) {
		return invalid(nil, "field 'admin_address' must be a hex Ethereum address (0x followed by 40 hex digits)")
	}
	return nil
}

// Issuer is a registered payer. Status is read from the chain: "active"
// (registered and not retired), "awaiting_owner" (the registry's owner has
// not signed the registration yet: OwnerAction holds it), "retired", or
// "retire_awaiting_owner".
type Issuer struct {
	IssuerID  string     `json:"issuer_id" doc:"The issuer's id: its public key (64 hex digits)."`
	Name      string     `json:"name"`
	PublicKey string     `json:"public_key"`
	KeyHash   string     `json:"issuer_key_hash" doc:"Poseidon(Ax, Ay) of the public key, decimal: how the chain and the proofs name the issuer."`
	Admin     string     `json:"admin_address,omitempty"`
	Status    string     `json:"status" enum:"active,awaiting_owner,retired,retire_awaiting_owner"`
	CreatedAt time.Time  `json:"created_at"`
	RetiredAt *time.Time `json:"retired_at,omitempty"`
	// TxHash is the owner's transaction that registered or retired the
	// issuer, when the service sent it just now.
	TxHash string `json:"tx_hash,omitempty"`
	// OwnerAction is the transaction the registry's owner must sign, when
	// the service does not hold the owner's key (CHAIN_OWNER).
	OwnerAction *UnsignedTransaction `json:"owner_action,omitempty"`
}

// IssuerList answers GET /api/v1/issuers: the page asked for (every
// payer without offset and limit) and how many payers there are.
type IssuerList struct {
	Issuers []Issuer `json:"issuers"`
	Total   int      `json:"total" doc:"Payers in the whole list."`
}

// UnsignedTransaction is an owner action prepared for a cold wallet: an
// unsigned EIP-1559 transaction.
type UnsignedTransaction struct {
	Summary string `json:"summary" doc:"The contract call, e.g. registerIssuer(…)."`
	ChainID string `json:"chain_id"`
	From    string `json:"from"`
	To      string `json:"to"`
	Nonce   uint64 `json:"nonce"`
	Gas     uint64 `json:"gas"`
	Data    string `json:"data"`
	RLP     string `json:"unsigned_rlp" doc:"The unsigned transaction, RLP-encoded (typed envelope), hex: what a wallet signs."`
}

// isHexAddress reports whether s is 0x and 40 hex digits (go-ethereum's
// common.IsHexAddress with the 0x required, without importing it here).
func isHexAddress(s string) bool {
	if len(s) != 42 || (s[:2] != "0x" && s[:2] != "0X") {
		return false
	}
	_, err := hex.DecodeString(s[2:])
	return err == nil
}
