package api

import (
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/healthagents/healthagents/federated"
)

// ValidationError is a request that breaks a rule of its type. Its text is
// the detail the server answers with status 400.
type ValidationError struct {
	Detail string
	Err    error // the cause, if any
}

func (e *ValidationError) Error() string { return e.Detail }

func (e *ValidationError) Unwrap() error { return e.Err }

func invalid(err error, format string, args ...any) error {
	return &ValidationError{Detail: "Validation error: " + fmt.Sprintf(format, args...), Err: err}
}

func hexField(field, s string) ([]byte, error) {
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, invalid(err, "field '%s' must be hex", field)
	}
	return b, nil
}

// Validate checks the registration's name, endpoint and X25519 key by the
// rules of federated.NewOrganization.
func (r OrganizationRequest) Validate() error {
	_, err := federated.NewOrganization("", r.OrganizationName, r.Endpoint, r.EncryptionKey)
	var fe *federated.FieldError
	if errors.As(err, &fe) {
		return invalid(err, "field '%s' must be %s", fe.Field, fe.Rule)
	}
	return err
}

// Validate checks that both keys are hex X25519 public keys of full order.
func (r KeysSubmission) Validate() error {
	c, err := hexField("cipher_public_key", r.CipherPublicKey)
	if err != nil {
		return err
	}
	m, err := hexField("mask_public_key", r.MaskPublicKey)
	if err != nil {
		return err
	}
	if federated.LowOrderX25519(c) || federated.LowOrderX25519(m) {
		return invalid(nil, "X25519 public key of low order")
	}
	return nil
}

// Validate checks that the commitment and every share's ciphertext are hex.
func (r SharesSubmission) Validate() error {
	if _, err := hexField("commitment", r.Commitment); err != nil {
		return err
	}
	for _, sh := range r.Shares {
		if _, err := hexField("shares.ciphertext", sh.Ciphertext); err != nil {
			return err
		}
	}
	for _, c := range r.SeedCommitments {
		if b, err := hexField("seed_commitments", c); err != nil || len(b) != 32 {
			return invalid(nil, "field 'seed_commitments' must map organization ids to 32-byte commitments (64 hex)")
		}
	}
	return nil
}

// Validate checks sample_count and that the masked vector is hex (its
// binary form is checked when it is decoded).
func (r GradientSubmission) Validate() error {
	if r.SampleCount < 0 {
		return invalid(nil, "field 'sample_count' must be at least 0")
	}
	if _, err := hexField("gradients_encrypted", r.GradientsEncrypted); err != nil {
		return err
	}
	if len(r.Proof) > 2*MaxProofBytes {
		return invalid(nil, "field 'proof' must be at most %d bytes", MaxProofBytes)
	}
	if r.Proof != "" {
		if _, err := hexField("proof", r.Proof); err != nil {
			return err
		}
	}
	return nil
}

// MaxProofBytes bounds a masked input's proof (a BN254 Groth16 proof is a
// few hundred bytes).
const MaxProofBytes = 4096
