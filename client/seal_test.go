package client_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/record"
)

func sampleRecord() *record.Record {
	return &record.Record{
		PatientID: "PT-000123",
		BirthDate: "1968-04-02",
		Coverage: &record.Coverage{
			PayerID: "60054", PlanID: "PPO-GOLD", MemberID: "W123456789",
			Status: "active", Start: "2026-01-01", End: "2027-12-31",
			Deductible: 1500, DeductibleMet: 1500, Copay: 25,
		},
		Conditions: []string{"E11.9"},
	}
}

func TestSealRecord(t *testing.T) {
	t.Parallel()
	key, err := cipher.GenerateKey()
	require.NoError(t, err)
	other, err := cipher.GenerateKey()
	require.NoError(t, err)
	rec := sampleRecord()

	env, err := client.SealRecord(rec, key+","+other)
	require.NoError(t, err)
	assert.Equal(t, "PT-000123", env.PatientID)
	assert.Regexp(t, `^[0-9a-f]{64}$`, env.DataHash)
	assert.Regexp(t, `^bafkrei`, env.IPFSCID, "a CIDv1 raw leaf, as ipfs add --cid-version=1 makes for small files")

	// The server's keyring opens it, and the record inside is rec.
	kr, err := cipher.ParseKeyring(key)
	require.NoError(t, err)
	plain, err := kr.Open(t.Context(), *env)
	require.NoError(t, err)
	got, err := record.Parse(plain)
	require.NoError(t, err)
	assert.Equal(t, rec.Coverage, got.Coverage)
	assert.Equal(t, record.Schema, got.Schema)

	// Sealing twice gives different ciphertexts (random IV) of one hash.
	env2, err := client.SealRecord(rec, key)
	require.NoError(t, err)
	assert.NotEqual(t, env.EncryptedData, env2.EncryptedData)
	assert.Equal(t, env.DataHash, env2.DataHash)
}

func TestSealRecordErrors(t *testing.T) {
	t.Parallel()
	key, err := cipher.GenerateKey()
	require.NoError(t, err)
	noCoverageEnd := sampleRecord()
	noCoverageEnd.Coverage.End = ""
	for _, tc := range []struct {
		name string
		rec  *record.Record
		key  string
	}{
		{"fail/nil record", nil, key},
		{"fail/bad key", sampleRecord(), "not-a-key"},
		{"fail/empty key", sampleRecord(), ""},
		{"fail/no patient id", &record.Record{}, key},
		{"fail/invalid record", noCoverageEnd, key},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := client.SealRecord(tc.rec, tc.key)
			require.Error(t, err)
			assert.NotContains(t, err.Error(), key)
			if tc.rec != nil {
				assert.NotContains(t, err.Error(), "W123456789")
			}
		})
	}
}
