package healthagents_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/eligibility"
	"github.com/healthagents/healthagents/prescription"
	"github.com/healthagents/healthagents/record"
)

type recordingSink struct {
	mu     sync.Mutex
	events []healthagents.Event
	fail   error
}

func (s *recordingSink) Emit(_ context.Context, e healthagents.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.events = append(s.events, e)
	return nil
}

func newService(t testing.TB, opts ...healthagents.Option) (*healthagents.Service, *cipher.Keyring) {
	t.Helper()
	key, err := cipher.GenerateKey()
	require.NoError(t, err)
	kr, err := cipher.ParseKeyring(key)
	require.NoError(t, err)
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	svc, err := healthagents.New(kr, append([]healthagents.Option{healthagents.WithClock(func() time.Time { return now })}, opts...)...)
	require.NoError(t, err)
	return svc, kr
}

func envelope(t *testing.T, kr *cipher.Keyring) *healthagents.PatientData {
	t.Helper()
	r := &record.Record{PatientID: "PT-1", Coverage: &record.Coverage{MemberID: "M1", Status: "active", Start: "2026-01-01", End: "2026-12-31"}}
	b, err := r.Marshal()
	require.NoError(t, err)
	env, err := cipher.Seal(r.PatientID, b, kr)
	require.NoError(t, err)
	return &env
}

func TestEventsEmittedAfterDecisions(t *testing.T) {
	t.Parallel()
	sink := &recordingSink{}
	svc, kr := newService(t, healthagents.WithEvents(sink))
	env := envelope(t, kr)
	_, err := svc.VerifyEligibility(t.Context(), env, "PROC003")
	require.NoError(t, err)
	_, err = svc.ValidatePrescription(t.Context(), env, "6809")
	require.NoError(t, err)
	require.Len(t, sink.events, 2)
	e := sink.events[0]
	assert.Equal(t, healthagents.EventEligibilityVerified, e.Type)
	assert.Equal(t, "PT-1", e.PatientID)
	assert.Equal(t, 100, e.Data["coverage_percentage"])
	assert.Equal(t, true, e.Data["requires_auth"])
	assert.False(t, e.Time.IsZero())
	assert.Equal(t, healthagents.EventPrescriptionValidated, sink.events[1].Type)

	// A failed request emits nothing.
	_, err = svc.VerifyEligibility(t.Context(), env, "PROC999")
	require.Error(t, err)
	assert.Len(t, sink.events, 2)
}

func TestSinkFailureFailsTheRequest(t *testing.T) {
	t.Parallel()
	sink := &recordingSink{fail: errors.New("outbox unavailable")}
	svc, kr := newService(t, healthagents.WithEvents(sink))
	_, err := svc.VerifyEligibility(t.Context(), envelope(t, kr), "PROC001")
	require.Error(t, err)
	assert.Equal(t, healthagents.CodeUnavailable, healthagents.ErrorCode(err))
	assert.Equal(t, "Service temporarily unavailable", err.Error())
}

func TestErrorHelpers(t *testing.T) {
	t.Parallel()
	assert.Equal(t, healthagents.Code(""), healthagents.ErrorCode(nil))
	assert.Equal(t, healthagents.CodeInternal, healthagents.ErrorCode(errors.New("x")))
	assert.Equal(t, "Internal server error", healthagents.ErrorDetail(errors.New("secret internals")))
	cause := errors.New("cause")
	e := healthagents.WrapError(healthagents.CodeNotFound, cause, "Procedure code X not found")
	assert.ErrorIs(t, e, cause)
	assert.Equal(t, healthagents.CodeNotFound, healthagents.ErrorCode(e))
}

// statementAttestor is a test Attestor: it returns a verified attestation
// whose prescription statement states covered (last public input 1) or not
// (0), or fails with err. The real Attestor is tested in package attest and,
// with a lapsed policy, in app's TestPrescriptionZKVerifiedOnlyWhenCovered.
type statementAttestor struct {
	covered  bool
	verified bool
	err      error
}

func (a statementAttestor) attestation(circuit string, last string) (*healthagents.Attestation, error) {
	if a.err != nil {
		return nil, a.err
	}
	return &healthagents.Attestation{
		Circuit: circuit, ProofData: "0x01", TxHash: "0xab", Verified: a.verified,
		PublicInputs: []string{"0x" + strings.Repeat("0", 63) + "1", last}, Covered: a.covered,
	}, nil
}

func (a statementAttestor) AttestEligibility(context.Context, *record.Record, eligibility.Decision) (*healthagents.Attestation, error) {
	return a.attestation("eligibility", "0x"+strings.Repeat("0", 63)+"1")
}

func (a statementAttestor) AttestPrescription(context.Context, *record.Record, []prescription.Decision, time.Time) (*healthagents.Attestation, error) {
	flag := "0"
	if a.covered {
		flag = "1"
	}
	return a.attestation("prescription", "0x"+strings.Repeat("0", 63)+flag)
}

