package healthagents_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/credential"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/trust"
)

// TestCredentialRefusalOneStatus: a decision refused for its coverage
// credential answers one status on every operation of both families — 422
// for an untrusted credential (unknown or retired issuer, revoked nonce,
// none under COVERAGE_TRUST=registered), with UNTRUSTED_CREDENTIAL in front
// of the v1 family's detail; terms a credential cannot encode are the proof
// code's 422; a malformed credential is a 400 with no v1 code. NO_INSURANCE
// never answers a credential refusal.
func TestCredentialRefusalOneStatus(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		err        error
		code       healthagents.Code
		rootLabel  string
		v1Elig     string // v1 code of the eligibility answer
		v1Rx       string // and of the prescription answer
		rootDetail string
	}{
		"fail/revoked nonce":   {fmt.Errorf("trust: %w", trust.ErrRevoked), healthagents.CodeUnprocessable, "Untrusted coverage credential", healthagents.V1UntrustedCredential, healthagents.V1UntrustedCredential, trust.ErrRevoked.Error()},
		"fail/retired issuer":  {trust.ErrUnknownIssuer, healthagents.CodeUnprocessable, "Untrusted coverage credential", healthagents.V1UntrustedCredential, healthagents.V1UntrustedCredential, trust.ErrUnknownIssuer.Error()},
		"fail/no credential":   {trust.ErrNoCredential, healthagents.CodeUnprocessable, "Untrusted coverage credential", healthagents.V1UntrustedCredential, healthagents.V1UntrustedCredential, trust.ErrNoCredential.Error()},
		"fail/expired":         {credential.ErrExpired, healthagents.CodeUnprocessable, "Untrusted coverage credential", healthagents.V1UntrustedCredential, healthagents.V1UntrustedCredential, "the payer's coverage credential has expired"},
		"fail/unsupported":     {fmt.Errorf("%w: %w", trust.ErrUnsupported, credential.ErrEncoding), healthagents.CodeUnprocessable, "Invalid patient record", healthagents.V1ProofInvalid, healthagents.V1ProofFailed, trust.ErrUnsupported.Error()},
		"fail/bad signature":   {credential.ErrBadSignature, healthagents.CodeInvalid, "Invalid patient record", "", "", "the coverage credential's signature does not verify over its terms"},
		"fail/subject differs": {credential.ErrSubjectMismatch, healthagents.CodeInvalid, "Invalid patient record", "", "", "the coverage credential's subject is not the coverage's member"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newV1(t, healthagents.WithAttestor(stubAttestor{err: tc.err}))
			rec := patient("PT-1", nil, nil)
			f.register(t, rec)
			b, err := rec.Marshal()
			require.NoError(t, err)
			env, err := cipher.Seal(rec.PatientID, b, f.kr)
			require.NoError(t, err)
			svc := f.svc

			_, err = svc.VerifyEligibility(t.Context(), &env, "PROC001")
			assert.Equal(t, tc.code, healthagents.ErrorCode(err))
			assert.Equal(t, "Eligibility check failed: "+tc.rootLabel+": "+tc.rootDetail, healthagents.ErrorDetail(err))
			_, err = svc.ValidatePrescription(t.Context(), &env, "6809")
			assert.Equal(t, tc.code, healthagents.ErrorCode(err))
			assert.Equal(t, "Prescription validation failed: "+tc.rootLabel+": "+tc.rootDetail, healthagents.ErrorDetail(err))

			_, err = f.v1.VerifyEligibility(t.Context(), testOwner, healthagents.V1EligibilityRequest{PatientID: "PT-1", MemberID: "W1", ProcedureCode: "PROC001", ProviderNPI: providerNPI})
			assert.Equal(t, tc.code, healthagents.ErrorCode(err))
			assert.Equal(t, tc.v1Elig, healthagents.V1Code(err), healthagents.ErrorDetail(err))
			assert.Contains(t, healthagents.ErrorDetail(err), tc.rootDetail)
			_, err = f.v1.ValidatePrescription(t.Context(), testOwner, healthagents.V1PrescriptionRequest{PatientID: "PT-1", ProviderNPI: providerNPI,
				Medications: []healthagents.V1Medication{med("00071015523", "atorvastatin")}})
			assert.Equal(t, tc.code, healthagents.ErrorCode(err))
			assert.Equal(t, tc.v1Rx, healthagents.V1Code(err), healthagents.ErrorDetail(err))
			assert.Empty(t, f.sink.events, "nothing decided")
		})
	}
}

// TestExpiredCredentialV1: a credential that expires after its record was
// registered is refused at the decision, before any proof, with the same
// 422 UNTRUSTED_CREDENTIAL as one the chain refuses; registering it once
// expired is refused with the same status.
func TestExpiredCredentialV1(t *testing.T) {
	t.Parallel()
	day := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	f := newV1(t, healthagents.WithAttestor(stubAttestor{}), healthagents.WithClock(func() time.Time { return day }))
	k, err := credential.GenerateKey()
	require.NoError(t, err)
	rec := patient("PT-1", nil, nil)
	rec.Coverage.PayerID, rec.Coverage.PlanID, rec.Coverage.ExcludedProcedures = "60054", "PPO-GOLD", nil
	rec.Coverage.Credential, err = credential.Sign(k, credential.Terms{MemberID: "W1", Salt: "7", PayerID: "60054", PlanID: "PPO-GOLD",
		Status: record.StatusActive, Start: "2026-01-01", End: "2026-12-31", Deductible: 1500, DeductibleMet: 1500, Copay: 25,
		Expires: "2026-11-20", Nonce: 3})
	require.NoError(t, err)
	f.register(t, rec) // valid through its expiry day
	req := healthagents.V1EligibilityRequest{PatientID: "PT-1", MemberID: "W1", ProcedureCode: "PROC001", ProviderNPI: providerNPI}
	_, err = f.v1.VerifyEligibility(t.Context(), testOwner, req)
	require.NoError(t, err)

	day = day.AddDate(0, 0, 1)
	_, err = f.v1.VerifyEligibility(t.Context(), testOwner, req)
	assert.Equal(t, healthagents.CodeUnprocessable, healthagents.ErrorCode(err))
	assert.Equal(t, "UNTRUSTED_CREDENTIAL: the payer's coverage credential has expired", healthagents.ErrorDetail(err))

	b, err := rec.Marshal()
	require.NoError(t, err)
	env, err := cipher.Seal(rec.PatientID, b, f.kr)
	require.NoError(t, err)
	err = f.v1.PutPatient(t.Context(), testOwner, "PT-1", &env)
	assert.Equal(t, healthagents.CodeUnprocessable, healthagents.ErrorCode(err))
	assert.Contains(t, healthagents.ErrorDetail(err), ": Untrusted coverage credential: the payer's coverage credential has expired")
}
