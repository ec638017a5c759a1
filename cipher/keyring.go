package cipher

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/fernet/fernet-go"
)

// Fernet token layout (https://github.com/fernet/spec/blob/master/Spec.md):
// version(1) | timestamp(8, big-endian Unix seconds) | IV(16) | ciphertext(n*16) | HMAC-SHA256(32).
const (
	fernetVersion  byte = 0x80
	tsOffset            = 1
	ivOffset            = tsOffset + 8
	payloadOffset       = ivOffset + aes.BlockSize
	fernetOverhead      = payloadOffset + sha256.Size    // 57
	minTokenLen         = fernetOverhead + aes.BlockSize // 73: padding adds at least one block
	maxClockSkew        = 60 * time.Second               // the spec's allowance for future timestamps
	keyLen              = len(fernet.Key{})              // 32: signing key then encryption key
	signKeyLen          = keyLen / 2                     // 16
)

// Keyring holds the Fernet keys of FERNET_KEY: the first key encrypts, every
// key is tried when decrypting, so keys can be rotated by prepending a new one.
// Build one with [ParseKeyring] or [NewKeyring]; the zero value has no keys and
// every operation on it fails. A Keyring is immutable and safe for concurrent
// use. It never prints its keys: String, GoString and every fmt verb show only
// how many keys it holds.
type Keyring struct {
	// keys returns the ring's own copies; keys()[0] encrypts. They sit behind
	// a func because fmt prints a func as an address under every verb, even
	// when a Keyring value is printed as a field of someone else's struct,
	// where no String or Format method can be called.
	keys func() []*fernet.Key

	// envelopeTTL > 0 makes Open refuse envelopes whose token is older
	// (WithEnvelopeTTL); Decrypt takes its own ttl.
	envelopeTTL time.Duration

	// Test hooks (nil in production): the clock and the IV source. They let
	// the tests reproduce the Fernet spec's generate vectors byte for byte.
	now  func() time.Time
	rand io.Reader
}

// WithEnvelopeTTL returns a ring with the same keys whose Open refuses an
// envelope whose Fernet token was made more than ttl ago (ENVELOPE_TTL) or
// is stamped more than 60 s in the future, with ErrEnvelopeExpired
// (respectively ErrDecrypt). ttl 0 removes the limit. Decrypt and Encrypt
// are unchanged: values the service seals itself are not envelopes.
func (k *Keyring) WithEnvelopeTTL(ttl time.Duration) *Keyring {
	c := *k
	c.envelopeTTL = max(ttl, 0)
	return &c
}

// EnvelopeTTL returns the limit set by WithEnvelopeTTL (0: none).
func (k *Keyring) EnvelopeTTL() time.Duration { return k.envelopeTTL }

// errNoKeys is returned by operations on a Keyring without keys.
var errNoKeys = errors.New("cipher: keyring has no keys")

// ParseKeyring parses FERNET_KEY: one or more keys separated by commas, each
// the URL-safe Base64 encoding of 32 bytes as Fernet implementations write it
// (standard Base64, and either alphabet without padding, are accepted too).
// Whitespace around a key is ignored; an empty entry is an error. Errors name
// the position of the bad key, never its text.
func ParseKeyring(s string) (*Keyring, error) {
	parts := strings.Split(s, ",")
	keys := make([]*fernet.Key, 0, len(parts))
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			return nil, fmt.Errorf("cipher: FERNET_KEY entry %d of %d is empty", i+1, len(parts))
		}
		b, ok := decodeBase64(p)
		if !ok {
			return nil, fmt.Errorf("cipher: FERNET_KEY entry %d of %d is not Base64", i+1, len(parts))
		}
		if len(b) != keyLen {
			return nil, fmt.Errorf("cipher: FERNET_KEY entry %d of %d decodes to %d bytes, want %d", i+1, len(parts), len(b), keyLen)
		}
		k := new(fernet.Key)
		copy(k[:], b)
		clear(b)
		keys = append(keys, k)
	}
	return newKeyring(keys), nil
}

func newKeyring(keys []*fernet.Key) *Keyring {
	return &Keyring{keys: func() []*fernet.Key { return keys }}
}

