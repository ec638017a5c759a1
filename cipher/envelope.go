package cipher

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/multiformats/go-multihash"
)

// MaxEncryptedSize is the largest encrypted_data [Keyring.Open] reads: 1 MiB of
// text, checked before any decoding. A token that size holds about 768 KiB of
// plaintext (less when it arrives Base64-wrapped a second time); [Seal] refuses
// plaintext whose token would exceed it.
const MaxEncryptedSize = 1 << 20

// MaxPatientIDLength bounds the envelope's patient_id, in bytes: 64, the
// bound of the service's other codes. A patient_id names the record in
// logs-free places (the keyed hash of webhooks and the audit log, the
// patient registry), never carries data, and must match the record inside.
const MaxPatientIDLength = 64

// Envelope is the PatientData object of every request; its JSON tags are the wire format.
type Envelope struct {
	PatientID     string `json:"patient_id"`
	EncryptedData string `json:"encrypted_data"`
	IPFSCID       string `json:"ipfs_cid"`
	DataHash      string `json:"data_hash"`
}

// DataHash returns the envelope's data_hash of plaintext: SHA-256 as 64
// lowercase hex digits.
func DataHash(plaintext []byte) string {
	sum := sha256.Sum256(plaintext)
	return hex.EncodeToString(sum[:])
}

// Seal encrypts plaintext with the first key of k and returns the envelope
// that [Keyring.Open] accepts: encrypted_data is the Fernet token text (URL-safe
// Base64), ipfs_cid is what `ipfs add --cid-version=1` gives for a file
// holding exactly that text, and data_hash is [DataHash] of plaintext.
//
// Errors: a *FieldError (ErrMissingField) for an empty patientID, an
// *EnvelopeError wrapping ErrInvalidPatientID for a patientID [Keyring.Open]
// would refuse, one wrapping ErrInvalidEncoding when the token would exceed
// MaxEncryptedSize, and a plain error for a keyring without keys or a failing
// random source.
func Seal(patientID string, plaintext []byte, k *Keyring) (Envelope, error) {
	if patientID == "" {
		return Envelope{}, &FieldError{Field: FieldPatientID}
	}
	if err := checkPatientID(patientID); err != nil {
		return Envelope{}, err
	}
	if k.Len() == 0 {
		return Envelope{}, errNoKeys
	}
	if tokenLen(len(plaintext)) > MaxEncryptedSize {
		return Envelope{}, &EnvelopeError{Field: FieldEncryptedData, Err: ErrInvalidEncoding, Reason: "plaintext too large: its token would exceed MaxEncryptedSize"}
	}
	tok, err := k.Encrypt(plaintext)
	if err != nil {
		return Envelope{}, err
	}
	c, err := CIDFor(tok)
	if err != nil {
		return Envelope{}, err
	}
	return Envelope{
		PatientID:     patientID,
		EncryptedData: string(tok),
		IPFSCID:       c.String(),
		DataHash:      DataHash(plaintext),
	}, nil
}

