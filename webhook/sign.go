package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// SecretPrefix starts every signing secret (Standard Webhooks).
const SecretPrefix = "whsec_"

// secretBytes is the length of a new secret's random part.
const secretBytes = 32

// Standard Webhooks header names.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

var errBadSecret = errors.New("webhook: secret must be whsec_ followed by Base64 of 24 to 64 bytes")

// newSecret draws a secret from r (crypto/rand in the product).
func newSecret(r io.Reader) (string, error) {
	b := make([]byte, secretBytes)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", fmt.Errorf("webhook: drawing a secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// sealedPrefix marks a stored secret encrypted with a SecretSealer.
const sealedPrefix = "sealed:"

var errSealed = errors.New("webhook: the endpoint secret is sealed and no sealer can open it")

// seal returns the stored form of a secret.
func seal(s SecretSealer, secret string) (string, error) {
	if s == nil {
		return secret, nil
	}
	tok, err := s.Encrypt([]byte(secret))
	if err != nil {
		return "", fmt.Errorf("webhook: sealing the secret: %w", err)
	}
	return sealedPrefix + string(tok), nil
}

// unseal returns the secret of a stored form.
func unseal(s SecretSealer, stored string) (string, error) {
	tok, ok := strings.CutPrefix(stored, sealedPrefix)
	if !ok {
		return stored, nil
	}
	if s == nil {
		return "", errSealed
	}
	b, err := s.Decrypt([]byte(tok), 0)
	if err != nil {
		return "", fmt.Errorf("%w: %v", errSealed, err)
	}
	return string(b), nil
}

// decodeSecret returns the key bytes of a whsec_ secret.
func decodeSecret(secret string) ([]byte, error) {
	raw, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return nil, errBadSecret
	}
	key, err := base64.StdEncoding.DecodeString(raw)
	if err != nil || len(key) < 24 || len(key) > 64 {
		return nil, errBadSecret
	}
	return key, nil
}

// Sign returns the webhook-signature value for a message: "v1," and the
// Base64 of HMAC-SHA256 over "id.timestamp.body" keyed with the secret's
// decoded bytes, as the Standard Webhooks specification defines it.
func Sign(secret, id string, ts time.Time, body []byte) (string, error) {
	key, err := decodeSecret(secret)
	if err != nil {
		return "", err
	}
	return "v1," + base64.StdEncoding.EncodeToString(mac(key, id, ts.Unix(), body)), nil
}

func mac(key []byte, id string, ts int64, body []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(id))
	h.Write([]byte{'.'})
	h.Write(strconv.AppendInt(nil, ts, 10))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}
