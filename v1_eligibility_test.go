package healthagents_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
)

func TestV1Eligibility(t *testing.T) {
	t.Parallel()
	f := newV1(t, healthagents.WithAttestor(stubAttestor{}))
	f.register(t, patient("PT-1", nil, nil))
	lapsed := patient("PT-2", nil, nil)
	lapsed.Coverage.End = "2026-06-30"
	lapsed.Coverage.DeductibleMet = 10
	f.register(t, lapsed)
	bare := patient("PT-3", nil, nil)
	bare.Coverage = nil
	f.register(t, bare)

	req := func(mut func(*healthagents.V1EligibilityRequest)) healthagents.V1EligibilityRequest {
		r := healthagents.V1EligibilityRequest{PatientID: "PT-1", MemberID: "W1", ProcedureCode: "PROC001", ProviderNPI: providerNPI}
		if mut != nil {
			mut(&r)
		}
		return r
	}
	res, err := f.v1.VerifyEligibility(t.Context(), testOwner, req(nil))
	require.NoError(t, err)
	assert.True(t, res.Eligible)
	assert.Equal(t, 80, res.CoveragePercentage)
	assert.True(t, res.DeductibleMet)
	assert.InDelta(t, 25.0, res.CopayAmount, 1e-9)
	assert.Nil(t, res.Reason)
	require.NotNil(t, res.VerificationProof)
	assert.Equal(t, "0xe1", res.VerificationProof.BlockchainTx)

	excluded, err := f.v1.VerifyEligibility(t.Context(), testOwner, req(func(r *healthagents.V1EligibilityRequest) { r.ProcedureCode = "PROC005" }))
	require.NoError(t, err)
	assert.False(t, excluded.Eligible)
	require.NotNil(t, excluded.Reason)

	tests := []struct {
		name   string
		mut    func(*healthagents.V1EligibilityRequest)
		code   healthagents.Code
		v1code string
	}{
		{"fail/npi check digit", func(r *healthagents.V1EligibilityRequest) { r.ProviderNPI = "1234567890" }, healthagents.CodeInvalid, ""},
		{"fail/npi nine digits", func(r *healthagents.V1EligibilityRequest) { r.ProviderNPI = "123456789" }, healthagents.CodeInvalid, ""},
		{"fail/npi missing", func(r *healthagents.V1EligibilityRequest) { r.ProviderNPI = "" }, healthagents.CodeInvalid, ""},
		{"fail/unknown procedure", func(r *healthagents.V1EligibilityRequest) { r.ProcedureCode = "NOPE" }, healthagents.CodeNotFound, ""},
		{"fail/unknown patient", func(r *healthagents.V1EligibilityRequest) { r.PatientID = "PT-404" }, healthagents.CodeNotFound, healthagents.V1PatientNotFound},
		{"fail/member mismatch", func(r *healthagents.V1EligibilityRequest) { r.MemberID = "W2" }, healthagents.CodeUnprocessable, healthagents.V1NoInsurance},
		{"fail/lapsed coverage", func(r *healthagents.V1EligibilityRequest) { r.PatientID = "PT-2" }, healthagents.CodeUnprocessable, healthagents.V1NoInsurance},
		{"fail/no coverage block", func(r *healthagents.V1EligibilityRequest) { r.PatientID = "PT-3" }, healthagents.CodeUnprocessable, healthagents.V1NoInsurance},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := f.v1.VerifyEligibility(t.Context(), testOwner, req(tc.mut))
			require.Error(t, err)
			assert.Equal(t, tc.code, healthagents.ErrorCode(err))
			assert.Equal(t, tc.v1code, healthagents.V1Code(err), healthagents.ErrorDetail(err))
		})
	}
}

func TestV1EligibilityProofErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		err    error
		code   healthagents.Code
		v1code string
	}{
		{"proof rejected", healthagents.ErrProofRejected, healthagents.CodeInternal, healthagents.V1ProofInvalid},
		{"proof timeout", healthagents.ErrProofTimeout, healthagents.CodeInternal, healthagents.V1ProofInvalid},
		{"chain down", healthagents.ErrChainUnavailable, healthagents.CodeUnavailable, healthagents.V1NetworkError},
		{"beyond the circuit", healthagents.ErrProofUnsupported, healthagents.CodeUnprocessable, healthagents.V1ProofInvalid},
		{"anything else", errors.New("prover exploded"), healthagents.CodeInternal, healthagents.V1ProofInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newV1(t, healthagents.WithAttestor(stubAttestor{err: tc.err}))
			f.register(t, patient("PT-1", nil, nil))
			_, err := f.v1.VerifyEligibility(t.Context(), testOwner, healthagents.V1EligibilityRequest{PatientID: "PT-1", MemberID: "W1", ProcedureCode: "PROC001", ProviderNPI: providerNPI})
			require.ErrorIs(t, err, tc.err)
			assert.Equal(t, tc.code, healthagents.ErrorCode(err))
			assert.Equal(t, tc.v1code, healthagents.V1Code(err))
			assert.Empty(t, f.sink.events, "no eligibility.verified without a proof")
		})
	}
}
