package healthagents_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/record"
)

// memOutbox is a PrescriptionEventStore kept in memory for this unit test
// of V1's choice of path; the real one (store.PrescriptionOutbox) is tested
// on both databases in package store.
type memOutbox struct {
	memPrescriptions
	events []healthagents.Event
	plain  int // SavePrescription calls
	fail   error
}

func (s *memOutbox) SavePrescription(ctx context.Context, p healthagents.StoredPrescription) error {
	s.mu.Lock()
	s.plain++
	s.mu.Unlock()
	return s.memPrescriptions.SavePrescription(ctx, p)
}

func (s *memOutbox) SavePrescriptionWithEvents(ctx context.Context, p healthagents.StoredPrescription, events []healthagents.Event) error {
	s.mu.Lock()
	if s.fail != nil {
		s.mu.Unlock()
		return s.fail
	}
	s.events = append(s.events, events...)
	s.mu.Unlock()
	return s.memPrescriptions.SavePrescription(ctx, p)
}

func TestV1SavesValidationWithItsEvents(t *testing.T) {
	t.Parallel()
	sink := &recordingSink{}
	svc, kr := newService(t, healthagents.WithEvents(sink))
	rx := &memOutbox{}
	v1, err := healthagents.NewV1(svc, &memPatients{}, rx)
	require.NoError(t, err)
	registerPatient(t, v1, kr, patient("PT-C", nil, nil))
	req := healthagents.V1PrescriptionRequest{PatientID: "PT-C", ProviderNPI: providerNPI,
		Medications: []healthagents.V1Medication{med("00071015523", "atorvastatin")}}

	res, err := v1.ValidatePrescription(t.Context(), testOwner, req)
	require.NoError(t, err)
	require.Equal(t, healthagents.StatusApproved, res.ValidationStatus)
	assert.Empty(t, sink.events, "the store took the events, not the sink")
	assert.Zero(t, rx.plain)
	require.Len(t, rx.events, 2)
	assert.Equal(t, healthagents.EventPrescriptionValidated, rx.events[0].Type)
	assert.Equal(t, healthagents.EventPrescriptionApproved, rx.events[1].Type)
	for _, e := range rx.events {
		assert.Equal(t, res.PrescriptionID, e.Data["prescription_id"])
		assert.Equal(t, res.CreatedAt, e.Time, "the decision time")
	}

	// The store refuses: 503, nothing stored, no event anywhere.
	rx.fail = errors.New("outbox refused")
	_, err = v1.ValidatePrescription(t.Context(), testOwner, req)
	assert.Equal(t, healthagents.CodeUnavailable, healthagents.ErrorCode(err))
	assert.Len(t, rx.events, 2)
	assert.Empty(t, sink.events)
	assert.Len(t, rx.m, 1)
}

func TestV1WithoutSinkSavesOnlyTheValidation(t *testing.T) {
	t.Parallel()
	svc, kr := newService(t)
	rx := &memOutbox{}
	v1, err := healthagents.NewV1(svc, &memPatients{}, rx)
	require.NoError(t, err)
	registerPatient(t, v1, kr, patient("PT-C", nil, nil))
	_, err = v1.ValidatePrescription(t.Context(), testOwner, healthagents.V1PrescriptionRequest{PatientID: "PT-C", ProviderNPI: providerNPI,
		Medications: []healthagents.V1Medication{med("00071015523", "atorvastatin")}})
	require.NoError(t, err)
	assert.Equal(t, 1, rx.plain)
	assert.Empty(t, rx.events, "no EventSink: no events")
}

func registerPatient(t *testing.T, v1 *healthagents.V1, kr *cipher.Keyring, r *record.Record) {
	t.Helper()
	b, err := r.Marshal()
	require.NoError(t, err)
	env, err := cipher.Seal(r.PatientID, b, kr)
	require.NoError(t, err)
	require.NoError(t, v1.PutPatient(t.Context(), testOwner, r.PatientID, &env))
}

// TestV1EventZKVerifiedMeansCovered: the prescription.validated event's
// zk_proof_verified is true only when every medication's verified proof
// states coverage, as on the root family. A lapsed policy still gets its
// proofs (of "not covered") in the result, but the event says false.
func TestV1EventZKVerifiedMeansCovered(t *testing.T) {
	t.Parallel()
	svc, kr := newService(t, healthagents.WithAttestor(stubAttestor{}), healthagents.WithEvents(&recordingSink{}))
	rx := &memOutbox{}
	v1, err := healthagents.NewV1(svc, &memPatients{}, rx)
	require.NoError(t, err)
	registerPatient(t, v1, kr, patient("PT-C", nil, nil))
	lapsed := patient("PT-L", nil, nil)
	lapsed.Coverage.End = "2026-06-30"
	registerPatient(t, v1, kr, lapsed)

	for _, tc := range []struct {
		patient string
		status  string
		want    bool
	}{
		{"PT-C", healthagents.StatusApproved, true},
		{"PT-L", healthagents.StatusRequiresReview, false},
	} {
		before := len(rx.events)
		res, err := v1.ValidatePrescription(t.Context(), testOwner, healthagents.V1PrescriptionRequest{
			PatientID: tc.patient, ProviderNPI: providerNPI,
			Medications: []healthagents.V1Medication{med("00071015523", "atorvastatin")}})
		require.NoError(t, err)
		require.Equal(t, tc.status, res.ValidationStatus, tc.patient)
		require.NotNil(t, res.ZKProof, "%s: the proof is kept either way", tc.patient)
		require.Greater(t, len(rx.events), before)
		assert.Equal(t, tc.want, rx.events[before].Data["zk_proof_verified"], tc.patient)
	}
}