// NewKeyring returns a ring of copies of keys; keys[0] encrypts. At least one
// key is required and none may be nil.
func NewKeyring(keys ...*fernet.Key) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, errNoKeys
	}
	own := make([]*fernet.Key, len(keys))
	for i, k := range keys {
		if k == nil {
			return nil, fmt.Errorf("cipher: key %d of %d is nil", i+1, len(keys))
		}
		c := *k
		own[i] = &c
	}
	return newKeyring(own), nil
}

// GenerateKey returns a new random key from crypto/rand, encoded as
// FERNET_KEY expects it (URL-safe Base64 with padding, 44 characters).
func GenerateKey() (string, error) {
	var k fernet.Key
	if err := k.Generate(); err != nil {
		return "", fmt.Errorf("cipher: generate key: %w", err)
	}
	return k.Encode(), nil
}

// Len returns the number of keys in the ring.
func (k *Keyring) Len() int {
	if k == nil || k.keys == nil {
		return 0
	}
	return len(k.keys())
}

// String describes the ring without revealing any key, e.g.
// "cipher.Keyring(2 keys)".
func (k *Keyring) String() string {
	n := k.Len()
	if n == 1 {
		return "cipher.Keyring(1 key)"
	}
	return fmt.Sprintf("cipher.Keyring(%d keys)", n)
}

// GoString is String, so that %#v reveals no key either.
func (k *Keyring) GoString() string { return k.String() }

// Format writes String for every verb (%v, %+v, %#v, %x, %d, ...), so no
// formatting of a *Keyring can print key bytes.
func (k *Keyring) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, k.String()) }

func (k *Keyring) clock() time.Time {
	if k.now != nil {
		return k.now()
	}
	return time.Now()
}

func (k *Keyring) random() io.Reader {
	if k.rand != nil {
		return k.rand
	}
	return rand.Reader
}

// Encrypt returns a Fernet token of plaintext made with the first key of the
// ring, as text: URL-safe Base64 with padding, exactly what other Fernet
// implementations produce and accept.
func (k *Keyring) Encrypt(plaintext []byte) ([]byte, error) {
	if k.Len() == 0 {
		return nil, errNoKeys
	}
	var iv [aes.BlockSize]byte
	if _, err := io.ReadFull(k.random(), iv[:]); err != nil {
		return nil, fmt.Errorf("cipher: read IV: %w", err)
	}
	raw, err := sealToken(k.keys()[0], plaintext, iv[:], k.clock())
	if err != nil {
		return nil, err
	}
	tok := make([]byte, base64.URLEncoding.EncodedLen(len(raw)))
	base64.URLEncoding.Encode(tok, raw)
	return tok, nil
}

// tokenLen is the length of the token text Encrypt makes for n bytes of
// plaintext.
func tokenLen(n int) int {
	return base64.URLEncoding.EncodedLen(fernetOverhead + (n/aes.BlockSize+1)*aes.BlockSize)
}

// sealToken builds the binary token.
func sealToken(key *fernet.Key, msg, iv []byte, ts time.Time) ([]byte, error) {
	padded := (len(msg)/aes.BlockSize + 1) * aes.BlockSize
	tok := make([]byte, payloadOffset+padded, payloadOffset+padded+sha256.Size)
	tok[0] = fernetVersion
	binary.BigEndian.PutUint64(tok[tsOffset:], uint64(ts.Unix())) //nolint:gosec // the spec stores the signed Unix time as uint64
	copy(tok[ivOffset:], iv)
	p := tok[payloadOffset:]
	copy(p, msg)
	pad := byte(padded - len(msg))
	for i := len(msg); i < padded; i++ {
		p[i] = pad
	}
	block, err := aes.NewCipher(key[signKeyLen:])
	if err != nil { // not reached: the key half is always 16 bytes
		return nil, fmt.Errorf("cipher: %w", err)
	}
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(p, p)
	mac := hmac.New(sha256.New, key[:signKeyLen])
	mac.Write(tok)
	return mac.Sum(tok), nil
}

