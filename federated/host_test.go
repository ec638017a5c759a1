package federated

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// endsRoundAfterSubmit is the coordinator, but the first look org takes
// after submitting finds the round already over: the other participants
// are driven past the phase deadline first (the hosted one never shares, so
// the round is abandoned). It is the race in which the round ended between
// a hosted participant's keys and Join's report of the phase.
type endsRoundAfterSubmit struct {
	*Coordinator
	clock  *fakeClock
	org    string
	others []*Participant

	mu        sync.Mutex
	submitted bool
	ended     bool
}

func (e *endsRoundAfterSubmit) Submit(ctx context.Context, org string, s Submission) error {
	err := e.Coordinator.Submit(ctx, org, s)
	e.mu.Lock()
	defer e.mu.Unlock()
	if org == e.org && err == nil {
		e.submitted = true
	}
	return err
}

func (e *endsRoundAfterSubmit) View(ctx context.Context, org string) (*RoundView, error) {
	e.mu.Lock()
	if org == e.org && e.submitted && !e.ended {
		e.ended = true
		for range 4 { // phase by phase, until round 0 is over
			if st, err := e.Coordinator.Status(ctx); err != nil || st.Round != 0 {
				break
			}
			for _, p := range e.others {
				_, _ = p.Step(ctx, e.Coordinator)
			}
			e.clock.Add(e.Coordinator.cfg.PhaseTimeout)
		}
	}
	e.mu.Unlock()
	return e.Coordinator.View(ctx, org)
}

// TestHostedJoinReportsTheRoundsEnd: when the round a hosted participant
// joined has already ended by the time Join reports, the answer's phase is
// how it ended, never advertise_keys: a caller reading advertise_keys
// would submit to a round that is gone (bench's rare 400 "not the open
// round").
func TestHostedJoinReportsTheRoundsEnd(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	clock := newFakeClock()
	c, err := NewCoordinator(ctx, newMemStore(), noDPConfig(clock, 3))
	require.NoError(t, err)
	ps, recs := cohortParticipants(t, 3, 60, 7)
	stepAll(t, ctx, c, ps[:2]) // two advertise; the third is hosted
	api := &endsRoundAfterSubmit{Coordinator: c, clock: clock, org: "hospital-02", others: ps[:2]}
	h, err := NewParticipantHost(api)
	require.NoError(t, err)
	defer h.Close()
	j, err := h.Join(ctx, "hospital-02", 0, recs[2])
	require.NoError(t, err)
	assert.Equal(t, 0, j.Round)
	assert.Equal(t, PhaseAbandoned, j.Phase, "the round ended before Join reported it")
	st, err := c.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Round)
}
