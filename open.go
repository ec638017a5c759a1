package healthagents

// Opening an envelope into a checked record, and the errors of both
// families' inputs: codes, envelopes, lookups, proofs.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/credential"
	"github.com/healthagents/healthagents/eligibility"
	"github.com/healthagents/healthagents/fhir"
	"github.com/healthagents/healthagents/prescription"
	"github.com/healthagents/healthagents/record"
)

// OpenTrainingRecord opens env as a federated submission's record (POST
// /submit-federated-update): it parses the record inside (our record JSON,
// or a FHIR R4 Bundle mapped by package fhir), checks that its patient_id is
// the envelope's and that its coverage credential, if any, has not expired,
// and words its errors as that operation's (the errors table of
// docs/decisions.md).
func (s *Service) OpenTrainingRecord(ctx context.Context, env *PatientData) (*record.Record, error) {
	return s.openChecked(ctx, env, trainingPrefix)
}

// openChecked opens env for the operation whose errors prefix words (e.g.
// "Eligibility check failed"): the record, its patient_id the envelope's.
// A record whose coverage credential expired before the service date is
// refused as coverageRefusal words it (422, an untrusted credential).
func (s *Service) openChecked(ctx context.Context, env *PatientData, prefix string) (*record.Record, error) {
	rec, err := s.openRecord(ctx, env, prefix)
	if err != nil {
		return nil, err
	}
	if err := s.credentialExpired(rec); err != nil {
		return nil, coverageRefusal(prefix, err)
	}
	return rec, nil
}

// credentialExpired returns credential.ErrExpired when rec's coverage
// credential expired before the service date: a check that needs no chain,
// made before any decision (the proof path's trust.Policy makes it again).
func (s *Service) credentialExpired(rec *record.Record) error {
	if rec.Coverage.CredentialExpired(s.serviceTime()) {
		return credential.ErrExpired
	}
	return nil
}

// openRecord is openChecked before the credential's expiry.
func (s *Service) openRecord(ctx context.Context, env *PatientData, prefix string) (*record.Record, error) {
	if env == nil {
		return nil, Errorf(CodeInvalid, "Invalid request format: missing field 'patient_data'")
	}
	octx, end := s.step(ctx, "open")
	plaintext, err := s.opener.Open(octx, *env)
	if err != nil {
		end(err)
		return nil, envelopeError(err, prefix)
	}
	// Our record JSON, or a FHIR R4 Bundle whose medications are read with
	// the drug catalogue.
	rec, err := fhir.ParseRecordWith(plaintext, fhir.Options{Drugs: s.rx})
	end(err)
	clear(plaintext)
	if err != nil {
		var fe *record.FieldError
		var he *fhir.Error
		switch {
		case errors.As(err, &fe):
			return nil, WrapError(CodeInvalid, err, fmt.Sprintf("%s: Invalid patient record: %s", prefix, fe.Error()))
		case errors.As(err, &he):
			return nil, WrapError(CodeInvalid, err, fmt.Sprintf("%s: Invalid patient record: %s%s", prefix, fhir.DetailPrefix, he.Error()))
		}
		return nil, WrapError(CodeInvalid, err, prefix+": Invalid patient record")
	}
	if rec.PatientID != env.PatientID {
		return nil, Errorf(CodeInvalid, "%s: patient_id does not match the encrypted record", prefix)
	}
	return rec, nil
}