// Decrypt opens a Fernet token (its text form: URL-safe Base64, padded or not;
// the standard alphabet is accepted too) with the first key of the ring whose
// HMAC matches. ttl > 0 rejects tokens older than ttl or stamped more than 60 s
// in the future (the spec's rule); ttl 0 checks no timestamp.
//
// Errors are *TokenError wrapping ErrInvalidEncoding (not Base64, too short,
// payload not whole AES blocks) or ErrDecrypt (unsupported version, outside
// the TTL, no key's HMAC matches, bad padding).
func (k *Keyring) Decrypt(token []byte, ttl time.Duration) ([]byte, error) {
	if k.Len() == 0 {
		return nil, errNoKeys
	}
	raw, err := decodeToken(token)
	if err != nil {
		return nil, err
	}
	return k.open(raw, ttl, k.clock())
}

// decodeToken decodes a token's text and checks its shape (not its version,
// which is the decrypter's business).
func decodeToken(text []byte) ([]byte, error) {
	raw, ok := decodeBase64(text)
	if !ok {
		return nil, errToken(ErrInvalidEncoding, "not Base64")
	}
	if err := checkShape(raw); err != nil {
		return nil, err
	}
	return raw, nil
}

func checkShape(raw []byte) error {
	if len(raw) < minTokenLen {
		return errToken(ErrInvalidEncoding, "too short for a Fernet token")
	}
	if (len(raw)-fernetOverhead)%aes.BlockSize != 0 {
		return errToken(ErrInvalidEncoding, "payload is not a whole number of AES blocks")
	}
	return nil
}

// open verifies and decrypts a binary token whose shape checkShape accepted.
func (k *Keyring) open(raw []byte, ttl time.Duration, now time.Time) ([]byte, error) {
	if raw[0] != fernetVersion {
		return nil, errToken(ErrDecrypt, "unsupported token version")
	}
	if ttl > 0 {
		if err := checkTime(binary.BigEndian.Uint64(raw[tsOffset:]), ttl, now); err != nil {
			return nil, err
		}
	}
	n := len(raw) - sha256.Size
	var key *fernet.Key
	var sum [sha256.Size]byte
	for _, kk := range k.keys() {
		mac := hmac.New(sha256.New, kk[:signKeyLen])
		mac.Write(raw[:n])
		if subtle.ConstantTimeCompare(mac.Sum(sum[:0]), raw[n:]) == 1 {
			key = kk
			break
		}
	}
	if key == nil {
		return nil, errToken(ErrDecrypt, "no key of the ring matches the token's HMAC")
	}
	block, err := aes.NewCipher(key[signKeyLen:])
	if err != nil { // not reached: the key half is always 16 bytes
		return nil, errToken(ErrDecrypt, "bad key")
	}
	out := make([]byte, n-payloadOffset)
	cipher.NewCBCDecrypter(block, raw[ivOffset:payloadOffset]).CryptBlocks(out, raw[payloadOffset:n])
	pad := int(out[len(out)-1])
	if pad < 1 || pad > aes.BlockSize || subtle.ConstantTimeCompare(out[len(out)-pad:], padding(pad)) != 1 {
		clear(out)
		return nil, errToken(ErrDecrypt, "bad padding")
	}
	return out[:len(out)-pad], nil
}

func padding(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(n)
	}
	return b
}

// checkTime applies the spec's TTL rule in whole seconds without overflow.
func checkTime(stamp uint64, ttl time.Duration, now time.Time) error {
	nowS := now.Unix()
	skew := int64(maxClockSkew / time.Second)
	if stamp > math.MaxInt64 || (nowS < math.MaxInt64-skew && int64(stamp) > nowS+skew) {
		return errToken(ErrDecrypt, "token timestamp is too far in the future")
	}
	if age := nowS - int64(stamp); age > 0 && age > int64(ttl/time.Second) {
		return errToken(ErrDecrypt, "token expired")
	}
	return nil
}

// decodeBase64 decodes s in whichever of the four common Base64 forms it is
// written: URL-safe or standard alphabet, padded or not. Like encoding/base64,
// it ignores CR and LF, so line-wrapped text (as base64(1) writes it) decodes.
func decodeBase64[T string | []byte](s T) ([]byte, bool) {
	src := []byte(s)
	for _, enc := range []*base64.Encoding{base64.URLEncoding, base64.RawURLEncoding, base64.StdEncoding, base64.RawStdEncoding} {
		dst := make([]byte, enc.DecodedLen(len(src)))
		if n, err := enc.Decode(dst, src); err == nil {
			return dst[:n], true
		}
	}
	return nil, false
}
