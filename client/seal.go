package client

import (
	"errors"
	"fmt"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/record"
)

// SealRecord encrypts rec into the envelope the API accepts, with the first
// key of fernetKey (the server's FERNET_KEY: one URL-safe Base64 key, or
// several comma-separated). encrypted_data is the Fernet token, data_hash the
// SHA-256 of the record's JSON, and ipfs_cid the CID that
// `ipfs add --cid-version=1` gives for the token, so the same bytes can be
// pinned to IPFS unchanged.
//
// The plaintext is wiped after sealing; errors never contain it or the key.
func SealRecord(rec *record.Record, fernetKey string) (*healthagents.PatientData, error) {
	if rec == nil {
		return nil, errors.New("client: nil record")
	}
	kr, err := cipher.ParseKeyring(fernetKey)
	if err != nil {
		return nil, fmt.Errorf("client: Fernet key: %w", err)
	}
	return SealRecordWith(rec, kr)
}

// SealRecordWith is SealRecord with a keyring parsed once, for sealing many
// records.
func SealRecordWith(rec *record.Record, kr *cipher.Keyring) (*healthagents.PatientData, error) {
	if rec == nil {
		return nil, errors.New("client: nil record")
	}
	if err := rec.Validate(); err != nil {
		return nil, fmt.Errorf("client: record: %w", err)
	}
	plaintext, err := rec.Marshal()
	if err != nil {
		return nil, fmt.Errorf("client: record: %w", err)
	}
	defer clear(plaintext)
	env, err := cipher.Seal(rec.PatientID, plaintext, kr)
	if err != nil {
		return nil, fmt.Errorf("client: sealing record: %w", err)
	}
	return &env, nil
}
