package healthagents

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDecisionRecordCarriesABatchedProof: a root-family answer carries
// proof_data and public_inputs beside blockchain_tx exactly when its
// statement was anchored in a batch — the batch's transaction does not
// carry the proof, so a third party needs it from the answer; a
// single-record decision's answer is unchanged.
func TestDecisionRecordCarriesABatchedProof(t *testing.T) {
	t.Parallel()
	att := &Attestation{Verified: true, TxHash: "0x01", ProofData: "0xabcd", PublicInputs: []string{"0x01", "0x02", "0x03"},
		Statement: &Statement{}, Issuer: "self"}
	single, err := json.Marshal(EligibilityResult{DecisionRecord: decisionRecord(att)})
	require.NoError(t, err)
	assert.NotContains(t, string(single), "proof_data")
	assert.NotContains(t, string(single), "public_inputs")

	att.Statement = &Statement{Batch: &StatementBatch{Root: "5", Size: 2, LeafIndex: 1, Path: []string{"7"}}}
	batched, err := json.Marshal(EligibilityResult{DecisionRecord: decisionRecord(att)})
	require.NoError(t, err)
	var back map[string]any
	require.NoError(t, json.Unmarshal(batched, &back))
	assert.Equal(t, "0xabcd", back["proof_data"])
	assert.Equal(t, []any{"0x01", "0x02", "0x03"}, back["public_inputs"])
	assert.Equal(t, "0x01", back["blockchain_tx"])

	att.Verified = false
	assert.Zero(t, decisionRecord(att), "an unverified attestation records nothing")
}
