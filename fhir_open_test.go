package healthagents_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/fhir/fhirtest"
)

// TestSealedFHIRBundle: a FHIR R4 Bundle sealed as the plaintext of an
// envelope is accepted wherever a record is, and a Bundle missing what the
// record needs is a 400 naming the resource and element.
func TestSealedFHIRBundle(t *testing.T) {
	t.Parallel()
	svc, kr := newService(t)
	env, err := cipher.Seal("example", fhirtest.PatientBundle("2026-01-01", "2026-12-31"), kr)
	require.NoError(t, err)
	res, err := svc.VerifyEligibility(t.Context(), &env, "PROC001")
	require.NoError(t, err)
	assert.True(t, res.Eligible)

	cov := fhirtest.Resource("coverage-example-2")
	cov["period"] = map[string]any{"end": "2026-12-31"}
	env, err = cipher.Seal("example", fhirtest.Bundle(fhirtest.Example("patient-example"), cov), kr)
	require.NoError(t, err)
	_, err = svc.VerifyEligibility(t.Context(), &env, "PROC001")
	var he *healthagents.Error
	require.ErrorAs(t, err, &he)
	assert.Equal(t, healthagents.CodeInvalid, he.Code)
	assert.Equal(t, "Eligibility check failed: Invalid patient record: FHIR R4 Bundle: Bundle.entry[1].resource(Coverage).period.start: missing", he.Detail)
}
