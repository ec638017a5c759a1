package federated_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/federated/normproof"
	"github.com/healthagents/healthagents/federated/secagg"
	"github.com/healthagents/healthagents/internal/testcache/normkeys"
)

// cheatAPI changes one organization's masked input (or proof) on the way
// out, after its honest proof was made.
type cheatAPI struct {
	federated.RoundAPI
	org   string
	cheat func(s *federated.Submission)
}

func (a cheatAPI) Submit(ctx context.Context, org string, s federated.Submission) error {
	if org == a.org && s.Masked != nil {
		s.Masked = slices.Clone(s.Masked)
		a.cheat(&s)
	}
	return a.RoundAPI.Submit(ctx, org, s)
}

// addHidden adds delta (two's complement words) to what a Field-masked
// vector hides: masking is additive.
func addHidden(masked []uint64, delta []uint64) {
	normproof.Field{}.Add(masked, normproof.Field{}.Encode(delta))
}

// One of four participants sends a masked update 3x the clip bound, a NaN
// word, an invalid field encoding, or no proof: it is refused at submission,
// and the round closes with the exact sum of the other three. Each refuses
// the sender for the rest of the round, so the round goes on as soon as
// the others have sent theirs (issue 27: a malformed input is refused like
// a failed proof; waiting for a correction let one participant stall every
// round until the phase deadline).
func TestProvedRoundRefusesBadUpdates(t *testing.T) {
	svc := normkeys.Service()
	pc, pp := svc.ProofGroup()
	for name, tc := range map[string]struct {
		cheat func(s *federated.Submission, plain []uint64, nw int)
		want  error
	}{
		"three times the clip bound": {func(s *federated.Submission, plain []uint64, nw int) {
			delta := make([]uint64, len(plain))
			for i := range nw {
				delta[i] = uint64(2 * int64(plain[i]))
			}
			addHidden(s.Masked, delta)
		}, federated.ErrUpdateProof},
		"NaN word": {func(s *federated.Submission, plain []uint64, nw int) {
			delta := make([]uint64, len(plain))
			delta[1] = math.Float64bits(math.NaN()) - plain[1]
			addHidden(s.Masked, delta)
		}, federated.ErrUpdateProof},
		"invalid encoding": {func(s *federated.Submission, _ []uint64, _ int) {
			copy(s.Masked[:normproof.Limbs], []uint64{math.MaxUint64, math.MaxUint64, math.MaxUint64, math.MaxUint64})
		}, secagg.ErrMalformedVector},
		"no proof": {func(s *federated.Submission, _ []uint64, _ int) { s.Proof = nil }, federated.ErrUpdateProof},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			now, _ := federated.NewTestClock() // never advanced: no phase deadline passes
			cfg := federated.DefaultConfig()
			cfg.DisablePrivacy, cfg.TargetParticipants, cfg.Clock, cfg.Proofs = true, 4, now, &pc
			c, err := federated.NewCoordinator(ctx, federated.NewTestStore(), cfg)
			require.NoError(t, err)
			base, err := c.Model(ctx)
			require.NoError(t, err)
			ps := federated.NewTestParticipants(t, 4, 120, 51, &pp)
			cheater := ps[3]
			api := cheatAPI{RoundAPI: c, org: cheater.Org(), cheat: func(s *federated.Submission) {
				tc.cheat(s, cheater.Plain(), len(base.Weights))
			}}
			step := func(p *federated.Participant) error {
				var a federated.RoundAPI = c
				if p == cheater {
					a = api
				}
				_, err := p.Step(ctx, a)
				return err
			}
			for range 3 { // advertise, share, mask; the cheater first
				for _, p := range []*federated.Participant{cheater, ps[0], ps[1], ps[2]} {
					err := step(p)
					if p == cheater && err != nil {
						assert.ErrorIs(t, err, federated.ErrInvalidSubmission)
						assert.ErrorIs(t, err, tc.want)
						again := c.Submit(ctx, cheater.Org(), federated.Submission{Round: 0, Masked: slices.Clone(cheater.Plain())})
						assert.ErrorIs(t, again, federated.ErrNotParticipant, "refused for the rest of the round")
						cv, err := c.View(ctx, cheater.Org())
						require.NoError(t, err)
						assert.True(t, cv.Done, "the refused sender has nothing more to send in this phase")
						continue
					}
					require.NoError(t, err)
				}
			}
			v, err := c.View(ctx, ps[0].Org())
			require.NoError(t, err)
			require.Equal(t, federated.PhaseUnmasking, v.Phase, "the refused input holds nothing up")
			for _, p := range ps[:3] {
				require.NoError(t, step(p))
			}
			h, err := c.History(ctx)
			require.NoError(t, err)
			require.Len(t, h, 2, "the round closed")
			assert.Equal(t, []string{"hospital-00", "hospital-01", "hospital-02"}, h[1].Contributors)
			for _, p := range ps[:3] {
				assert.True(t, p.Contributed(0), p.Org())
			}
			assert.False(t, cheater.Contributed(0), "a refused input is not a contribution")
			// The new model is the exact average of the three honest updates.
			q, err := secagg.NewQuantizer(cfg.ClipNorm, 24, 100)
			require.NoError(t, err)
			sum, err := secagg.Sum(ps[0].Plain(), ps[1].Plain(), ps[2].Plain())
			require.NoError(t, err)
			upd := q.Dequantize(sum[:len(base.Weights)])
			for i, w := range base.Weights {
				assert.InDelta(t, w+upd[i]/3, h[1].Weights[i], 1e-12)
			}
		})
	}
}

