package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"hash/crc32"
	"strings"
)

// Env is a key's environment, the part of its prefix after "sk_".
type Env string

// The two key environments, named by the key's prefix.
const (
	Dev  Env = "dev"  // sk_dev_: development, refused by a production server
	Live Env = "live" // sk_live_: production, only over HTTPS
)

// Prefix returns "sk_dev_" or "sk_live_".
func (e Env) Prefix() string { return "sk_" + string(e) + "_" }

// Valid reports whether e is Dev or Live.
func (e Env) Valid() bool { return e == Dev || e == Live }

// Layout of a key string:
//
//	sk_<env>_<id>_<secret><checksum>
//
// id is IDLen base62 characters (public: it names the key in URLs, lists
// and logs), secret is SecretLen base62 characters (≈190 bits from
// crypto/rand), and checksum is the CRC-32 (IEEE) of everything before it,
// as ChecksumLen base62 digits, zero-padded. A live key is 57 characters.
const (
	IDLen       = 10
	SecretLen   = 32
	ChecksumLen = 6
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// Token is a syntactically valid key string, split into its parts.
type Token struct {
	Env    Env
	ID     string
	Secret string
	raw    string
}

// String returns the whole key string. Never log it.
func (t Token) String() string { return t.raw }

// Hash returns the SHA-256 of the whole key string: the only form stored.
func (t Token) Hash() [32]byte { return sha256.Sum256([]byte(t.raw)) }

// Parse checks a key string's shape and checksum without any database: a
// scanner (or a log filter) can reject a fake or mistyped key offline. An
// error wraps ErrInvalid and never contains the input.
func Parse(raw string) (Token, error) {
	var env Env
	switch {
	case strings.HasPrefix(raw, Live.Prefix()):
		env = Live
	case strings.HasPrefix(raw, Dev.Prefix()):
		env = Dev
	default:
		return Token{}, fmt.Errorf("%w: unknown key prefix", ErrInvalid)
	}
	rest := raw[len(env.Prefix()):]
	if len(rest) != IDLen+1+SecretLen+ChecksumLen || rest[IDLen] != '_' {
		return Token{}, fmt.Errorf("%w: wrong key length or layout", ErrInvalid)
	}
	id, body, sum := rest[:IDLen], rest[IDLen+1:IDLen+1+SecretLen], rest[IDLen+1+SecretLen:]
	if !isBase62(id) || !isBase62(body) || !isBase62(sum) {
		return Token{}, fmt.Errorf("%w: invalid character in key", ErrInvalid)
	}
	if sum != checksum(raw[:len(raw)-ChecksumLen]) {
		return Token{}, fmt.Errorf("%w: key checksum mismatch", ErrInvalid)
	}
	return Token{Env: env, ID: id, Secret: body, raw: raw}, nil
}

// newToken draws a fresh key of the given environment from crypto/rand.
func newToken(env Env) (Token, error) {
	if !env.Valid() {
		return Token{}, fmt.Errorf("apikey: unknown environment %q", env)
	}
	id, err := randomBase62(IDLen)
	if err != nil {
		return Token{}, err
	}
	secret, err := randomBase62(SecretLen)
	if err != nil {
		return Token{}, err
	}
	head := env.Prefix() + id + "_" + secret
	return Token{Env: env, ID: id, Secret: secret, raw: head + checksum(head)}, nil
}

// randomBase62 draws n uniform base62 characters from crypto/rand.
func randomBase62(n int) (string, error) {
	out := make([]byte, n)
	buf := make([]byte, n+n/2)
	for i := 0; i < n; {
		if _, err := rand.Read(buf); err != nil {
			return "", fmt.Errorf("apikey: reading randomness: %w", err)
		}
		for _, b := range buf {
			if b >= 248 { // 248 = 4*62: reject to keep the draw uniform
				continue
			}
			out[i] = base62[b%62]
			if i++; i == n {
				break
			}
		}
	}
	return string(out), nil
}

func checksum(s string) string {
	v := crc32.ChecksumIEEE([]byte(s))
	var b [ChecksumLen]byte
	for i := ChecksumLen - 1; i >= 0; i-- {
		b[i] = base62[v%62]
		v /= 62
	}
	return string(b[:])
}

func isBase62(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return true
}

// ValidID reports whether s has the shape of a key id, so handlers can
// reject garbage path segments before any lookup.
func ValidID(s string) bool { return len(s) == IDLen && isBase62(s) }
