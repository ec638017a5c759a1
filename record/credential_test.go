package record_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/credential"
	"github.com/healthagents/healthagents/record"
)

func signedRecord(t *testing.T) *record.Record {
	t.Helper()
	k, err := credential.GenerateKey()
	require.NoError(t, err)
	cov := &record.Coverage{PayerID: "60054", PlanID: "PPO-GOLD", MemberID: "W123456789", Status: "active", Start: "2026-01-01", End: "2026-12-31",
		Deductible: 1500, DeductibleMet: 200, Copay: 25, ExcludedProcedures: []string{"PROC005"}, CoverageOverrides: map[string]int{"PROC002": 70}}
	c, err := credential.Sign(k, credential.Terms{MemberID: cov.MemberID, Salt: "42", PayerID: cov.PayerID, PlanID: cov.PlanID, Status: cov.Status,
		Start: cov.Start, End: cov.End, Deductible: cov.Deductible, DeductibleMet: cov.DeductibleMet, Copay: cov.Copay, Expires: "2026-12-31",
		Nonce: 1, Excluded: cov.ExcludedProcedures, Overrides: cov.CoverageOverrides})
	require.NoError(t, err)
	cov.Credential = c
	return &record.Record{PatientID: "PT-1", Coverage: cov}
}

func parse(t *testing.T, r *record.Record) error {
	t.Helper()
	b, err := json.Marshal(r)
	require.NoError(t, err)
	_, err = record.Parse(b)
	return err
}

// TestCoverageCredential: a record's coverage.credential must verify and
// say exactly what the coverage block says; each failure is a 400-class
// FieldError naming the field, never its value.
func TestCoverageCredential(t *testing.T) {
	t.Parallel()
	require.NoError(t, parse(t, signedRecord(t)))

	for name, tc := range map[string]struct {
		mutate func(r *record.Record)
		field  string
	}{
		"fail/copay changed in the block":  {func(r *record.Record) { r.Coverage.Copay = 0 }, "coverage.copay"},
		"fail/window widened in the block": {func(r *record.Record) { r.Coverage.End = "2027-12-31" }, "coverage.end"},
		"fail/exclusion dropped":           {func(r *record.Record) { r.Coverage.ExcludedProcedures = nil }, "coverage.excluded_procedures"},
		"fail/other member":                {func(r *record.Record) { r.Coverage.MemberID = "W000000000" }, "coverage.member_id"},
		"fail/signed term altered":         {func(r *record.Record) { r.Coverage.Credential.Terms.Copay = 0; r.Coverage.Copay = 0 }, "coverage.credential.signature"},
		"fail/garbled signature":           {func(r *record.Record) { r.Coverage.Credential.Signature = "00" }, "coverage.credential"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := signedRecord(t)
			tc.mutate(r)
			err := parse(t, r)
			var fe *record.FieldError
			require.True(t, errors.As(err, &fe), "%v", err)
			assert.Equal(t, tc.field, fe.Field)
			assert.NotContains(t, err.Error(), "W123456789")
		})
	}

	r := signedRecord(t)
	assert.False(t, r.Coverage.CredentialExpired(time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC)))
	assert.True(t, r.Coverage.CredentialExpired(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)))
	assert.False(t, (&record.Coverage{}).CredentialExpired(time.Now()), "no credential, nothing to expire")
}
