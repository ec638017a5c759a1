package chain

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"strconv"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
)

// A payer's admin asks the service to revoke one of the payer's credential
// nonces by signing this EIP-712 message with its admin address
// (eth_signTypedData_v4, ethers' signTypedData): the same authority the
// GovernedRegistry's revokeNonce gives that address, for this registry on
// this chain only. Replaying it revokes the same nonce again: nothing.
// docs/decisions/governance.md, "Revoking one credential".
const (
	RevocationDomainName    = "healthagents GovernedRegistry"
	RevocationDomainVersion = "1"
	RevocationPrimaryType   = "RevokeNonce"
)

// ErrBadRevocationSignature reports an admin signature that is not a
// 65-byte secp256k1 signature of the revocation message.
var ErrBadRevocationSignature = errors.New("chain: the admin signature is not a signature of the revocation message")

// RevocationTypedData is the EIP-712 message revoking nonce of the issuer
// keyHash in the GovernedRegistry at registry on chain chainID.
func RevocationTypedData(chainID *big.Int, registry common.Address, keyHash *big.Int, nonce uint64) apitypes.TypedData {
	return apitypes.TypedData{
		Types: apitypes.Types{
			"EIP712Domain": {
				{Name: "name", Type: "string"}, {Name: "version", Type: "string"},
				{Name: "chainId", Type: "uint256"}, {Name: "verifyingContract", Type: "address"},
			},
			RevocationPrimaryType: {{Name: "issuerKeyHash", Type: "uint256"}, {Name: "nonce", Type: "uint64"}},
		},
		PrimaryType: RevocationPrimaryType,
		Domain: apitypes.TypedDataDomain{
			Name: RevocationDomainName, Version: RevocationDomainVersion,
			ChainId: (*math.HexOrDecimal256)(new(big.Int).Set(chainID)), VerifyingContract: registry.Hex(),
		},
		Message: apitypes.TypedDataMessage{
			"issuerKeyHash": keyHash.String(),
			"nonce":         strconv.FormatUint(nonce, 10),
		},
	}
}

// RevocationSigner returns the address whose signature sig (r ‖ s ‖ v,
// v 27/28 as wallets write it, or 0/1) is over td.
func RevocationSigner(td apitypes.TypedData, sig []byte) (common.Address, error) {
	if len(sig) != crypto.SignatureLength {
		return common.Address{}, ErrBadRevocationSignature
	}
	hash, _, err := apitypes.TypedDataAndHash(td)
	if err != nil {
		return common.Address{}, fmt.Errorf("chain: revocation message: %w", err)
	}
	s := common.CopyBytes(sig)
	if s[64] >= 27 {
		s[64] -= 27
	}
	if s[64] > 1 {
		return common.Address{}, ErrBadRevocationSignature
	}
	pub, err := crypto.SigToPub(hash, s)
	if err != nil {
		return common.Address{}, fmt.Errorf("%w: %w", ErrBadRevocationSignature, err)
	}
	return crypto.PubkeyToAddress(*pub), nil
}

// SignRevocation signs td with key as a wallet's eth_signTypedData_v4
// does: r ‖ s ‖ v with v 27 or 28, 0x-hex. A payer's admin tool in Go uses
// it; the service only checks signatures (RevocationSigner).
func SignRevocation(td apitypes.TypedData, key *ecdsa.PrivateKey) (string, error) {
	hash, _, err := apitypes.TypedDataAndHash(td)
	if err != nil {
		return "", fmt.Errorf("chain: revocation message: %w", err)
	}
	sig, err := crypto.Sign(hash, key)
	if err != nil {
		return "", fmt.Errorf("chain: sign revocation: %w", err)
	}
	sig[64] += 27
	return hexutil.Encode(sig), nil
}

// RevokedIn is the block in which the issuer's credential nonce was
// revoked, 0 when it is not.
func (l *Ledger) RevokedIn(ctx context.Context, keyHash *big.Int, nonce uint64) (uint64, error) {
	at, err := NewRegistryView(l.client, l.Registry()).RevokedIn(ctx, keyHash, nonce)
	if err != nil {
		return 0, unavailable(err)
	}
	return at, nil
}

// RevokeNonce revokes an issuer's credential nonce from the next block on:
// sent with the owner's key when the Ledger holds it, else prepared as an
// unsigned transaction from wallet (the owner, or the issuer's admin: the
// registry takes it from either). Nothing to do when it is revoked already.
func (l *Ledger) RevokeNonce(ctx context.Context, keyHash *big.Int, nonce uint64, wallet common.Address) (Governance, error) {
	at, err := l.RevokedIn(ctx, keyHash, nonce)
	if err != nil {
		return Governance{}, err
	}
	if at != 0 {
		return Governance{}, nil
	}
	a := l.Governed().RevokeNonce(keyHash, nonce)
	if l.HoldsOwnerKey() {
		return l.Govern(ctx, a)
	}
	u, err := l.Governed().Unsigned(ctx, wallet, a)
	if err != nil {
		return Governance{}, err
	}
	return Governance{Unsigned: &u}, nil
}