// Open checks env and returns its plaintext. The checks run in this order and
// the first failure is returned: a *FieldError for a missing field, otherwise
// an *EnvelopeError naming the field at fault; each wraps one sentinel:
//
//  1. ErrMissingField: patient_id, encrypted_data, ipfs_cid, data_hash empty
//     (in that order); ErrInvalidPatientID: patient_id longer than
//     MaxPatientIDLength bytes or holding a control character (Reason says
//     which, in the words of the service's 400 details: "is longer than 64
//     characters", "contains control characters");
//  2. ErrInvalidHashFormat: data_hash is not 64 lowercase hex digits;
//  3. ErrInvalidCID: ipfs_cid does not parse as a CID (v0 "Qm...", or v1 in
//     any multibase); ErrCIDUnchecked: it parses but could not be checked
//     against the bytes (identity or truncated multihash, a hash function
//     other than sha2-256, sha2-512, sha3-256, sha3-512, blake2b-256 and
//     blake3 over a raw block or sha2-256 over dag-pb, another codec);
//  4. ErrInvalidEncoding: encrypted_data is longer than MaxEncryptedSize, or is
//     neither a Fernet token nor Base64 (either alphabet, padded or not) of
//     a token's text;
//  5. ErrDecrypt: no key of the ring opens the token (or, with an envelope
//     TTL, it is stamped more than 60 s in the future); ErrEnvelopeExpired:
//     it opens but is older than the ring's envelope TTL (WithEnvelopeTTL;
//     without one, tokens never expire here);
//  6. ErrCIDMismatch: the CID's multihash, recomputed, addresses neither
//     encrypted_data as received nor the token text inside it (see
//     docs/decisions/cipher.md for what is recomputed);
//  7. ErrHashMismatch: SHA-256 of the plaintext is not data_hash (compared in
//     constant time).
//
// Whether patient_id matches the record inside is the caller's check. If ctx
// ends before decryption or before the CID is recomputed, Open returns
// ctx.Err() (wrapped). No error carries plaintext, key or ciphertext bytes.
func (k *Keyring) Open(ctx context.Context, env Envelope) ([]byte, error) {
	if k.Len() == 0 {
		return nil, errNoKeys
	}
	for _, f := range [...]struct{ name, value string }{
		{FieldPatientID, env.PatientID},
		{FieldEncryptedData, env.EncryptedData},
		{FieldIPFSCID, env.IPFSCID},
		{FieldDataHash, env.DataHash},
	} {
		if f.value == "" {
			return nil, &FieldError{Field: f.name}
		}
	}
	if err := checkPatientID(env.PatientID); err != nil {
		return nil, err
	}
	want, ok := parseDataHash(env.DataHash)
	if !ok {
		return nil, &EnvelopeError{Field: FieldDataHash, Err: ErrInvalidHashFormat, Reason: "want 64 lowercase hex digits"}
	}
	c, err := cid.Decode(env.IPFSCID)
	if err != nil {
		return nil, &EnvelopeError{Field: FieldIPFSCID, Err: ErrInvalidCID}
	}
	if reason := uncheckable(c); reason != "" {
		return nil, &EnvelopeError{Field: FieldIPFSCID, Err: ErrCIDUnchecked, Reason: reason}
	}
	if len(env.EncryptedData) > MaxEncryptedSize {
		return nil, &EnvelopeError{Field: FieldEncryptedData, Err: ErrInvalidEncoding, Reason: "larger than MaxEncryptedSize"}
	}
	raw, tokenText, err := parseEncrypted(env.EncryptedData)
	if err != nil {
		return nil, &EnvelopeError{Field: FieldEncryptedData, Err: err}
	}
	if err := ctx.Err(); err != nil {
		return nil, &ctxError{err}
	}
	now := k.clock()
	plain, err := k.open(raw, 0, now)
	if err != nil {
		return nil, &EnvelopeError{Field: FieldEncryptedData, Err: err}
	}
	if err := k.checkAge(raw, now); err != nil {
		clear(plain)
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		clear(plain)
		return nil, &ctxError{err}
	}
	if !cidAddresses(c, []byte(env.EncryptedData), tokenText) {
		clear(plain)
		return nil, &EnvelopeError{Field: FieldIPFSCID, Err: ErrCIDMismatch}
	}
	got := sha256.Sum256(plain)
	if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
		clear(plain)
		return nil, &EnvelopeError{Field: FieldDataHash, Err: ErrHashMismatch}
	}
	return plain, nil
}

// checkAge applies the envelope TTL to an authenticated token: its
// timestamp is checked only once the HMAC has vouched for it.
func (k *Keyring) checkAge(raw []byte, now time.Time) error {
	if k.envelopeTTL <= 0 {
		return nil
	}
	stamp := binary.BigEndian.Uint64(raw[tsOffset:])
	if stamp <= math.MaxInt64 && now.Unix()-int64(stamp) > int64(k.envelopeTTL/time.Second) {
		return &EnvelopeError{Field: FieldEncryptedData, Err: ErrEnvelopeExpired,
			Reason: "was sealed more than " + k.envelopeTTL.String() + " ago"}
	}
	if err := checkTime(stamp, k.envelopeTTL, now); err != nil {
		return &EnvelopeError{Field: FieldEncryptedData, Err: err}
	}
	return nil
}

// checkPatientID refuses a patient_id longer than MaxPatientIDLength bytes
// or holding a control character (C0 or DEL), as the service refuses such
// codes. Reason never repeats the id.
func checkPatientID(id string) error {
	if len(id) > MaxPatientIDLength {
		return &EnvelopeError{Field: FieldPatientID, Err: ErrInvalidPatientID, Reason: "is longer than 64 characters"}
	}
	for _, r := range id {
		if r < 0x20 || r == 0x7f {
			return &EnvelopeError{Field: FieldPatientID, Err: ErrInvalidPatientID, Reason: "contains control characters"}
		}
	}
	return nil
}

