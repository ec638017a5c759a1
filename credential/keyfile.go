package credential

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"

	"github.com/iden3/go-iden3-crypto/babyjub"
)

// LoadOrCreateKey reads an issuer private key (64 hex digits) from path, or
// creates one there (0600, in a 0700 directory) when the file does not
// exist. It is how the service keeps its own issuer key under DATA_DIR.
func LoadOrCreateKey(path string) (babyjub.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		return ParsePrivateKey(string(b))
	}
	if !errors.Is(err, os.ErrNotExist) {
		return babyjub.PrivateKey{}, fmt.Errorf("credential: read issuer key: %w", err)
	}
	k, err := GenerateKey()
	if err != nil {
		return k, fmt.Errorf("credential: generate issuer key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return k, fmt.Errorf("credential: issuer key dir: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return k, fmt.Errorf("credential: write issuer key: %w", err)
	}
	_, werr := f.WriteString(hex.EncodeToString(k[:]) + "\n")
	if err := errors.Join(werr, f.Close()); err != nil {
		return k, fmt.Errorf("credential: write issuer key: %w", err)
	}
	return k, nil
}

// RandomSalt is a fresh subject-commitment salt: a uniformly random field
// element, in decimal.
func RandomSalt() (string, error) {
	s, err := rand.Int(rand.Reader, fieldModulus)
	if err != nil {
		return "", err
	}
	return s.String(), nil
}

// KeyHash is the issuer key hash of the credential's issuer key.
func (c *Credential) KeyHash() (*big.Int, error) {
	pk, err := ParsePublicKey(c.Issuer)
	if err != nil {
		return nil, err
	}
	return IssuerKeyHash(pk)
}