// TestPrescriptionZKVerifiedMeansCovered: zk_proof_verified of a
// prescription is true only for a proof verified on chain that also states
// coverage; valid does not depend on it.
func TestPrescriptionZKVerifiedMeansCovered(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		a    statementAttestor
		want bool
	}{
		"ok/verified, covered":              {statementAttestor{covered: true, verified: true}, true},
		"fail/verified, not covered":        {statementAttestor{covered: false, verified: true}, false},
		"fail/covered but not verified":     {statementAttestor{covered: true, verified: false}, false},
		"fail/neither verified nor covered": {statementAttestor{}, false},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sink := &recordingSink{}
			svc, kr := newService(t, healthagents.WithAttestor(tc.a), healthagents.WithEvents(sink))
			res, err := svc.ValidatePrescription(t.Context(), envelope(t, kr), "6809")
			require.NoError(t, err)
			assert.True(t, res.Valid)
			assert.Equal(t, tc.want, res.ZKProofVerified)
			require.NotNil(t, res.Proof)
			assert.Equal(t, tc.a.verified, res.Proof.Verified, "the attestation is passed on as it is")
			require.Len(t, sink.events, 1)
			assert.Equal(t, tc.want, sink.events[0].Data["zk_proof_verified"])
		})
	}
}

// TestProofErrorsNamed checks the API's wording of proof failures for both
// operations of the root family.
func TestProofErrorsNamed(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		err    error
		code   healthagents.Code
		detail string // after the operation's prefix; "" = the whole detail is "Service temporarily unavailable"
	}{
		"fail/rejected": {fmt.Errorf("%w: chain: proof rejected", healthagents.ErrProofRejected), healthagents.CodeInternal, "ZK proof verification failed"},
		"fail/timeout":  {fmt.Errorf("%w: ZK proof generation timed out", healthagents.ErrProofTimeout), healthagents.CodeInternal, "ZK proof generation timed out"},
		"fail/chain":    {fmt.Errorf("%w: dial", healthagents.ErrChainUnavailable), healthagents.CodeUnavailable, ""},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			svc, kr := newService(t, healthagents.WithAttestor(statementAttestor{err: tc.err}))
			env := envelope(t, kr)
			_, eerr := svc.VerifyEligibility(t.Context(), env, "PROC001")
			_, perr := svc.ValidatePrescription(t.Context(), env, "6809")
			for prefix, err := range map[string]error{"Eligibility check failed": eerr, "Prescription validation failed": perr} {
				require.Error(t, err, prefix)
				assert.ErrorIs(t, err, tc.err, prefix)
				assert.Equal(t, tc.code, healthagents.ErrorCode(err), prefix)
				want := "Service temporarily unavailable"
				if tc.detail != "" {
					want = prefix + ": " + tc.detail
				}
				assert.Equal(t, want, err.Error(), prefix)
				assert.Equal(t, want, healthagents.ErrorDetail(err), prefix)
			}
		})
	}
}

// TestEnvelopePatientIDRefused: an in-process caller gets the same 400
// detail as an HTTP one for an envelope whose patient_id is over 64 bytes or
// carries control characters (cipher refuses it before decrypting).
func TestEnvelopePatientIDRefused(t *testing.T) {
	t.Parallel()
	svc, kr := newService(t)
	for name, tc := range map[string]struct{ id, detail string }{
		"fail/too long":          {strings.Repeat("P", 65), "Validation error: field 'patient_id' is longer than 64 characters"},
		"fail/control in id":     {"PT-1\nforged", "Validation error: field 'patient_id' contains control characters"},
		"fail/DEL in the id":     {"PT-\x7f", "Validation error: field 'patient_id' contains control characters"},
		"fail/33 two-byte runes": {strings.Repeat("é", 33), "Validation error: field 'patient_id' is longer than 64 characters"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := envelope(t, kr)
			env.PatientID = tc.id
			_, err := svc.VerifyEligibility(t.Context(), env, "PROC001")
			assert.Equal(t, healthagents.CodeInvalid, healthagents.ErrorCode(err))
			assert.Equal(t, tc.detail, healthagents.ErrorDetail(err))
			_, err = svc.ValidatePrescription(t.Context(), env, "6809")
			assert.Equal(t, healthagents.CodeInvalid, healthagents.ErrorCode(err))
			assert.Equal(t, tc.detail, healthagents.ErrorDetail(err))
		})
	}
}

// TestEventsCarryNoCodes: the root family's events say what was decided
// (flags, percent, issuer) but carry no procedure or drug code and no day.
func TestEventsCarryNoCodes(t *testing.T) {
	t.Parallel()
	sink := &recordingSink{}
	svc, kr := newService(t, healthagents.WithAttestor(statementAttestor{covered: true, verified: true}), healthagents.WithEvents(sink))
	_, err := svc.VerifyEligibility(t.Context(), envelope(t, kr), "PROC001")
	require.NoError(t, err)
	_, err = svc.ValidatePrescription(t.Context(), envelope(t, kr), "6809")
	require.NoError(t, err)
	require.Len(t, sink.events, 2)
	for _, e := range sink.events {
		b, err := json.Marshal(e.Data)
		require.NoError(t, err)
		for _, needle := range []string{"PROC001", "6809", "procedure_code", "drug_code", "2026-11-21"} {
			assert.NotContains(t, string(b), needle, "event %s", e.Type)
		}
	}
}
