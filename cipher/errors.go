package cipher

import (
	"errors"
	"strings"
)

// Sentinel errors. Every error returned by [Keyring.Open] wraps exactly one of
// them (or the context's error when ctx ends first), so a caller can map them
// with errors.Is: [ErrMissingField] through a *FieldError, the others through
// an *EnvelopeError. Their texts, and the texts of the typed errors that wrap
// them, never contain plaintext, key material or ciphertext.
var (
	// ErrMissingField: a required envelope field is empty.
	ErrMissingField = errors.New("missing field")
	// ErrInvalidPatientID: patient_id is longer than MaxPatientIDLength
	// bytes or holds a control character.
	ErrInvalidPatientID = errors.New("invalid patient_id")
	// ErrInvalidHashFormat: data_hash is not exactly 64 lowercase hex digits.
	ErrInvalidHashFormat = errors.New("invalid data_hash format")
	// ErrInvalidCID: ipfs_cid is not a CID.
	ErrInvalidCID = errors.New("invalid CID")
	// ErrInvalidEncoding: encrypted_data is neither a Fernet token nor Base64
	// text of one, or it is larger than MaxEncryptedSize.
	ErrInvalidEncoding = errors.New("invalid encrypted data encoding")
	// ErrDecrypt: a well-formed token that no key of the ring opens (wrong key,
	// bad HMAC, unsupported version, bad padding, or outside its TTL).
	ErrDecrypt = errors.New("decryption failed")
	// ErrEnvelopeExpired: the token opened, but it was made longer ago than
	// the ring's envelope TTL (Keyring.WithEnvelopeTTL, ENVELOPE_TTL).
	ErrEnvelopeExpired = errors.New("envelope expired")
	// ErrCIDUnchecked: ipfs_cid is a CID that cannot address encrypted_data
	// in a way the service can verify: an identity multihash (it holds
	// bytes, it addresses nothing), a truncated digest, an unsupported hash
	// function, or a codec other than raw and dag-pb.
	ErrCIDUnchecked = errors.New("CID cannot be checked against the encrypted data")
	// ErrCIDMismatch: the CID's multihash, recomputed from the stored bytes,
	// differs from the one in ipfs_cid.
	ErrCIDMismatch = errors.New("CID does not address the encrypted data")
	// ErrHashMismatch: SHA-256 of the plaintext differs from data_hash.
	ErrHashMismatch = errors.New("data hash mismatch")
)

// Envelope field names, as in the JSON wire format.
const (
	FieldPatientID     = "patient_id"
	FieldEncryptedData = "encrypted_data"
	FieldIPFSCID       = "ipfs_cid"
	FieldDataHash      = "data_hash"
)

// FieldError reports an empty required envelope field; it wraps
// [ErrMissingField]. It is returned for nothing else, so errors.As with a
// *FieldError means "a required field is missing".
type FieldError struct {
	Field string // JSON name: patient_id, encrypted_data, ipfs_cid or data_hash
}

func (e *FieldError) Error() string { return "cipher: " + e.Field + ": missing field" }

// Unwrap returns ErrMissingField.
func (e *FieldError) Unwrap() error { return ErrMissingField }

// EnvelopeError is the error type of every other failed check of
// [Keyring.Open] (and of [Seal]'s size limit): it names the envelope field at
// fault and wraps exactly one sentinel, directly or through a *TokenError.
// Reason is fixed text and never contains data from the envelope.
type EnvelopeError struct {
	Field  string // JSON name of the field at fault
	Err    error  // the sentinel, or a *TokenError wrapping it
	Reason string // optional fixed detail, e.g. "larger than MaxEncryptedSize"
}

func (e *EnvelopeError) Error() string {
	var b strings.Builder
	b.WriteString("cipher: ")
	b.WriteString(e.Field)
	b.WriteString(": ")
	reason := e.Reason
	var te *TokenError
	switch {
	case errors.As(e.Err, &te):
		b.WriteString(te.Err.Error())
		if reason == "" {
			reason = te.Reason
		}
	case e.Err != nil:
		b.WriteString(e.Err.Error())
	default:
		b.WriteString("invalid")
	}
	if reason != "" {
		b.WriteString(" (")
		b.WriteString(reason)
		b.WriteString(")")
	}
	return b.String()
}

// Unwrap returns the wrapped error.
func (e *EnvelopeError) Unwrap() error { return e.Err }

// TokenError is the error type of [Keyring.Decrypt]: it wraps
// [ErrInvalidEncoding] (not a structurally valid token) or [ErrDecrypt] (no key
// opens it) and says why in fixed words.
type TokenError struct {
	Err    error  // ErrInvalidEncoding or ErrDecrypt
	Reason string // fixed text such as "bad HMAC for every key"
}

func (e *TokenError) Error() string {
	if e.Reason == "" {
		return "cipher: " + e.Err.Error()
	}
	return "cipher: " + e.Err.Error() + ": " + e.Reason
}

// Unwrap returns the wrapped sentinel.
func (e *TokenError) Unwrap() error { return e.Err }

// errToken returns a *TokenError; reason must be fixed text, never data.
func errToken(sentinel error, reason string) error {
	return &TokenError{Err: sentinel, Reason: reason}
}