// envelopeError maps cipher errors to the API's messages (the errors table
// of docs/decisions.md).
func envelopeError(err error, prefix string) error {
	var fe *cipher.FieldError
	var ee *cipher.EnvelopeError
	switch {
	case errors.As(err, &fe):
		return WrapError(CodeInvalid, err, fmt.Sprintf("Validation error: field '%s' is required", fe.Field))
	case errors.Is(err, cipher.ErrInvalidPatientID) && errors.As(err, &ee):
		// Over 64 bytes or control characters: worded as checkCode words
		// an over-long or control-laden code.
		return WrapError(CodeInvalid, err, fmt.Sprintf("Validation error: field '%s' %s", ee.Field, ee.Reason))
	case errors.Is(err, cipher.ErrInvalidHashFormat):
		return WrapError(CodeInvalid, err, prefix+": Invalid data_hash")
	case errors.Is(err, cipher.ErrHashMismatch):
		return WrapError(CodeInvalid, err, prefix+": Data hash mismatch")
	case errors.Is(err, cipher.ErrInvalidCID):
		return WrapError(CodeInvalid, err, "Invalid the service CID format")
	case errors.Is(err, cipher.ErrCIDUnchecked) && errors.As(err, &ee):
		// Identity, truncated or unsupported multihash: it does not address
		// the ciphertext in a way anyone can verify.
		return WrapError(CodeInvalid, err, "Invalid the service CID format: ipfs_cid "+ee.Reason)
	case errors.Is(err, cipher.ErrCIDMismatch):
		return WrapError(CodeInvalid, err, prefix+": ipfs_cid does not address encrypted_data")
	case errors.Is(err, cipher.ErrEnvelopeExpired) && errors.As(err, &ee):
		// ENVELOPE_TTL: the token authenticated but is too old.
		return WrapError(CodeInvalid, err, prefix+": Envelope expired: encrypted_data "+ee.Reason)
	case errors.Is(err, cipher.ErrInvalidEncoding), errors.Is(err, cipher.ErrDecrypt):
		return WrapError(CodeInvalid, err, "Invalid encrypted data format")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), ErrorCode(err) == CodeUnavailable:
		return WrapError(CodeUnavailable, err, "Service temporarily unavailable")
	default:
		return WrapError(CodeInternal, err, prefix+": decryption error")
	}
}

func checkCode(field, code string) error {
	if strings.TrimSpace(code) == "" {
		return Errorf(CodeInvalid, "Validation error: field '%s' is required", field)
	}
	if len(code) > MaxCodeLength {
		return Errorf(CodeInvalid, "Validation error: field '%s' is longer than %d characters", field, MaxCodeLength)
	}
	for _, r := range code {
		if r < 0x20 || r == 0x7f {
			return Errorf(CodeInvalid, "Validation error: field '%s' contains control characters", field)
		}
	}
	return nil
}

func lookupError(err error, what, code string) error {
	if errors.Is(err, prescription.ErrCombination) {
		// A line is checked as one drug: asking for a combination product
		// would check one ingredient and skip the others.
		return WrapError(CodeInvalid, err, fmt.Sprintf("Validation error: %s code %s names a combination product; validate each of its ingredients by itself", what, code))
	}
	if errors.Is(err, eligibility.ErrUnknownProcedure) || errors.Is(err, prescription.ErrUnknownDrug) {
		return WrapError(CodeNotFound, err, fmt.Sprintf("%s code %s not found", what, code))
	}
	return WrapError(CodeInternal, err, "Internal server error")
}

func (s *Service) proofError(ctx context.Context, prefix string, err error) error {
	if refusal := coverageRefusal(prefix, err); refusal != nil {
		return refusal
	}
	switch {
	case errors.Is(err, ErrProofTimeout):
		return WrapError(CodeInternal, err, prefix+": ZK proof generation timed out")
	case errors.Is(err, ErrProofRejected):
		return WrapError(CodeInternal, err, prefix+": ZK proof verification failed")
	case errors.Is(err, ErrChainUnavailable):
		return WrapError(CodeUnavailable, err, "Service temporarily unavailable")
	case errors.Is(err, ErrProofUnsupported):
		return WrapError(CodeUnprocessable, err, prefix+": the record cannot be proven: it exceeds the ZK circuit's bounds (see docs/decisions/zkp.md)")
	}
	return s.internal(ctx, prefix, err)
}

// internal logs an unexpected error (its text comes from our own code, never
// from plaintext) and hides it from the caller.
func (s *Service) internal(ctx context.Context, prefix string, err error) error {
	s.logger.ErrorContext(ctx, "internal error", "op", prefix, "err", err)
	return WrapError(CodeInternal, err, prefix+": internal error")
}
