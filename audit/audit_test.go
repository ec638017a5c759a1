package audit_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/audit"
)

func entry(action string) audit.Entry {
	return audit.Entry{
		Time: time.Date(2026, 11, 22, 1, 2, 3, 456789000, time.UTC), ActorType: audit.ActorKey, KeyID: "4Gq0bT2xZk",
		Organization: "hosp-a", ClientIP: "192.0.2.7", Action: action, PatientRef: "ab", Outcome: audit.OutcomeSuccess,
		Status: 200, RequestID: "r1",
	}
}

// TestCanonicalIsStable pins the encoding hashes cover: changing it would
// make every stored chain fail verification.
func TestCanonicalIsStable(t *testing.T) {
	t.Parallel()
	e := entry(audit.ActionPatientPut)
	e.Seq = 7
	assert.Equal(t, `[7,1795309323456789,"key","4Gq0bT2xZk","hosp-a","192.0.2.7","patient.put","ab","",0,"success",200,"r1"]`, string(audit.Canonical(e)))
	h, err := audit.ChainHash(audit.GenesisHash, e)
	require.NoError(t, err)
	assert.Len(t, h, 64)
	_, err = audit.ChainHash("zz", e)
	assert.Error(t, err)
}

func TestChainerAndVerifier(t *testing.T) {
	t.Parallel()
	c := audit.NewChainer(0, "")
	var es []audit.Entry
	for _, a := range []string{audit.ActionPatientPut, audit.ActionEligibilityVerifyV1, audit.ActionPatientDelete, audit.ActionPrescriptionRead} {
		e, err := c.Next(entry(a))
		require.NoError(t, err)
		es = append(es, e)
	}
	assert.Equal(t, audit.GenesisHash, es[0].PrevHash)
	for i := 1; i < len(es); i++ {
		assert.Equal(t, es[i-1].Hash, es[i].PrevHash)
		assert.Equal(t, int64(i+1), es[i].Seq)
	}
	verify := func(es []audit.Entry) audit.Verification {
		var v audit.Verifier
		for _, e := range es {
			v.Add(e)
		}
		return v.Result()
	}
	ok := verify(es)
	assert.True(t, ok.Valid)
	assert.Equal(t, int64(4), ok.Entries)
	assert.Equal(t, es[3].Hash, ok.HeadHash)
	assert.Equal(t, audit.Verification{Valid: true, HeadHash: audit.GenesisHash}, verify(nil))

	broken := func(mut func([]audit.Entry) []audit.Entry) int64 {
		cp := append([]audit.Entry(nil), es...)
		v := verify(mut(cp))
		require.False(t, v.Valid)
		require.NotNil(t, v.FirstBrokenSeq)
		return *v.FirstBrokenSeq
	}
	tests := []struct {
		name string
		mut  func([]audit.Entry) []audit.Entry
		want int64
	}{
		{"altered field", func(es []audit.Entry) []audit.Entry { es[2].Status = 500; return es }, 3},
		{"altered time", func(es []audit.Entry) []audit.Entry { es[1].Time = es[1].Time.Add(time.Microsecond); return es }, 2},
		{"removed entry", func(es []audit.Entry) []audit.Entry { return append(es[:1], es[2:]...) }, 2},
		{"removed first", func(es []audit.Entry) []audit.Entry { return es[1:] }, 1},
		{"swapped", func(es []audit.Entry) []audit.Entry { es[1], es[2] = es[2], es[1]; return es }, 2},
		{"rehashed but unlinked", func(es []audit.Entry) []audit.Entry {
			es[2].KeyID = "someone"
			es[2].Hash, _ = audit.ChainHash(es[2].PrevHash, es[2])
			return es
		}, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, broken(tc.mut))
		})
	}
}

func TestOutcomeOf(t *testing.T) {
	t.Parallel()
	for status, want := range map[int]string{200: "success", 201: "success", 400: "error", 401: "denied", 403: "denied", 404: "error", 503: "error"} {
		assert.Equal(t, want, audit.OutcomeOf(status), "%d", status)
	}
}
