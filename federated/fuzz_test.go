package federated

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzSubmit sends arbitrary JSON submissions to a coordinator in the middle
// of a round: it must refuse or accept them without panicking, and the honest
// participants must still be able to finish the round whenever the fuzzed
// message was refused.
func FuzzSubmit(f *testing.F) {
	f.Add([]byte(`{"round":0,"masked":[1,2,3,4,5,6,7]}`), "hospital-00", 2)
	f.Add([]byte(`{"round":0,"reveals":[{"from":"hospital-00","of":"x","kind":"self_mask","share":{"x":1,"y":"AA=="}}]}`), "hospital-01", 3)
	f.Add([]byte(`{"round":0,"shares":{"from":"hospital-02","commitment":"AAAA","shares":[]}}`), "hospital-02", 1)
	f.Add([]byte(`{"round":0,"keys":{"id":"evil","cipher_public_key":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=","mask_public_key":"AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}}`), "evil", 0)
	f.Fuzz(func(t *testing.T, data []byte, org string, phases int) {
		var s Submission
		if json.Unmarshal(data, &s) != nil {
			return
		}
		ctx := context.Background()
		clock := newFakeClock()
		c, err := NewCoordinator(ctx, newMemStore(), noDPConfig(clock, 3))
		require.NoError(t, err)
		ps, _ := cohortParticipants(t, 3, 40, 9)
		for range min(max(phases, 0), 3) {
			stepAll(t, ctx, c, ps)
		}
		if c.Submit(ctx, org, s) != nil {
			runRound(t, ctx, c, ps)
		}
	})
}
