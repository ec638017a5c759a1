package healthagents

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"

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
	AttestPrescription(ctx context.Context, rec *record.Record, ds []prescription.Decision, date time.Time) (*Attestation, error)
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
	tracer   trace.Tracer // trace.go; nil: no spans
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
func (s *Service) provePrescription(ctx context.Context, rec *record.Record, ds []prescription.Decision, date time.Time) (*Attestation, error) {
	if s.attestor == nil {
		return nil, nil
	}
	return s.attestor.AttestPrescription(ctx, rec, ds, date)
}

// logError logs a failure; args never carry medical data.
func (s *Service) logError(ctx context.Context, msg string, args ...any) {
	s.logger.ErrorContext(ctx, msg, args...)
}

const (
	eligibilityPrefix  = "Eligibility check failed"
	prescriptionPrefix = "Prescription validation failed"
	// trainingPrefix words a federated submission's record errors
	// (OpenTrainingRecord; server's federatedPrefix is the same text).
	trainingPrefix = "Federated learning submission failed"
)

// MaxCodeLength bounds procedure and drug codes.
const MaxCodeLength = 64
