package federated

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/federated/synth"
)

// Test-only access for the external tests of this directory (proved rounds
// need package normproof, which imports this package).

// NewTestStore returns the in-memory test store.
func NewTestStore() Store { return newMemStore() }

// NewTestClock returns a fake clock and the function that moves it.
func NewTestClock() (now func() time.Time, add func(time.Duration)) {
	c := newFakeClock()
	return c.Now, c.Add
}

// NewTestParticipants builds n participants over the synthetic cohorts.
func NewTestParticipants(t testing.TB, n, size int, seed uint64, proofs *ParticipantProofs) []*Participant {
	t.Helper()
	var ps []*Participant
	for i := range n {
		c := synth.ThreeCohorts(size, seed+uint64(i/3))[i%3]
		p, err := NewParticipant(ParticipantConfig{Org: fmt.Sprintf("hospital-%02d", i), Proofs: proofs}, synth.Records(c))
		require.NoError(t, err)
		ps = append(ps, p)
	}
	return ps
}

// Plain is the participant's last quantized input (two's complement words).
func (p *Participant) Plain() []uint64 { return p.plain }
