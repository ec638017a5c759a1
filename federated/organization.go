package federated

import (
	"context"
	"crypto/ecdh"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// ErrOrganizationNotFound is returned by an OrganizationRegistry for an
// organization never registered.
var ErrOrganizationNotFound = errors.New("federated: organization not registered")

// Organization is a registered federated participant. OrganizationID is the
// organization of the registering API key.
type Organization struct {
	OrganizationID   string    `json:"organization_id"`
	OrganizationName string    `json:"organization_name"`
	Endpoint         string    `json:"endpoint"`
	EncryptionKey    string    `json:"encryption_key" doc:"X25519 public key, 64 lowercase hex digits."`
	CreatedAt        time.Time `json:"created_at"`
	UpdatedAt        time.Time `json:"updated_at"`
}

// OrganizationRegistry keeps the registered organizations; package store
// implements it.
type OrganizationRegistry interface {
	// RegisterOrganization inserts or replaces o (keyed by its ID) and
	// reports whether it was new. It keeps CreatedAt of an existing entry.
	RegisterOrganization(ctx context.Context, o Organization) (created bool, err error)
	// Organization returns the registration of id or ErrOrganizationNotFound.
	Organization(ctx context.Context, id string) (Organization, error)
}

// FieldError names a field of a registration that breaks its rule: "field
// Field must be Rule".
type FieldError struct {
	Field, Rule string
	Err         error // the cause, if any
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("federated: field %s must be %s", e.Field, e.Rule)
}

func (e *FieldError) Unwrap() error { return e.Err }

// NewOrganization checks a registration of organization id and normalizes
// it: a trimmed, printable name of 1-200 characters; an http(s) URL with a
// host and no user info, or none; an X25519 public key, kept as lowercase
// hex.
func NewOrganization(id, name, endpoint, encryptionKey string) (Organization, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 200 || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return Organization{}, &FieldError{Field: "organization_name", Rule: "1-200 printable characters"}
	}
	if endpoint = strings.TrimSpace(endpoint); endpoint != "" {
		u, err := url.Parse(endpoint)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || len(endpoint) > 2048 {
			return Organization{}, &FieldError{Field: "endpoint", Rule: "an http(s) URL with a host and no user info", Err: err}
		}
		endpoint = u.String()
	}
	key, err := ParseX25519PublicKey(encryptionKey)
	if err != nil {
		return Organization{}, &FieldError{Field: "encryption_key", Rule: "an X25519 public key: 32 bytes as 64 hex digits or Base64", Err: err}
	}
	return Organization{OrganizationID: id, OrganizationName: name, Endpoint: endpoint, EncryptionKey: hex.EncodeToString(key)}, nil
}

// ParseX25519PublicKey reads a 32-byte X25519 public key written as 64 hex
// digits or standard or URL-safe Base64 (padded or not). The all-zero key
// and the other low-order points are refused (they give a shared secret
// that does not depend on the private key).
func ParseX25519PublicKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	b, err := decodeKey(s)
	if err != nil {
		return nil, err
	}
	if len(b) != 32 {
		return nil, fmt.Errorf("X25519 public key of %d bytes, want 32", len(b))
	}
	if LowOrderX25519(b) {
		return nil, errors.New("X25519 public key of low order")
	}
	return b, nil
}

func decodeKey(s string) ([]byte, error) {
	if len(s) == 64 {
		if b, err := hex.DecodeString(s); err == nil {
			return b, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("neither hex nor Base64")
}

// lowOrderProbe is a fixed X25519 private key. Every X25519 scalar is a
// multiple of the cofactor, so its shared secret with a low-order point is
// zero, which crypto/ecdh reports as an error: that identifies the point.
var lowOrderProbe = [32]byte{1: 0x5a, 7: 0x11, 31: 0x40}

// LowOrderX25519 reports whether b, a 32-byte X25519 public key, is not
// usable: a low-order point, whose shared secret does not depend on the
// private key.
func LowOrderX25519(b []byte) bool {
	if len(b) != 32 {
		return false // the length is checked elsewhere, with its own message
	}
	curve := ecdh.X25519()
	pub, err := curve.NewPublicKey(b)
	if err != nil {
		return true
	}
	priv, err := curve.NewPrivateKey(lowOrderProbe[:])
	if err != nil {
		return true
	}
	_, err = priv.ECDH(pub)
	return err != nil
}
