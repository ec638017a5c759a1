package credential

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/iden3/go-iden3-crypto/babyjub"
	"github.com/iden3/go-iden3-crypto/poseidon"
)

// Errors of a credential that does not hold.
var (
	ErrBadSignature    = errors.New("credential: the signature does not verify over the terms")
	ErrExpired         = errors.New("credential: expired")
	ErrSubjectMismatch = errors.New("credential: subject does not match the record's member")
	ErrMalformed       = errors.New("credential: malformed")
)

// Credential is signed coverage terms as a record carries it in
// coverage.credential.
type Credential struct {
	Schema    string `json:"schema"`
	Terms     Terms  `json:"terms"`
	Issuer    string `json:"issuer"`    // the payer's public key, iden3 compressed form (32 bytes, hex)
	Signature string `json:"signature"` // iden3 compressed signature (R8 compressed ‖ S little-endian, 64 bytes, hex)
}

// GenerateKey returns a new issuer private key (32 random bytes, as
// babyjub.NewRandPrivKey makes them).
func GenerateKey() (babyjub.PrivateKey, error) {
	var k babyjub.PrivateKey
	if _, err := rand.Read(k[:]); err != nil {
		return k, err
	}
	return k, nil
}

// ParsePrivateKey reads a private key written as 64 hex digits.
func ParsePrivateKey(s string) (babyjub.PrivateKey, error) {
	var k babyjub.PrivateKey
	b, err := hex.DecodeString(strings.TrimSpace(s))
	if err != nil || len(b) != 32 {
		return k, fmt.Errorf("%w: private key must be 32 bytes as 64 hex digits", ErrMalformed)
	}
	copy(k[:], b)
	return k, nil
}

// PublicKeyHex is the iden3 compressed form of k's public key, in hex.
func PublicKeyHex(k babyjub.PrivateKey) string {
	c := k.Public().Compress()
	return hex.EncodeToString(c[:])
}

// ParsePublicKey reads an iden3 compressed public key (64 hex digits).
func ParsePublicKey(s string) (*babyjub.PublicKey, error) {
	var c babyjub.PublicKeyComp
	b, err := hex.DecodeString(strings.TrimPrefix(strings.TrimSpace(s), "0x"))
	if err != nil || len(b) != 32 {
		return nil, fmt.Errorf("%w: issuer key must be 32 bytes as 64 hex digits", ErrMalformed)
	}
	copy(c[:], b)
	pk, err := c.Decompress()
	if err != nil {
		return nil, fmt.Errorf("%w: issuer key is not a point of Baby Jubjub: %w", ErrMalformed, err)
	}
	if SmallOrder(pk) {
		return nil, fmt.Errorf("%w: issuer key is a point of small order (8·A is the identity: any message would verify)", ErrMalformed)
	}
	return pk, nil
}

// SmallOrder reports whether pk is one of the eight points of Baby Jubjub
// whose order divides the cofactor 8. babyjub's VerifyPoseidon checks
// S·B8 = R8 + 8·h·A, so under such a key every message "verifies" with
// S·B8 = R8; no key made from a private key is one, and the circuits
// refuse them as well.
func SmallOrder(pk *babyjub.PublicKey) bool {
	return new(babyjub.Point).Mul(big.NewInt(8), pk.Point()).X.Sign() == 0
}

// IssuerKeyHash is Poseidon(Ax, Ay) of an issuer's public key: how the
// chain's issuer registry and the proofs name a payer.
func IssuerKeyHash(pk *babyjub.PublicKey) (*big.Int, error) {
	return poseidon.Hash([]*big.Int{pk.X, pk.Y})
}

// Sign signs t with k: babyjub SignPoseidon over Message(t).
func Sign(k babyjub.PrivateKey, t Terms) (*Credential, error) {
	msg, err := Message(t)
	if err != nil {
		return nil, err
	}
	sig := k.SignPoseidon(msg).Compress()
	return &Credential{Schema: Schema, Terms: t, Issuer: PublicKeyHex(k), Signature: hex.EncodeToString(sig[:])}, nil
}

// Parts returns the issuer's public key, the signature and the message, all
// checked for form (not the signature's validity).
func (c *Credential) Parts() (*babyjub.PublicKey, *babyjub.Signature, *big.Int, error) {
	if c.Schema != Schema {
		return nil, nil, nil, fmt.Errorf("%w: schema must be %q", ErrMalformed, Schema)
	}
	pk, err := ParsePublicKey(c.Issuer)
	if err != nil {
		return nil, nil, nil, err
	}
	b, err := hex.DecodeString(strings.TrimPrefix(c.Signature, "0x"))
	if err != nil || len(b) != 64 {
		return nil, nil, nil, fmt.Errorf("%w: signature must be 64 bytes as 128 hex digits", ErrMalformed)
	}
	var sc babyjub.SignatureComp
	copy(sc[:], b)
	sig, err := sc.Decompress()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: signature: %w", ErrMalformed, err)
	}
	if sig.S.Cmp(babyjub.SubOrder) >= 0 {
		return nil, nil, nil, fmt.Errorf("%w: signature scalar not below the subgroup order", ErrMalformed)
	}
	msg, err := Message(c.Terms)
	if err != nil {
		return nil, nil, nil, err
	}
	return pk, sig, msg, nil
}

// Verify checks the signature over the terms (babyjub VerifyPoseidon, with
// S below the subgroup order so a signature has one form).
func (c *Credential) Verify() error {
	pk, sig, msg, err := c.Parts()
	if err != nil {
		return err
	}
	if !pk.VerifyPoseidon(msg, sig) {
		return ErrBadSignature
	}
	return nil
}

// Check verifies c and that it holds for memberID on day: not expired (the
// expiry day itself still counts) and its subject commitment opens to
// memberID.
func (c *Credential) Check(memberID string, day time.Time) error {
	if err := c.Verify(); err != nil {
		return err
	}
	exp, err := time.Parse(time.DateOnly, c.Terms.Expires)
	if err != nil {
		return fmt.Errorf("%w: expires", ErrMalformed)
	}
	if day.UTC().Truncate(24 * time.Hour).After(exp) {
		return ErrExpired
	}
	if c.Terms.MemberID != memberID {
		return ErrSubjectMismatch
	}
	return nil
}
