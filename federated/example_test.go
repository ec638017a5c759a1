package federated_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/federated/synth"
)

// exampleStore keeps the coordinator's state in memory for the example; a
// deployment passes the SQL store from package store.
type exampleStore struct {
	mu   sync.Mutex
	snap federated.Snapshot
}

func (s *exampleStore) LoadFederated(context.Context) (*federated.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.snap.History) == 0 {
		return nil, nil
	}
	b, _ := json.Marshal(s.snap)
	var out federated.Snapshot
	return &out, json.Unmarshal(b, &out)
}

func (s *exampleStore) SaveFederated(_ context.Context, ch federated.Change) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range ch.Rounds {
		if s.snap.Round == nil || r.Number != s.snap.Round.Number {
			s.snap.Submissions = nil
		}
		s.snap.Round = r
	}
	if ch.Submission != nil {
		s.snap.Submissions = append(s.snap.Submissions, *ch.Submission)
	}
	if ch.Model != nil {
		s.snap.History = append(s.snap.History, *ch.Model)
	}
	if ch.Evaluated != nil {
		for i := range s.snap.History {
			if s.snap.History[i].Version == ch.Evaluated.Version {
				s.snap.History[i] = *ch.Evaluated
			}
		}
	}
	if ch.Ledger != nil {
		s.snap.Ledger = ch.Ledger
	}
	return nil
}

// Three hospitals with different populations train the default diagnosis
// model in-process, with secure aggregation and without differential privacy.
func Example() {
	ctx := context.Background()
	cfg := federated.DefaultConfig()
	cfg.DisablePrivacy = true // see docs/federated-privacy.md for what DP costs here
	coord, err := federated.NewCoordinator(ctx, &exampleStore{}, cfg)
	if err != nil {
		panic(err)
	}
	var hospitals []*federated.Participant
	for i, cohort := range synth.ThreeCohorts(400, 7) {
		p, err := federated.NewParticipant(federated.ParticipantConfig{Org: fmt.Sprintf("hospital-%d", i)}, synth.Records(cohort))
		if err != nil {
			panic(err)
		}
		hospitals = append(hospitals, p)
	}
	for round := 0; round < 3; round++ {
		for phase := 0; phase < 4; phase++ { // advertise, share, mask, unmask
			for _, h := range hospitals {
				if _, err := h.Step(ctx, coord); err != nil {
					panic(err)
				}
			}
		}
		h, _ := coord.History(ctx)
		m, met := h[len(h)-1], federated.LatestMetrics(h)
		fmt.Printf("round %d -> model %s from %d hospitals, held-out accuracy of %s measured: %v\n",
			m.Round, m.Version, len(m.Contributors), met.EvaluatedVersion, met.Accuracy > 0)
	}
	// Output:
	// round 0 -> model 1.0.1 from 3 hospitals, held-out accuracy of 1.0.0 measured: true
	// round 1 -> model 1.0.2 from 3 hospitals, held-out accuracy of 1.0.1 measured: true
	// round 2 -> model 1.0.3 from 3 hospitals, held-out accuracy of 1.0.2 measured: true
}
