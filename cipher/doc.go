// Package cipher opens and seals the PatientData envelope of the service
// contract: a patient code, the medical record encrypted as a Fernet token,
// the content identifier (CID) of that ciphertext in IPFS, and the SHA-256 of
// the plaintext.
//
// A [Keyring] holds the Fernet keys of FERNET_KEY (comma-separated; the first
// encrypts, all decrypt, so keys rotate by prepending). [Keyring.Open] checks an
// [Envelope] field by field and returns the plaintext, or an error wrapping
// one sentinel (ErrMissingField through a [*FieldError]; ErrInvalidHashFormat,
// ErrInvalidCID, ErrInvalidEncoding, ErrDecrypt, ErrCIDMismatch or
// ErrHashMismatch through an [*EnvelopeError]) that a server maps to a status
// with errors.Is. [Seal] builds
// an envelope that Open accepts, with the CID `ipfs add --cid-version=1` gives
// for the token text ([CIDFor]).
//
// Fernet (https://github.com/fernet/spec) is implemented here on the standard
// library's AES-CBC and HMAC-SHA256, with the key type of
// github.com/fernet/fernet-go: unlike fernet-go's functions it reports why a
// token fails, takes an injectable clock, rejects malformed Base64 instead of
// decoding a prefix, and checks PKCS#7 padding strictly. The spec's own test
// vectors and round trips against fernet-go keep it honest.
//
// CIDs are parsed with github.com/ipfs/go-cid. Where the multihash can be
// recomputed (sha2-256 over a raw block, or over the dag-pb UnixFS blocks that
// `ipfs add` builds with its default chunking and balanced layout), Open
// requires it to address the ciphertext; docs/decisions/cipher.md gives the
// details and the reasons. Nothing here does network I/O: fetching and pinning
// by CID belong to the IPFS client.
//
// No error or String of this package contains plaintext, key material or
// ciphertext.
package cipher
