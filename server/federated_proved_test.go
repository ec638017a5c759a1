package server_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/federated/normproof"
	"github.com/healthagents/healthagents/federated/synth"
	"github.com/healthagents/healthagents/internal/testcache/normkeys"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
)

// cheatingAPI changes one organization's masked vector on its way out,
// after its honest proof was made.
type cheatingAPI struct {
	federated.RoundAPI
	cheat func(masked []uint64)
}

func (a cheatingAPI) Submit(ctx context.Context, org string, s federated.Submission) error {
	if s.Masked != nil {
		s.Masked = slices.Clone(s.Masked)
		a.cheat(s.Masked)
	}
	return a.RoundAPI.Submit(ctx, org, s)
}

// hide adds delta (signed words) to what a field-masked vector hides:
// masking is additive, so the vector now masks x + delta under the old
// proof.
func hide(masked []uint64, delta []int64) {
	words := make([]uint64, len(delta))
	for i, d := range delta {
		words[i] = uint64(d)
	}
	normproof.Field{}.Add(masked, normproof.Field{}.Encode(words))
}

type provedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *provedClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *provedClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Proved rounds over HTTP: the round carries proved and eval_bound, the
// shares their seed commitments, each masked vector its Groth16 proof. A
// fourth hospital whose vector hides an update beyond the clip bound (three
// clip norms added to one weight) or a NaN word is refused at submission
// with 400, and the round completes with the three others.
//
// One proved round per storage backend (four proving participants, ~1.5
// CPU-s): SQLite's hospital-d hides three clip norms, PostgreSQL's a NaN
// word, so a run with PostgreSQL (CI) sends both over HTTP and every
// backend keeps a proved round. Both cheats are refused by the same
// check (the proof no longer matches the masked vector); each is refused
// in-process on its own by federated's TestProvedRoundRefusesBadUpdates,
// and normproof's TestOutOfBoundUpdatesCannotBeProved shows neither can be
// proved.
func TestProvedRoundOverHTTP(t *testing.T) {
	t.Parallel()
	svc := normkeys.Service()
	pc, pp := svc.ProofGroup()
	const fracBits = 24
	cheats := map[string]func([]uint64){
		"sqlite": func(m []uint64) { // three clip norms
			d := make([]int64, len(m)/normproof.Limbs)
			d[0] = 3 << fracBits // clip norm 1 in fixed point, three times
			hide(m, d)
		},
		"postgres": func(m []uint64) { // a NaN word
			d := make([]int64, len(m)/normproof.Limbs)
			d[1] = int64(math.Float64bits(math.NaN()))
			hide(m, d)
		},
	}
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend, db *store.DB) {
		cheat := cheats[b.Name]
		require.NotNil(t, cheat, "a cheat for backend %s", b.Name)
		clock := &provedClock{t: time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)}
		cfg := testFedConfig()
		cfg.Proofs, cfg.TargetParticipants, cfg.Clock, cfg.FracBits = &pc, 4, clock.Now, fracBits
		s := newFedServer(t, db, cfg, nil, nil, nil)
		orgs := []string{"hospital-a", "hospital-b", "hospital-c", "hospital-d"}
		s.register(t, orgs...)
		var ps []*federated.Participant
		for i, org := range orgs {
			c := synth.ThreeCohorts(90, 23)[i%3]
			p, err := federated.NewParticipant(federated.ParticipantConfig{Org: org, Proofs: &pp}, synth.Records(c))
			require.NoError(t, err)
			ps = append(ps, p)
		}
		apis := make([]federated.RoundAPI, len(ps))
		for i, p := range ps {
			apis[i] = s.client(t, p.Org()).FederatedRoundAPI(p.Org())
		}
		apis[3] = cheatingAPI{RoundAPI: apis[3], cheat: cheat}

		r, err := s.client(t, "hospital-a").FederatedRound(t.Context())
		require.NoError(t, err)
		assert.True(t, r.Proved, "the round is a proved one")
		assert.Positive(t, r.EvalBound)

		refused := closeWithoutD(t, s, ps, apis, nil)
		var ce *client.Error
		require.True(t, errors.As(refused, &ce), "hospital-d was refused over HTTP: %v", refused)
		assert.Equal(t, 400, ce.StatusCode)
		assert.Contains(t, ce.Error(), "not proved within its bounds")
		assert.Equal(t, clock.Now(), time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC), "no phase deadline had to pass")
	})
}

// closeWithoutD steps the four hospitals (hospital-d the last, through
// apis[3]) until the round has made a new model version, hospital-d
// stopping once it is refused (onRefused, when given, runs then), and
// returns hospital-d's refusal. It fails t when the round does not complete
// in twelve passes, the clock never moved: the refused input must not hold
// the round up until a phase deadline.
func closeWithoutD(t *testing.T, s *fedServer, ps []*federated.Participant, apis []federated.RoundAPI, onRefused func()) error {
	t.Helper()
	var refused error
	for range 12 {
		for i, p := range ps {
			if i == 3 && refused != nil {
				continue // the refused hospital stops
			}
			_, err := p.Step(t.Context(), apis[i])
			if i == 3 && err != nil {
				refused = err
				if onRefused != nil {
					onRefused()
				}
				continue
			}
			require.NoError(t, err, p.Org())
		}
		m, err := s.client(t, "hospital-a").FederatedModel(t.Context())
		require.NoError(t, err)
		if m.ModelVersion != "1.0.0" {
			assert.Equal(t, 3, m.OrganizationsContributed, "the round completed with the three others")
			return refused
		}
	}
	t.Fatalf("the round did not complete before its phase deadline (hospital-d: %v)", refused)
	return nil
}