// A participant without a prover cannot take part in a proved round.
func TestProvedRoundNeedsProver(t *testing.T) {
	pc, _ := normkeys.Service().ProofGroup()
	cfg := federated.DefaultConfig()
	cfg.DisablePrivacy, cfg.Proofs = true, &pc
	c, err := federated.NewCoordinator(t.Context(), federated.NewTestStore(), cfg)
	require.NoError(t, err)
	p := federated.NewTestParticipants(t, 1, 50, 1, nil)[0]
	_, err = p.Step(t.Context(), c)
	assert.True(t, errors.Is(err, federated.ErrNoProver))
}

// A proved round survives a coordinator restart: seed commitments and
// proofs are replayed from the store, and the round completes exactly.
func TestProvedRoundResumesAfterRestart(t *testing.T) {
	ctx := t.Context()
	svc := normkeys.Service()
	pc, pp := svc.ProofGroup()
	now, _ := federated.NewTestClock()
	cfg := federated.DefaultConfig()
	cfg.DisablePrivacy, cfg.TargetParticipants, cfg.Clock, cfg.Proofs = true, 3, now, &pc
	store := federated.NewTestStore()
	c, err := federated.NewCoordinator(ctx, store, cfg)
	require.NoError(t, err)
	ps := federated.NewTestParticipants(t, 3, 100, 71, &pp)
	for range 2 { // advertise, share
		for _, p := range ps {
			_, err := p.Step(ctx, c)
			require.NoError(t, err)
		}
	}
	_, err = ps[0].Step(ctx, c) // one proved masked input before the restart
	require.NoError(t, err)
	c, err = federated.NewCoordinator(ctx, store, cfg)
	require.NoError(t, err)
	for range 2 { // the other two masked inputs, then unmasking
		for _, p := range ps {
			_, err := p.Step(ctx, c)
			require.NoError(t, err)
		}
	}
	h, err := c.History(ctx)
	require.NoError(t, err)
	require.Len(t, h, 2)
	assert.Len(t, h[1].Contributors, 3)
	require.NotNil(t, h[0].Metrics, "round 0 measured its starting model")
	assert.Equal(t, 3, h[0].Metrics.Participants)
}
