package api

import (
	"encoding/hex"
	"encoding/json"
	"strconv"
)

// A payer revokes one of its coverage credentials:
// POST /api/v1/issuers/{issuer_id}/revocations.

// RevocationRequest revokes the credential nonce Nonce of a payer. The
// registry's owner (a keys:admin key bound to no organization) sends it as
// it is; the payer's admin adds AdminSignature, its EIP-712 signature of
// the revocation (docs/credentials.md, "Revoking one credential").
type RevocationRequest struct {
	Nonce          Nonce  `json:"nonce" doc:"The credential's revocation_nonce (its terms' revocation_nonce, the statement opening's revocation_nonce): an integer from 0 to 18446744073709551615, as a JSON number or a decimal string (the string keeps nonces above 2^53 exact in JavaScript)." example:"7"`
	AdminSignature string `json:"admin_signature,omitempty" doc:"The payer's admin_address's EIP-712 signature (eth_signTypedData_v4; 65 bytes r‖s‖v, 0x-hex) of RevokeNonce{issuerKeyHash, nonce} in the domain {name \"healthagents GovernedRegistry\", version \"1\", chainId, verifyingContract: the registry} (GET /status blockchain.chain_id and blockchain.registry). Needed unless the caller is the registry's owner."`
}

// Validate checks the signature's form (the nonce was checked when read).
func (r RevocationRequest) Validate() error {
	if r.AdminSignature == "" {
		return nil
	}
	s := r.AdminSignature
	if len(s) != 132 || (s[:2] != "0x" && s[:2] != "0X") {
		return invalid(nil, "field 'admin_signature' must be a 65-byte signature, 0x followed by 130 hex digits")
	}
	if _, err := hex.DecodeString(s[2:]); err != nil {
		return invalid(err, "field 'admin_signature' must be a 65-byte signature, 0x followed by 130 hex digits")
	}
	return nil
}

// Nonce is a coverage credential's revocation nonce, an unsigned 64-bit
// integer. It is read from a JSON number or a decimal string, digit by
// digit (never through a float, so every value up to 2^64-1 is exact), and
// written as a decimal string.
type Nonce uint64

// errNonce is the refusal of a nonce that is not an unsigned 64-bit integer.
func errNonce(err error) error {
	return invalid(err, "field 'nonce' must be an integer from 0 to 18446744073709551615 (a JSON number or a decimal string)")
}

// UnmarshalJSON reads a JSON number or a decimal string; a sign, a
// fraction, an exponent or a value above 2^64-1 is a *ValidationError.
func (n *Nonce) UnmarshalJSON(b []byte) error {
	s := string(b)
	switch {
	case s == "null":
		return nil
	case len(s) > 0 && s[0] == '"':
		if err := json.Unmarshal(b, &s); err != nil {
			return errNonce(err)
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return errNonce(err)
	}
	*n = Nonce(v)
	return nil
}

// MarshalJSON writes the nonce as a decimal string.
func (n Nonce) MarshalJSON() ([]byte, error) {
	return []byte(`"` + strconv.FormatUint(uint64(n), 10) + `"`), nil
}

// Revocation answers a revocation. Status "revoked": the nonce is revoked
// on chain from block RevokedInBlock on (just now, by TxHash, or before:
// 200); decisions recorded in that block or later are refused, earlier
// ones stay valid at their blocks (verify-decision says "revoked later").
// Status "awaiting_signature": the service does not hold the registry
// owner's key, and WalletAction is the transaction for the wallet of its
// From (the owner, or the payer's admin) to sign and send.
type Revocation struct {
	IssuerID       string               `json:"issuer_id" doc:"The payer's id: its public key (64 hex digits)."`
	KeyHash        string               `json:"issuer_key_hash" doc:"Poseidon(Ax, Ay) of the payer's key, decimal."`
	Nonce          Nonce                `json:"nonce" doc:"The revoked nonce, as a decimal string."`
	Status         string               `json:"status" enum:"revoked,awaiting_signature"`
	RevokedInBlock uint64               `json:"revoked_in_block,omitempty" doc:"The block from which the nonce is revoked: statements recorded in it or later are refused."`
	TxHash         string               `json:"tx_hash,omitempty" doc:"The revokeNonce transaction, when the service sent it just now."`
	WalletAction   *UnsignedTransaction `json:"wallet_action,omitempty" doc:"The unsigned revokeNonce transaction for the wallet of its from address (the registry's owner, or the payer's admin), when the service does not hold the owner's key."`
}
