package healthagents

// The v1 family (/api/v1): the V1 type, its options, and its error codes.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/healthagents/healthagents/npi"
)

// The v1 family's error codes, with the HTTP status each answers (docs/decisions/v1.md).
// They ride in an *Error's Detail as a prefix, "NO_INSURANCE: ...", so that
// Error keeps one Code and one Detail for both families; V1Code reads them
// back.
const (
	V1PatientNotFound = "PATIENT_NOT_FOUND" // 404
	V1NoInsurance     = "NO_INSURANCE"      // 422
	// V1UntrustedCredential: the record's coverage credential is not
	// trusted for the decision (issuer not registered or retired, nonce
	// revoked by the payer, expired; none under COVERAGE_TRUST=registered).
	// The root family answers the same status.
	V1UntrustedCredential = "UNTRUSTED_CREDENTIAL" // 422
	V1ProofInvalid        = "PROOF_INVALID"        // 500
	V1NetworkError        = "NETWORK_ERROR"        // 503
	V1InteractionFound    = "INTERACTION_FOUND"    // finding in a 200 result
	V1Contraindicated     = "CONTRAINDICATED"      // finding in a 200 result
	V1Ineligible          = "INELIGIBLE"           // finding in a 200 result
	V1Unidentified        = "UNIDENTIFIED"         // finding in a 200 result: a record entry the service could not identify
	V1PharmacyError       = "PHARMACY_ERROR"       // 503
	V1ProofFailed         = "PROOF_FAILED"         // 500 (503 when the chain is unreachable)
)

// V1Code returns the uppercase v1 code in front of err's detail, or "".
func V1Code(err error) string {
	var e *Error
	if !errors.As(err, &e) {
		return ""
	}
	code, _, ok := strings.Cut(e.Detail, ": ")
	if !ok || code == "" || strings.ToUpper(code) != code || strings.ContainsAny(code, " '") {
		return ""
	}
	return code
}

func v1Error(code Code, v1 string, cause error, format string, args ...any) *Error {
	return &Error{Code: code, Detail: v1 + ": " + fmt.Sprintf(format, args...), err: cause}
}

// Sentinel errors of the v1 stores.
var (
	// ErrPatientNotFound: no envelope is registered under the patient id.
	ErrPatientNotFound = errors.New("healthagents: patient not found")
	// ErrPrescriptionNotFound: no validation is stored under the id.
	ErrPrescriptionNotFound = errors.New("healthagents: prescription not found")
	// ErrInvalidAttestation: a PharmacyOracle refused an availability
	// attestation or query as malformed before reaching the chain (V1
	// answers 400). pharmacy.ErrInvalid wraps it.
	ErrInvalidAttestation = errors.New("healthagents: invalid pharmacy attestation")
)

// V1 serves the /api/v1 eligibility and prescription operations on top of a
// Service: a patient registry of envelopes, stored validations, and an
// optional pharmacy oracle. Use NewV1.
type V1 struct {
	svc      *Service
	patients PatientRegistry
	rx       PrescriptionStore
	oracle   PharmacyOracle
	newID    func() (string, error)
	members  MemberIndex       // finds an X12 270's members (v1_x12_members.go)
	controls X12ControlNumbers // the X12 answers' control numbers (v1_x12.go)
}

// V1Option configures a V1.
type V1Option func(*V1) error

// WithPharmacyOracle makes prescription validation read pharmacy
// availability from the chain, and enables AttestAvailability. Without one,
// pharmacy_confirmation is always "unconfirmed".
func WithPharmacyOracle(o PharmacyOracle) V1Option {
	return func(v *V1) error { v.oracle = o; return nil }
}

// NewV1 returns the v1 operations of svc over the given stores.
func NewV1(svc *Service, patients PatientRegistry, prescriptions PrescriptionStore, opts ...V1Option) (*V1, error) {
	if svc == nil || patients == nil || prescriptions == nil {
		return nil, errors.New("healthagents: NewV1 needs a Service, a PatientRegistry and a PrescriptionStore")
	}
	v := &V1{svc: svc, patients: patients, rx: prescriptions, newID: newPrescriptionID}
	if idx, ok := patients.(MemberIndex); ok {
		v.members = idx
	}
	for _, o := range opts {
		if err := o(v); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// HasOracle reports whether a pharmacy oracle is configured.
func (v *V1) HasOracle() bool { return v.oracle != nil }

// unavailable hides a storage failure behind 503.
func (v *V1) unavailable(ctx context.Context, op string, err error) error {
	v.svc.logError(ctx, "storage failed", "op", op, "err", err)
	return WrapError(CodeUnavailable, err, "Service temporarily unavailable")
}

// proofError maps an Attestor error to the v1 codes: proof failures are
// 500 with proofCode, an unreachable chain is 503 with netCode, a record
// beyond the circuit's bounds 422 with proofCode, a credential refusal as
// credentialRefusal says. prefix words a malformed record as openChecked
// does.
func (v *V1) proofError(ctx context.Context, prefix, proofCode, netCode string, err error) error {
	if err := v.credentialRefusal(prefix, proofCode, err); err != nil {
		// The payer's credential, not the service, is the problem.
		return err
	}
	switch {
	case errors.Is(err, ErrProofTimeout):
		return v1Error(CodeInternal, proofCode, err, detailProofTimeout)
	case errors.Is(err, ErrProofRejected):
		return v1Error(CodeInternal, proofCode, err, detailProofRejected)
	case errors.Is(err, ErrChainUnavailable):
		return v1Error(CodeUnavailable, netCode, err, "Service temporarily unavailable")
	case errors.Is(err, ErrProofUnsupported):
		// As the root family: the record, not the service, is the problem.
		return v1Error(CodeUnprocessable, proofCode, err, "the record cannot be proven: it exceeds the ZK circuit's bounds (see docs/decisions/zkp.md)")
	}
	v.svc.logError(ctx, "proof failed", "err", err)
	return v1Error(CodeInternal, proofCode, err, "internal error")
}

// credentialRefusal is the v1 form of coverageRefusal (nil when err is not
// a refusal): an untrusted credential is 422 UNTRUSTED_CREDENTIAL, the same
// status as the root family's; terms a credential cannot encode are 422
// with proofCode, as a record beyond the circuit's bounds; a malformed
// credential is the root family's 400 "Invalid patient record".
func (v *V1) credentialRefusal(prefix, proofCode string, err error) error {
	r, ok := refusalOf(err)
	switch {
	case !ok:
		return nil
	case r.untrusted:
		return v1Error(r.code, V1UntrustedCredential, err, "%s", r.reason)
	case r.code == CodeUnprocessable:
		return v1Error(r.code, proofCode, err, "the record cannot be proven: %s", r.reason)
	}
	return coverageRefusal(prefix, err)
}

func checkNPI(field, s string) error {
	if strings.TrimSpace(s) == "" {
		return Errorf(CodeInvalid, "Validation error: field '%s' is required", field)
	}
	if err := npi.Check(s); err != nil {
		var ne *npi.Error
		reason := "is not an NPI"
		if errors.As(err, &ne) {
			reason = ne.Reason
		}
		return WrapError(CodeInvalid, err, fmt.Sprintf("Validation error: field '%s' is not a valid NPI: %s", field, reason))
	}
	return nil
}
