package healthagents_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
)

func TestV1PharmacyErrorAndBatch(t *testing.T) {
	t.Parallel()
	f := newV1(t)
	f.register(t, patient("PT-C", nil, nil))
	f.register(t, patient("PT-W", []string{"11289"}, nil))
	ok := healthagents.V1PrescriptionRequest{PatientID: "PT-C", ProviderNPI: providerNPI, Medications: []healthagents.V1Medication{med("00071015523", "atorvastatin")}}
	bad := healthagents.V1PrescriptionRequest{PatientID: "PT-W", ProviderNPI: providerNPI, Medications: []healthagents.V1Medication{med("00000000001", "ibuprofen")}}
	missing := healthagents.V1PrescriptionRequest{PatientID: "PT-404", ProviderNPI: providerNPI, Medications: ok.Medications}
	items, err := f.v1.BatchValidate(t.Context(), testOwner, []healthagents.V1PrescriptionRequest{ok, bad, missing})
	require.NoError(t, err)
	require.Len(t, items, 3)
	assert.Equal(t, healthagents.StatusApproved, items[0].Result.ValidationStatus)
	assert.Equal(t, healthagents.StatusRejected, items[1].Result.ValidationStatus)
	assert.Equal(t, healthagents.V1PatientNotFound, healthagents.V1Code(items[2].Err))
	_, err = f.v1.BatchValidate(t.Context(), testOwner, make([]healthagents.V1PrescriptionRequest, healthagents.MaxBatch+1))
	assert.Equal(t, healthagents.CodeInvalid, healthagents.ErrorCode(err))

	f.sink.mu.Lock()
	var approved int
	for _, e := range f.sink.events {
		if e.Type == healthagents.EventPrescriptionApproved {
			approved++
		}
	}
	f.sink.mu.Unlock()
	assert.Equal(t, 1, approved, "prescription.approved only for the approved one")

	f.oracle.fail = errors.Join(healthagents.ErrChainUnavailable)
	ok.PharmacyNPI = pharmacyNPI
	_, err = f.v1.ValidatePrescription(t.Context(), testOwner, ok)
	assert.Equal(t, healthagents.V1PharmacyError, healthagents.V1Code(err))
	assert.Equal(t, healthagents.CodeUnavailable, healthagents.ErrorCode(err))
}

// TestV1AttestAvailabilityDates: estimated_availability must be after
// 1970-01-01 (the oracle stores Unix days, 0 meaning none) and at most
// MaxAvailabilityDays after today; an oracle refusing an attestation or a
// query as malformed is the caller's 400, not our 500.
func TestV1AttestAvailabilityDates(t *testing.T) {
	t.Parallel()
	f := newV1(t) // today is 2026-11-21
	tests := []struct {
		date string
		ok   bool
	}{
		{"1969-12-31", false},
		{"1970-01-01", false},
		{"0001-01-01", false},
		{"1970-01-02", true},
		{"2026-11-21", true},
		{"2027-11-22", true}, // today + 366 days
		{"2027-11-23", false},
		{"9999-12-31", false},
	}
	for _, tc := range tests {
		t.Run(tc.date, func(t *testing.T) {
			t.Parallel()
			res, err := f.v1.AttestAvailability(t.Context(), healthagents.V1Attestation{PharmacyNPI: pharmacyNPI, NDCCode: "0071-0155-23", EstimatedAvailability: tc.date})
			if tc.ok {
				require.NoError(t, err)
				assert.Equal(t, tc.date, res.EstimatedAvailability)
				return
			}
			assert.Equal(t, healthagents.CodeInvalid, healthagents.ErrorCode(err), "%v", err)
			assert.Equal(t, "Validation error: field 'estimated_availability' must be after 1970-01-01 and at most 366 days after today (UTC)", healthagents.ErrorDetail(err))
		})
	}

	refusing := newV1(t)
	refusing.oracle.failAttest = fmt.Errorf("oracle: %w", healthagents.ErrInvalidAttestation)
	_, err := refusing.v1.AttestAvailability(t.Context(), healthagents.V1Attestation{PharmacyNPI: pharmacyNPI, NDCCode: "0071-0155-23", EstimatedAvailability: "2026-12-01"})
	assert.Equal(t, healthagents.CodeInvalid, healthagents.ErrorCode(err), "%v", err)
	assert.Equal(t, healthagents.V1PharmacyError, healthagents.V1Code(err))
	refusing.oracle.failAttest = fmt.Errorf("oracle: %w", healthagents.ErrChainUnavailable)
	_, err = refusing.v1.AttestAvailability(t.Context(), healthagents.V1Attestation{PharmacyNPI: pharmacyNPI, NDCCode: "0071-0155-23", EstimatedAvailability: "2026-12-01"})
	assert.Equal(t, healthagents.CodeUnavailable, healthagents.ErrorCode(err), "%v", err)

	refusing.register(t, patient("PT-C", nil, nil))
	refusing.oracle.fail = fmt.Errorf("oracle: %w", healthagents.ErrInvalidAttestation)
	_, err = refusing.v1.ValidatePrescription(t.Context(), testOwner, healthagents.V1PrescriptionRequest{PatientID: "PT-C", ProviderNPI: providerNPI,
		PharmacyNPI: pharmacyNPI, Medications: []healthagents.V1Medication{med("00071015523", "atorvastatin")}})
	assert.Equal(t, healthagents.CodeInvalid, healthagents.ErrorCode(err), "%v", err)
	assert.Equal(t, healthagents.V1PharmacyError, healthagents.V1Code(err))
}
