package federated

import (
	"math"
	mrand "math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAddNoiseShare: the share lands on the first n words only, with the
// share's variance (two's complement, both signs).
func TestAddNoiseShare(t *testing.T) {
	t.Parallel()
	const n, share = 20000, 2.5e9
	x := make([]uint64, n+5)
	x[n] = 7
	require.NoError(t, addNoiseShare(mrand.NewChaCha8([32]byte{1}), x, n, share))
	var s2 float64
	neg := 0
	for _, w := range x[:n] {
		f := float64(int64(w))
		s2 += f * f
		if f < 0 {
			neg++
		}
	}
	assert.InDelta(t, 1, s2/n/(share*share), 5*math.Sqrt(2.0/n))
	assert.InDelta(t, 0.5, float64(neg)/n, 0.02)
	assert.Equal(t, []uint64{7, 0, 0, 0, 0}, x[n:], "evaluation words untouched")
}
