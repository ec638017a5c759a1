package federated

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/federated/synth"
	"github.com/healthagents/healthagents/record"
)

// memStore is a test-only Store. Every change goes through JSON, so whatever
// the coordinator relies on must survive the encoding a real store uses.
type memStore struct {
	mu     sync.Mutex
	rounds map[int][]byte
	subs   map[int][][]byte
	models [][]byte
	ledger []byte
	fail   error // when set, SaveFederated fails
	// after failAfter successful writes, the next write fails with failOnce.
	failIn   int
	failOnce error
}

func (s *memStore) failAfter(n int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failIn, s.failOnce = n, err
}

func newMemStore() *memStore {
	return &memStore{rounds: map[int][]byte{}, subs: map[int][][]byte{}}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func (s *memStore) SaveFederated(_ context.Context, ch Change) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	if s.failOnce != nil {
		if s.failIn == 0 {
			err := s.failOnce
			s.failOnce = nil
			return err
		}
		s.failIn--
	}
	for _, r := range ch.Rounds {
		s.rounds[r.Number] = mustJSON(r)
	}
	if ch.Submission != nil {
		s.subs[ch.Submission.Round] = append(s.subs[ch.Submission.Round], mustJSON(ch.Submission))
	}
	if ch.Model != nil {
		s.models = append(s.models, mustJSON(ch.Model))
	}
	if ch.Evaluated != nil {
		found := false
		for i, b := range s.models {
			var mv ModelVersion
			if err := json.Unmarshal(b, &mv); err != nil {
				return err
			}
			if mv.Version == ch.Evaluated.Version {
				s.models[i], found = mustJSON(ch.Evaluated), true
			}
		}
		if !found {
			return fmt.Errorf("no stored model version %s", ch.Evaluated.Version)
		}
	}
	if ch.Ledger != nil {
		s.ledger = mustJSON(ch.Ledger)
	}
	return nil
}

func (s *memStore) LoadFederated(context.Context) (*Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.models) == 0 {
		return nil, nil
	}
	snap := &Snapshot{}
	for _, m := range s.models {
		var mv ModelVersion
		if err := json.Unmarshal(m, &mv); err != nil {
			return nil, err
		}
		snap.History = append(snap.History, mv)
	}
	if s.ledger != nil {
		if err := json.Unmarshal(s.ledger, &snap.Ledger); err != nil {
			return nil, err
		}
	}
	top := -1
	for n := range s.rounds {
		top = max(top, n)
	}
	if top >= 0 {
		if err := json.Unmarshal(s.rounds[top], &snap.Round); err != nil {
			return nil, err
		}
		for _, b := range s.subs[top] {
			var sub Submission
			if err := json.Unmarshal(b, &sub); err != nil {
				return nil, err
			}
			snap.Submissions = append(snap.Submissions, sub)
		}
	}
	return snap, nil
}

// submissions returns every stored submission, decoded.
func (s *memStore) submissions(t *testing.T) []Submission {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Submission
	for _, bs := range s.subs {
		for _, b := range bs {
			var sub Submission
			require.NoError(t, json.Unmarshal(b, &sub))
			out = append(out, sub)
		}
	}
	return out
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// cohortParticipants builds n participants over deterministic synthetic
// cohorts (the three cohorts, repeated with other seeds when n > 3).
func cohortParticipants(t testing.TB, n, size int, seed uint64) ([]*Participant, [][]*record.Record) {
	t.Helper()
	var ps []*Participant
	var recs [][]*record.Record
	for i := range n {
		c := synth.ThreeCohorts(size, seed+uint64(i/3))[i%3]
		c.Name = fmt.Sprintf("%s-%d", c.Name, i)
		r := synth.Records(c)
		p, err := NewParticipant(ParticipantConfig{Org: fmt.Sprintf("hospital-%02d", i)}, r)
		require.NoError(t, err)
		ps = append(ps, p)
		recs = append(recs, r)
	}
	return ps, recs
}

// stepAll lets every participant act once on the current phase.
func stepAll(t testing.TB, ctx context.Context, api RoundAPI, ps []*Participant) {
	t.Helper()
	for _, p := range ps {
		_, err := p.Step(ctx, api)
		require.NoError(t, err)
	}
}

// runRound steps all participants until the round in progress is over and
// returns its number.
func runRound(t testing.TB, ctx context.Context, c *Coordinator, ps []*Participant) int {
	t.Helper()
	st, err := c.Status(ctx)
	require.NoError(t, err)
	for range 8 {
		stepAll(t, ctx, c, ps)
		now, err := c.Status(ctx)
		require.NoError(t, err)
		if now.Round != st.Round || !now.Phase.Open() {
			return st.Round
		}
	}
	t.Fatalf("round %d did not finish", st.Round)
	return -1
}

func noDPConfig(clock *fakeClock, participants int) Config {
	cfg := DefaultConfig()
	cfg.DisablePrivacy = true
	cfg.TargetParticipants = participants
	cfg.Clock = clock.Now
	return cfg
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func contextWithCancel(t *testing.T) (context.Context, context.CancelFunc) {
	return context.WithCancel(t.Context())
}
