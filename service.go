package healthagents

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strings"
	"time"

	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/eligibility"
	"github.com/healthagents/healthagents/prescription"
	"github.com/healthagents/healthagents/record"
)

// Opener opens an envelope into its plaintext; *cipher.Keyring is one.
type Opener interface {
	Open(ctx context.Context, env cipher.Envelope) ([]byte, error)
}

// Attestor proves a decision in zero knowledge and has the proof verified by
// EVM code on a chain. Errors wrap ErrProofTimeout, ErrProofRejected or
// ErrChainUnavailable where they apply.
//
// The attestation of AttestPrescription proves whether the patient's plan
// covers the drug on date; its last public input is that output, the
// statement's Covered flag: 1 when covered, 0 when not (coverage inactive or
// lapsed, or the drug excluded). A proof of "not covered" verifies on chain
// like any other, so the Service reads this flag and reports
// zk_proof_verified only for a verified proof of coverage.
type Attestor interface {
	AttestEligibility(ctx context.Context, rec *record.Record, d eligibility.Decision) (*Attestation, error)
	AttestPrescription(ctx context.Context, rec *record.Record, d prescription.Decision, date time.Time) (*Attestation, error)
}

// Service is the healthcare agents pipeline. Use New; the zero value is not
// usable. A Service is safe for concurrent use.
type Service struct {
	opener   Opener
	elig     *eligibility.Agent
	rx       *prescription.Agent
	attestor Attestor
	events   EventSink
	now      func() time.Time
	logger   *slog.Logger
}

// Option configures a Service.
type Option func(*Service) error

// WithAttestor makes every decision proven and verified on chain. Without an
// Attestor, results report zk_proof_verified=false.
func WithAttestor(a Attestor) Option {
	return func(s *Service) error { s.attestor = a; return nil }
}

// WithClock sets the clock that gives the service date of a decision.
func WithClock(now func() time.Time) Option {
	return func(s *Service) error { s.now = now; return nil }
}

// WithLogger sets the logger. The service logs no medical data.
func WithLogger(l *slog.Logger) Option {
	return func(s *Service) error { s.logger = l; return nil }
}

// WithEligibilityAgent replaces the default eligibility agent.
func WithEligibilityAgent(a *eligibility.Agent) Option {
	return func(s *Service) error { s.elig = a; return nil }
}

// WithPrescriptionAgent replaces the default prescription agent.
func WithPrescriptionAgent(a *prescription.Agent) Option {
	return func(s *Service) error { s.rx = a; return nil }
}

// New returns a Service that opens envelopes with opener (usually a
// *cipher.Keyring).
func New(opener Opener, opts ...Option) (*Service, error) {
	if opener == nil {
		return nil, errors.New("healthagents: nil Opener")
	}
	s := &Service{opener: opener, now: time.Now, logger: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		if err := o(s); err != nil {
			return nil, err
		}
	}
	var err error
	if s.elig == nil {
		if s.elig, err = eligibility.New(); err != nil {
			return nil, fmt.Errorf("healthagents: eligibility agent: %w", err)
		}
	}
	if s.rx == nil {
		if s.rx, err = prescription.New(); err != nil {
			return nil, fmt.Errorf("healthagents: prescription agent: %w", err)
		}
	}
	return s, nil
}

// Eligibility returns the eligibility agent.
func (s *Service) Eligibility() *eligibility.Agent { return s.elig }

// Prescription returns the prescription agent.
func (s *Service) Prescription() *prescription.Agent { return s.rx }

// Attests reports whether decisions are proven and verified on chain.
func (s *Service) Attests() bool { return s.attestor != nil }

// serviceTime is the clock's reading in UTC: the service date of a decision
// made now.
func (s *Service) serviceTime() time.Time { return s.now().UTC() }

// proveEligibility proves d and has the proof verified on chain; it returns
// nil and no error without an Attestor.
func (s *Service) proveEligibility(ctx context.Context, rec *record.Record, d eligibility.Decision) (*Attestation, error) {
	if s.attestor == nil {
		return nil, nil
	}
	return s.attestor.AttestEligibility(ctx, rec, d)
}

// provePrescription proves whether the plan covers d's drug on date and has
// the proof verified on chain; it returns nil and no error without an
// Attestor.
func (s *Service) provePrescription(ctx context.Context, rec *record.Record, d prescription.Decision, date time.Time) (*Attestation, error) {
	if s.attestor == nil {
		return nil, nil
	}
	return s.attestor.AttestPrescription(ctx, rec, d, date)
}

// logError logs a failure; args never carry medical data.
func (s *Service) logError(ctx context.Context, msg string, args ...any) {
	s.logger.ErrorContext(ctx, msg, args...)
}

const (
	eligibilityPrefix  = "Eligibility check failed"
	prescriptionPrefix = "Prescription validation failed"
)

// MaxCodeLength bounds procedure and drug codes.
const MaxCodeLength = 64

