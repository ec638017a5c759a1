package apikey

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Who created a key, for Key.CreatedBy, when no key did.
const (
	ByAdminToken = "admin-token"
	ByBootstrap  = "bootstrap"
	ByCLI        = "cli"
)

// BootstrapPrefix starts every one-time bootstrap token.
const BootstrapPrefix = "hab_"

// BootstrapTTL is how long a one-time bootstrap token stays usable.
const BootstrapTTL = 24 * time.Hour

// IssueBootstrapToken returns a fresh one-time token that may create one
// key, when no ADMIN_TOKEN is configured and the database holds no key yet;
// otherwise it returns "". Only the token's hash is stored: the caller must
// show it to the operator (the binary prints it once at start) and nobody
// can recover it later. Every start without keys issues a new token; the
// first one used consumes them all. Tokens expire after BootstrapTTL.
func (s *Service) IssueBootstrapToken(ctx context.Context) (string, error) {
	if s.hasAdmin {
		return "", nil
	}
	n, err := s.store.CountKeys(ctx)
	if err != nil {
		return "", fmt.Errorf("apikey: counting keys: %w", err)
	}
	if n > 0 {
		return "", nil
	}
	body, err := randomBase62(40)
	if err != nil {
		return "", err
	}
	tok := BootstrapPrefix + body
	now := s.now().UTC()
	if err := s.store.InsertBootstrapToken(ctx, sha256.Sum256([]byte(tok)), now, now.Add(BootstrapTTL)); err != nil {
		return "", fmt.Errorf("apikey: storing bootstrap token: %w", err)
	}
	return tok, nil
}

// IsAdminToken reports whether bearer is the configured ADMIN_TOKEN
// (constant-time). Unlike AuthorizeAdmin it never consumes anything, so a
// middleware may call it to pick the caller's rate-limit budget.
func (s *Service) IsAdminToken(bearer string) bool {
	if !s.hasAdmin || bearer == "" {
		return false
	}
	h := sha256.Sum256([]byte(bearer))
	return subtle.ConstantTimeCompare(h[:], s.adminHash[:]) == 1
}

// AuthorizeAdmin checks a bearer token that is not an API key: the
// ADMIN_TOKEN (compared in constant time) or a one-time bootstrap token,
// which this call consumes. It returns who is acting (ByAdminToken or
// ByBootstrap) or ErrInvalid.
func (s *Service) AuthorizeAdmin(ctx context.Context, bearer string) (string, error) {
	if bearer == "" {
		return "", ErrInvalid
	}
	if s.IsAdminToken(bearer) {
		return ByAdminToken, nil
	}
	h := sha256.Sum256([]byte(bearer))
	if !strings.HasPrefix(bearer, BootstrapPrefix) || len(bearer) != len(BootstrapPrefix)+40 {
		return "", ErrInvalid
	}
	err := s.store.ConsumeBootstrapToken(ctx, h, s.now().UTC())
	switch {
	case err == nil:
		return ByBootstrap, nil
	case errors.Is(err, ErrInvalid):
		return "", ErrInvalid
	default:
		return "", fmt.Errorf("apikey: consuming bootstrap token: %w", err)
	}
}
