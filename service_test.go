package healthagents_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
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

func newService(t *testing.T, opts ...healthagents.Option) (*healthagents.Service, *cipher.Keyring) {
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
