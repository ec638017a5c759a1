package healthagents_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
)

func TestV1Registry(t *testing.T) {
	t.Parallel()
	f := newV1(t)
	f.register(t, patient("PT-1", nil, nil))
	b, err := patient("PT-1", nil, nil).Marshal()
	require.NoError(t, err)
	env, err := cipher.Seal("PT-1", b, f.kr)
	require.NoError(t, err)

	err = f.v1.PutPatient(t.Context(), testOwner, "PT-9", &env)
	assert.Equal(t, healthagents.CodeInvalid, healthagents.ErrorCode(err), "path and envelope ids differ")
	bad := env
	bad.DataHash = "00" + bad.DataHash[2:]
	err = f.v1.PutPatient(t.Context(), testOwner, "PT-1", &bad)
	assert.Equal(t, healthagents.CodeInvalid, healthagents.ErrorCode(err), "hash mismatch")

	require.NoError(t, f.v1.DeletePatient(t.Context(), testOwner, "PT-1"))
	err = f.v1.DeletePatient(t.Context(), testOwner, "PT-1")
	assert.Equal(t, healthagents.V1PatientNotFound, healthagents.V1Code(err))
	_, err = f.v1.VerifyEligibility(t.Context(), testOwner, healthagents.V1EligibilityRequest{PatientID: "PT-1", MemberID: "W1", ProcedureCode: "PROC001", ProviderNPI: providerNPI})
	assert.Equal(t, healthagents.V1PatientNotFound, healthagents.V1Code(err))
}
