package federated

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/federated/secagg"
)

// runRoundsConcurrently runs RunRound once for every participant at the same
// time and returns the views they returned.
func runRoundsConcurrently(t *testing.T, c *Coordinator, ps []*Participant) []*RoundView {
	t.Helper()
	type res struct {
		i   int
		v   *RoundView
		err error
	}
	out := make(chan res, len(ps))
	for i, p := range ps {
		go func() {
			v, err := p.RunRound(t.Context(), c, time.Hour) // progress comes from Changed
			out <- res{i, v, err}
		}()
	}
	views := make([]*RoundView, len(ps))
	for range ps {
		r := <-out
		require.NoError(t, r.err)
		views[r.i] = r.v
	}
	return views
}

// RunRound returns at the next round without joining it, and that round
// closes as soon as its participants are ready: the clock never moves, so no
// deadline can be what ended any phase, and no round number is burnt.
func TestRunRoundDoesNotJoinNextRound(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	c, err := NewCoordinator(t.Context(), newMemStore(), noDPConfig(clock, 3))
	require.NoError(t, err)
	ps, _ := cohortParticipants(t, 3, 80, 31)

	for _, v := range runRoundsConcurrently(t, c, ps) {
		require.Equal(t, 1, v.Round)
		assert.Equal(t, PhaseAdvertiseKeys, v.Phase)
		assert.False(t, v.Done, "the returned view was not acted on")
	}
	for _, p := range ps {
		assert.True(t, p.Contributed(0), p.Org())
		assert.False(t, p.Contributed(1), "round 1 not joined yet")
	}
	st, err := c.Status(t.Context())
	require.NoError(t, err)
	assert.Equal(t, Status{Round: 1, Phase: PhaseAdvertiseKeys, Participants: 0, Version: "1.0.1"}, st,
		"nobody advertised keys for round 1 before being asked to")

	for _, v := range runRoundsConcurrently(t, c, ps) {
		require.Equal(t, 2, v.Round)
	}
	h, err := c.History(t.Context())
	require.NoError(t, err)
	require.Len(t, h, 3)
	assert.Equal(t, 0, h[1].Round)
	assert.Equal(t, 1, h[2].Round, "round 1 produced the next version: no round was abandoned or skipped")
	assert.Len(t, h[2].Contributors, 3)
}

// A round without proofs takes neither proofs nor seed commitments.
func TestUnprovedRoundRefusesProofFields(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c, err := NewCoordinator(ctx, newMemStore(), noDPConfig(newFakeClock(), 3))
	require.NoError(t, err)
	ps, _ := cohortParticipants(t, 3, 80, 33)
	stepAll(t, ctx, c, ps) // advertise
	v, err := c.View(ctx, ps[0].Org())
	require.NoError(t, err)
	require.Equal(t, PhaseShareKeys, v.Phase)
	require.False(t, v.Proved)
	m, err := ps[0].client.ShareKeys(v.Roster, v.Threshold)
	require.NoError(t, err)
	err = c.Submit(ctx, ps[0].Org(), Submission{Round: 0, Shares: m, SeedCommitments: map[string][]byte{"hospital-01": make([]byte, 32)}})
	assert.ErrorIs(t, err, ErrInvalidSubmission)
	require.NoError(t, c.Submit(ctx, ps[0].Org(), Submission{Round: 0, Shares: m}))
	stepAll(t, ctx, c, ps[1:]) // the others share
	err = c.Submit(ctx, ps[0].Org(), Submission{Round: 0, Masked: make([]uint64, v.Dim), Proof: []byte{1}})
	assert.ErrorIs(t, err, ErrInvalidSubmission)
}

// flakyProver fails its first proof (as when the proving key cannot be
// fetched yet) and proves afterwards; acceptAll verifies anything.
type flakyProver struct{ calls int }

func (f *flakyProver) ProveUpdate(context.Context, *UpdateStatement, *UpdateSecret) ([]byte, error) {
	f.calls++
	if f.calls == 1 {
		return nil, errors.New("proving key unavailable")
	}
	return []byte{1}, nil
}

type acceptAll struct{}

func (acceptAll) VerifyUpdate(context.Context, *UpdateStatement, []byte) error { return nil }

// A proof that fails once is retried over the same masked input (the
// round's masking runs once), and the round closes with every participant.
func TestFailedProofIsRetried(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	cfg := noDPConfig(newFakeClock(), 3)
	cfg.Proofs = &ProofConfig{Group: secagg.Ring64{}, Verifier: acceptAll{}}
	c, err := NewCoordinator(ctx, newMemStore(), cfg)
	require.NoError(t, err)
	ps, _ := cohortParticipants(t, 3, 100, 7)
	flaky := &flakyProver{}
	for i, p := range ps {
		var prover UpdateProver = flaky
		if i > 0 {
			prover = &flakyProver{calls: 1}
		}
		p.cfg.Proofs = &ParticipantProofs{Group: secagg.Ring64{}, Prover: prover}
	}
	stepAll(t, ctx, c, ps) // keys
	stepAll(t, ctx, c, ps) // shares
	_, err = ps[0].Step(ctx, c)
	require.ErrorContains(t, err, "proving key unavailable")
	require.Equal(t, 0, runRound(t, ctx, c, ps))
	h, err := c.History(ctx)
	require.NoError(t, err)
	require.Len(t, h, 2)
	assert.Len(t, h[1].Contributors, 3)
	assert.Equal(t, 2, flaky.calls)
}
