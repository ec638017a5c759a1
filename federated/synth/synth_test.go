package synth

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRecordsAreDeterministicAndCohortsDiffer(t *testing.T) {
	t.Parallel()
	cs := ThreeCohorts(2000, 1)
	require.Equal(t, Records(cs[0]), Records(cs[0]))
	prevalence := make([]float64, len(cs))
	for i, c := range cs {
		rs := Records(c)
		require.Len(t, rs, 2000)
		for _, r := range rs {
			require.NoError(t, r.Validate())
			if r.Diagnosis == "positive" {
				prevalence[i]++
			}
		}
		prevalence[i] /= 2000
	}
	assert.Greater(t, prevalence[1], prevalence[0]+0.1, "the diabetes clinic has more positives")
	assert.Less(t, prevalence[2], prevalence[0]-0.1, "the young practice has fewer")
}