// VerifyEligibility checks whether the patient in env is covered for
// procedureCode today.
func (s *Service) VerifyEligibility(ctx context.Context, env *PatientData, procedureCode string) (*EligibilityResult, error) {
	if err := checkCode("procedure_code", procedureCode); err != nil {
		return nil, err
	}
	if _, err := s.elig.Lookup(procedureCode); err != nil {
		return nil, lookupError(err, "Procedure", procedureCode)
	}
	rec, err := s.OpenRecord(ctx, env, eligibilityPrefix)
	if err != nil {
		return nil, err
	}
	d, err := s.elig.Check(ctx, rec, procedureCode, s.serviceTime())
	if err != nil {
		return nil, s.internal(ctx, eligibilityPrefix, err)
	}
	res := &EligibilityResult{
		Eligible:              d.Eligible,
		CoveragePct:           float64(d.CoveragePct),
		PrivacyPreserved:      true,
		ProcedureCode:         procedureCode,
		RequiresAuthorization: d.RequiresAuthorization,
	}
	if !d.Eligible {
		reason := d.Reason
		res.Reason = &reason
	}
	att, err := s.proveEligibility(ctx, rec, d)
	if err != nil {
		return nil, s.proofError(ctx, eligibilityPrefix, err)
	}
	if att != nil {
		res.Proof = att
		res.ZKProofVerified = att.Verified
	}
	err = s.emit(ctx, Event{Type: EventEligibilityVerified, PatientID: env.PatientID, Data: map[string]any{
		"procedure_code": procedureCode, "eligible": res.Eligible,
		"coverage_percentage": d.CoveragePct, "requires_auth": d.RequiresAuthorization,
		"zk_proof_verified": res.ZKProofVerified,
	}})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// ValidatePrescription checks drugCode for the patient in env: interactions
// with current medications, contraindications, and coverage. Valid follows
// the clinical checks; ZKProofVerified is true only when a proof that the
// plan covers the drug on the service date was verified on chain.
func (s *Service) ValidatePrescription(ctx context.Context, env *PatientData, drugCode string) (*PrescriptionResult, error) {
	if err := checkCode("drug_code", drugCode); err != nil {
		return nil, err
	}
	if _, err := s.rx.Lookup(drugCode); err != nil {
		return nil, lookupError(err, "Drug", drugCode)
	}
	rec, err := s.OpenRecord(ctx, env, prescriptionPrefix)
	if err != nil {
		return nil, err
	}
	d, err := s.rx.Validate(ctx, rec, drugCode)
	if err != nil {
		return nil, s.internal(ctx, prescriptionPrefix, err)
	}
	if !d.Valid {
		return nil, &Error{Code: CodeUnprocessable, Detail: prescriptionPrefix + ": " + d.Reason}
	}
	res := &PrescriptionResult{
		Valid:               true,
		DrugCode:            drugCode,
		InteractionsChecked: d.InteractionsChecked,
		CrossChainOracle:    "unconfirmed: no pharmacy availability attestation is published for this drug",
	}
	att, err := s.provePrescription(ctx, rec, d, s.serviceTime())
	if err != nil {
		return nil, s.proofError(ctx, prescriptionPrefix, err)
	}
	if att != nil {
		res.Proof = att
		res.ZKProofVerified = att.Verified && provesCoverage(att)
	}
	err = s.emit(ctx, Event{Type: EventPrescriptionValidated, PatientID: env.PatientID, Data: map[string]any{
		"drug_code": drugCode, "valid": res.Valid, "zk_proof_verified": res.ZKProofVerified,
	}})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// provesCoverage reports whether a prescription attestation states that the
// plan covers the drug: its last public input (see Attestor) is 1.
func provesCoverage(att *Attestation) bool {
	n := len(att.PublicInputs)
	if n == 0 {
		return false
	}
	v, ok := new(big.Int).SetString(strings.TrimPrefix(att.PublicInputs[n-1], "0x"), 16)
	return ok && v.Cmp(big.NewInt(1)) == 0
}

// OpenRecord opens env, parses the record inside and checks that its
// patient_id is the envelope's. prefix starts the detail of errors that the
// API words per operation (e.g. "Eligibility check failed"; the errors
// table of docs/decisions.md).
func (s *Service) OpenRecord(ctx context.Context, env *PatientData, prefix string) (*record.Record, error) {
	if env == nil {
		return nil, Errorf(CodeInvalid, "Invalid request format: missing field 'patient_data'")
	}
	plaintext, err := s.opener.Open(ctx, *env)
	if err != nil {
		return nil, envelopeError(err, prefix)
	}
	rec, err := record.Parse(plaintext)
	clear(plaintext)
	if err != nil {
		var fe *record.FieldError
		if errors.As(err, &fe) {
			return nil, WrapError(CodeInvalid, err, fmt.Sprintf("%s: Invalid patient record: %s", prefix, fe.Error()))
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
	case errors.Is(err, cipher.ErrCIDMismatch):
		return WrapError(CodeInvalid, err, prefix+": ipfs_cid does not address encrypted_data")
	case errors.Is(err, cipher.ErrInvalidEncoding), errors.Is(err, cipher.ErrDecrypt):
		return WrapError(CodeInvalid, err, "Invalid encrypted data format")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
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
	if errors.Is(err, eligibility.ErrUnknownProcedure) || errors.Is(err, prescription.ErrUnknownDrug) {
		return WrapError(CodeNotFound, err, fmt.Sprintf("%s code %s not found", what, code))
	}
	return WrapError(CodeInternal, err, "Internal server error")
}

func (s *Service) proofError(ctx context.Context, prefix string, err error) error {
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