// ctxError wraps the context's error so the message says where it happened.
type ctxError struct{ err error }

func (e *ctxError) Error() string { return "cipher: open: " + e.err.Error() }
func (e *ctxError) Unwrap() error { return e.err }

func parseDataHash(s string) (sum [sha256.Size]byte, ok bool) {
	if len(s) != 2*sha256.Size {
		return sum, false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return sum, false
		}
	}
	_, err := hex.Decode(sum[:], []byte(s))
	return sum, err == nil
}

// parseEncrypted finds the binary Fernet token in encrypted_data, which is
// either the token's text or Base64 of that text, and returns the token and
// its text. The two cannot be confused: a token starts with the version byte
// 0x80, Base64 of a token's text decodes to ASCII starting "g". A string that
// decodes directly to a well-shaped token with another version byte is taken
// as a token, so that it fails as ErrDecrypt (unsupported version).
func parseEncrypted(s string) (raw, text []byte, err error) {
	direct, derr := decodeToken([]byte(s))
	if derr == nil && direct[0] == fernetVersion {
		return direct, []byte(s), nil
	}
	if inner, ok := decodeBase64(s); ok {
		if nested, nerr := decodeToken(inner); nerr == nil && (nested[0] == fernetVersion || derr != nil) {
			return nested, inner, nil
		}
	}
	if derr == nil {
		return direct, []byte(s), nil
	}
	var te *TokenError
	if errors.As(derr, &te) && te.Reason != "not Base64" {
		return nil, nil, derr // say why the token is malformed
	}
	return nil, nil, errToken(ErrInvalidEncoding, "neither a Fernet token nor Base64 of one")
}

// rawHashes are the hash functions a raw-block CID may use, with the
// full digest length `ipfs add --hash` gives (ipfs.AddOptionsFor's list).
var rawHashes = map[uint64]int{
	multihash.SHA2_256:         32,
	multihash.SHA2_512:         64,
	multihash.SHA3_256:         32,
	multihash.SHA3_512:         64,
	multihash.BLAKE2B_MIN + 31: 32,
	multihash.BLAKE3:           32,
}

// uncheckable says why c cannot be checked against bytes ("" when it can):
// the service recomputes raw blocks under rawHashes and dag-pb DAGs under
// sha2-256. Reason is fixed text.
func uncheckable(c cid.Cid) string {
	dmh, err := multihash.Decode(c.Hash())
	switch {
	case err != nil:
		return "has a malformed multihash"
	case dmh.Code == multihash.IDENTITY:
		return "is an identity CID: it holds bytes instead of addressing encrypted_data"
	case c.Type() == codecRaw:
		if n, ok := rawHashes[dmh.Code]; !ok || dmh.Length != n {
			return "uses a hash the service cannot check (sha2-256, sha2-512, sha3-256, sha3-512, blake2b-256 or blake3, full length)"
		}
	case c.Type() == codecDagPB:
		if dmh.Code != multihash.SHA2_256 || dmh.Length != sha256.Size {
			return "is a dag-pb CID not made with sha2-256"
		}
	default:
		return "uses a codec other than raw and dag-pb"
	}
	return ""
}

// cidAddresses reports whether c addresses one of the candidate byte
// strings. c has passed uncheckable: a raw block under one of rawHashes,
// or a dag-pb DAG under sha2-256, laid out as `ipfs add` does.
func cidAddresses(c cid.Cid, candidates ...[]byte) bool {
	dmh, err := multihash.Decode(c.Hash())
	if err != nil || uncheckable(c) != "" {
		return false
	}
	if c.Type() == codecRaw {
		for _, cand := range candidates {
			if sum, err := multihash.Sum(cand, dmh.Code, dmh.Length); err == nil && string(sum) == string(c.Hash()) {
				return true
			}
		}
		return false
	}
	layouts := []dagLayout{layoutPB, layoutV1}
	if c.Version() == 0 {
		layouts = []dagLayout{layoutV0}
	}
	for i, cand := range candidates {
		if i > 0 && string(cand) == string(candidates[0]) {
			continue
		}
		for _, l := range layouts {
			if root := buildDAG(cand, l).cid; root.Type() == c.Type() && string(root.Hash()) == string(c.Hash()) {
				return true
			}
		}
	}
	return false
}
