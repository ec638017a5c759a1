package store

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sealer encrypts a value kept at rest and opens it again; *cipher.Keyring
// is one. Decrypt is called with ttl 0 (no age limit).
type Sealer interface {
	Encrypt(plaintext []byte) ([]byte, error)
	Decrypt(token []byte, ttl time.Duration) ([]byte, error)
}

// KeyOption configures how a WebhookStore or an AuditStore keeps the
// deployment's pseudonym key (webhook_settings.pseudonym_key).
type KeyOption func(*keyKeeper)

// WithKeySealer keeps the pseudonym key sealed with s ("sealed:<token>").
// A key stored in clear (hex) before is sealed in place the first time it
// is read. Give every store of a deployment the same sealer (a keyring
// holding every key ever used): one without it cannot read a sealed key.
func WithKeySealer(s Sealer) KeyOption {
	return func(k *keyKeeper) { k.sealer = s }
}

type keyKeeper struct{ sealer Sealer }

// PseudonymKey implements webhook.Store (and audit.Store, through
// AuditStore): the first caller's candidate is kept, sealed with the
// WithKeySealer sealer if there is one, and every caller gets the kept key.
// A key kept in clear by an earlier version is sealed in place on first use
// (a compare-and-swap, so concurrent callers agree).
func (s *WebhookStore) PseudonymKey(ctx context.Context, candidate []byte) ([]byte, error) {
	stored, err := s.keys.seal(candidate)
	if err != nil {
		return nil, err
	}
	if _, err := s.db.db.ExecContext(ctx, s.db.Rebind(`INSERT INTO webhook_settings (name, value) VALUES ('pseudonym_key', ?)
		ON CONFLICT (name) DO NOTHING`), stored); err != nil {
		return nil, fmt.Errorf("store: storing the pseudonym key: %w", err)
	}
	var v string
	if err := s.db.db.QueryRowContext(ctx, `SELECT value FROM webhook_settings WHERE name = 'pseudonym_key'`).Scan(&v); err != nil {
		return nil, fmt.Errorf("store: reading the pseudonym key: %w", err)
	}
	key, sealed, err := s.keys.open(v)
	if err != nil {
		return nil, err
	}
	if !sealed && s.keys.sealer != nil {
		// Kept in clear by an earlier version: seal it now. Whoever loses
		// the race finds it sealed already, with the same key inside.
		enc, err := s.keys.seal(key)
		if err != nil {
			return nil, err
		}
		if _, err := s.db.db.ExecContext(ctx, s.db.Rebind(`UPDATE webhook_settings SET value = ? WHERE name = 'pseudonym_key' AND value = ?`),
			enc, v); err != nil {
			return nil, fmt.Errorf("store: sealing the pseudonym key: %w", err)
		}
	}
	return key, nil
}

// sealedKeyPrefix marks a pseudonym key kept sealed.
const sealedKeyPrefix = "sealed:"

// seal returns the stored form of key: sealed with the sealer, else hex.
func (k keyKeeper) seal(key []byte) (string, error) {
	if k.sealer == nil {
		return hex.EncodeToString(key), nil
	}
	tok, err := k.sealer.Encrypt(key)
	if err != nil {
		return "", fmt.Errorf("store: sealing the pseudonym key: %w", err)
	}
	return sealedKeyPrefix + string(tok), nil
}

// open returns the key of a stored form, and whether it was sealed.
func (k keyKeeper) open(v string) (key []byte, sealed bool, err error) {
	tok, sealed := strings.CutPrefix(v, sealedKeyPrefix)
	if !sealed {
		key, err := hex.DecodeString(v)
		if err != nil {
			return nil, false, errors.New("store: the stored pseudonym key is corrupt")
		}
		return key, false, nil
	}
	if k.sealer == nil {
		return nil, true, errors.New("store: the pseudonym key is sealed and this store has no sealer (store.WithKeySealer)")
	}
	key, err = k.sealer.Decrypt([]byte(tok), 0)
	if err != nil {
		return nil, true, fmt.Errorf("store: opening the sealed pseudonym key: %w", err)
	}
	return key, true, nil
}
