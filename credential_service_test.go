package healthagents_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/credential"
	"github.com/healthagents/healthagents/record"
)

// TestCoverageCredentialChecked: the service decides on a record whose
// coverage carries a valid payer credential, and refuses one whose terms
// were changed after signing or whose credential expired before the service
// date before any decision: 400 for the tampered terms, 422 for the
// expired credential.
func TestCoverageCredentialChecked(t *testing.T) {
	t.Parallel()
	svc, kr := newService(t) // service date 2026-11-21
	k, err := credential.GenerateKey()
	require.NoError(t, err)
	seal := func(expires string, tamper bool) *healthagents.PatientData {
		cov := &record.Coverage{PayerID: "60054", PlanID: "PPO-GOLD", MemberID: "M1", Status: "active", Start: "2026-01-01", End: "2026-12-31"}
		c, err := credential.Sign(k, credential.Terms{MemberID: "M1", Salt: "7", PayerID: cov.PayerID, PlanID: cov.PlanID, Status: cov.Status,
			Start: cov.Start, End: cov.End, Expires: expires, Nonce: 3})
		require.NoError(t, err)
		if tamper {
			c.Terms.Copay, cov.Copay = 5, 5
		}
		cov.Credential = c
		b, err := (&record.Record{PatientID: "PT-1", Coverage: cov}).Marshal()
		require.NoError(t, err)
		env, err := cipher.Seal("PT-1", b, kr)
		require.NoError(t, err)
		return &env
	}
	res, err := svc.VerifyEligibility(t.Context(), seal("2026-12-31", false), "PROC001")
	require.NoError(t, err)
	assert.True(t, res.Eligible)

	_, err = svc.VerifyEligibility(t.Context(), seal("2026-12-31", true), "PROC001")
	assert.Equal(t, healthagents.CodeInvalid, healthagents.ErrorCode(err))
	assert.Equal(t, "Eligibility check failed: Invalid patient record: record field 'coverage.credential.signature' does not verify over the signed terms", healthagents.ErrorDetail(err))

	// Expired: an untrusted credential, 422 as a revoked one (coverageRefusal).
	_, err = svc.VerifyEligibility(t.Context(), seal("2026-11-20", false), "PROC001")
	assert.Equal(t, healthagents.CodeUnprocessable, healthagents.ErrorCode(err))
	assert.Equal(t, "Eligibility check failed: Untrusted coverage credential: the payer's coverage credential has expired", healthagents.ErrorDetail(err))
}
