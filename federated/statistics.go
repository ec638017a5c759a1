package federated

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/bits"
	"slices"
	"time"
)

// The statistics round's input holds, per learned feature (task order),
// these words: the participant's count of training values of the feature,
// and the sums of u and u² in fixed point, u being the value clipped to the
// feature's range and mapped onto [0, 1]. Every word of one participant is
// at most limit·2^f (limit: the records it may report, MaxEvalRecords or
// its cohort size), so the sum over MaxParticipants cannot wrap the 64-bit
// ring (statsFracBits chooses f).
const (
	statCount = iota // training records with a value of the feature
	statSum          // Σ round(u · 2^f)
	statSum2         // Σ round(u² · 2^f)
	statsWords
)

// statsFracBits is the fixed-point precision of a statistics round: as
// many fractional bits, at most 32, as keep maxParticipants·maxRecords
// values of at most 1 below 2^62.
func statsFracBits(maxParticipants, maxRecords int) (uint, error) {
	n := uint64(maxParticipants) * uint64(maxRecords)
	f := 62 - bits.Len64(n)
	if f > 32 {
		f = 32
	}
	if f < 16 {
		return 0, fmt.Errorf("%w: %d participants of %d records leave the statistics round %d fractional bits (16 needed)", ErrConfig, maxParticipants, maxRecords, f)
	}
	return uint(f), nil
}

// statsInput is a participant's statistics-round input over its raw
// training values (rawExamples): at most limit records are counted.
func statsInput(t Task, raw Dataset, fracBits uint, limit int) []uint64 {
	idx := t.learned()
	out := make([]uint64, statsWords*len(idx))
	scale := math.Ldexp(1, int(fracBits))
	n := min(len(raw.X), max(limit, 0))
	for k, i := range idx {
		f := t.Features[i]
		w := out[statsWords*k : statsWords*(k+1)]
		for _, row := range raw.X[:n] {
			v := row[i]
			if math.IsNaN(v) {
				continue
			}
			u := math.Max(0, math.Min(1, (v-f.Min)/(f.Max-f.Min)))
			w[statCount]++
			w[statSum] += uint64(math.Round(u * scale))
			w[statSum2] += uint64(math.Round(u * u * scale))
		}
	}
	return out
}

// scalingOf derives the learned scaling from the summed statistics words of
// a round whose participants may together report at most bound records. A
// sum that honest participants cannot produce (a count above bound, a sum
// outside [0, count], a sum of squares above the sum, a negative variance)
// is refused: one participant masked values outside its range, and the
// round is abandoned.
func scalingOf(t Task, sum []uint64, fracBits uint, bound int64) ([]LearnedScaling, error) {
	idx := t.learned()
	if len(sum) != statsWords*len(idx) {
		return nil, fmt.Errorf("%w: %d statistics words for %d learned features", ErrBounds, len(sum), len(idx))
	}
	one := math.Ldexp(1, int(fracBits))
	out := make([]LearnedScaling, 0, len(idx))
	for k, i := range idx {
		f := t.Features[i]
		w := sum[statsWords*k : statsWords*(k+1)]
		n, s1, s2 := w[statCount], w[statSum], w[statSum2]
		switch {
		case n == 0:
			return nil, fmt.Errorf("%w: no participant has a value of feature %q", ErrBounds, f.Name)
		case n > uint64(max(bound, 0)):
			return nil, fmt.Errorf("%w: feature %q: %d values, the participants may report %d", ErrBounds, f.Name, n, bound)
		case s1 > n<<fracBits || s2 > s1:
			return nil, fmt.Errorf("%w: feature %q: sums outside the feature's range", ErrBounds, f.Name)
		}
		m := float64(s1) / (float64(n) * one)
		v := float64(s2)/(float64(n)*one) - m*m
		if v < -2/one {
			return nil, fmt.Errorf("%w: feature %q: sums of no possible values", ErrBounds, f.Name)
		}
		r := f.Max - f.Min
		sd := math.Sqrt(max(v, 0)) * r
		if !(sd > r*1e-9) {
			sd = r // a constant feature: every z is 0 whatever the scale
		}
		out = append(out, LearnedScaling{Name: f.Name, Mean: f.Min + m*r, Scale: sd, Count: int64(n)})
	}
	if _, err := t.WithScaling(out); err != nil {
		return nil, err
	}
	return out, nil
}

// finishStatistics closes a statistics round: the summed statistics become
// the learned scaling, released as a model version with the same weights
// that every later version carries. The release is not noised and not
// charged to the privacy ledger (docs/federated-privacy.md says why).
func (c *Coordinator) finishStatistics(ctx context.Context, now time.Time, sum []uint64) error {
	r := c.round
	bound, err := c.evalBoundOf(ctx, r, r.U3)
	if err != nil {
		return err
	}
	sc, err := scalingOf(c.cfg.Task, sum, r.FracBits, bound)
	if err != nil {
		return c.abandon(ctx, now, "statistics refused: "+err.Error())
	}
	base := c.history[len(c.history)-1]
	if base.Version != r.BaseVersion {
		return fmt.Errorf("%w: round %d started from %s, history ends at %s", ErrStoreMismatch, r.Number, r.BaseVersion, base.Version)
	}
	mv := &ModelVersion{
		Version: versionString(len(c.history)), Round: r.Number, Hash: base.Hash, Parent: base.Version,
		Contributors: slices.Clone(r.U3), Weights: slices.Clone(base.Weights), EpsilonSpent: base.EpsilonSpent,
		Scaling: sc, CreatedAt: now.UTC(),
	}
	done := r.clone()
	done.Phase, done.ResultVersion = PhaseClosed, mv.Version
	done.Outcome = fmt.Sprintf("statistics learned from %d contributors", len(r.U3))
	if err := c.store.SaveFederated(ctx, Change{Rounds: []*RoundState{done}, Model: mv}); err != nil {
		return fmt.Errorf("federated: saving round %d: %w", r.Number, err)
	}
	c.round, c.ended = done, endOf(done)
	c.history = append(c.history, *mv)
	c.notify()
	c.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "federated statistics round closed", slog.Int("round", r.Number), slog.String("version", mv.Version), slog.Int("contributors", len(r.U3)))
	return c.openNext(ctx, now)
}

// Scaling returns the learned scaling of the task's learned features, or
// nil while no statistics round has closed (or the task learns none).
func (c *Coordinator) Scaling() []LearnedScaling {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.history[len(c.history)-1].Scaling)
}
