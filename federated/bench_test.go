package federated

import (
	"math/rand/v2"
	"testing"

	"github.com/healthagents/healthagents/federated/synth"
)

// BenchmarkLocalTraining measures a participant's local training on 1000
// records (800 after the held-out split): 10 full-batch epochs.
func BenchmarkLocalTraining(b *testing.B) {
	task := DefaultTask()
	m, err := task.NewModel()
	if err != nil {
		b.Fatal(err)
	}
	recs := synth.Records(synth.ThreeCohorts(1000, 1)[0])
	b.Run("prepare/records=1000", func(b *testing.B) {
		for b.Loop() {
			if _, err := NewParticipant(ParticipantConfig{Org: "h"}, recs); err != nil {
				b.Fatal(err)
			}
		}
	})
	train, _ := SplitHeldOut(recs, 0.2)
	d, _, err := task.Examples(train)
	if err != nil {
		b.Fatal(err)
	}
	w := make([]float64, m.NumWeights())
	rng := rand.New(rand.NewPCG(1, 1))
	b.Run("train/records=1000", func(b *testing.B) {
		for b.Loop() {
			if _, err := Train(b.Context(), m, w, d, task.Training, rng); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRound measures one complete in-process round (three hospitals of
// 1000 records: training, masking, share exchange, unmasking, persistence to
// the JSON test store).
func BenchmarkRound(b *testing.B) {
	ctx := b.Context()
	c, err := NewCoordinator(ctx, newMemStore(), noDPConfig(newFakeClock(), 3))
	if err != nil {
		b.Fatal(err)
	}
	c.cfg.MaxRounds = 1 << 30
	ps, _ := cohortParticipants(b, 3, 1000, 1)
	for b.Loop() {
		runRound(b, ctx, c, ps)
	}
}
