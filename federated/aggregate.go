package federated

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"slices"
	"time"

	"github.com/healthagents/healthagents/federated/dp"
	"github.com/healthagents/healthagents/federated/secagg"
)

// finish unmasks the sum, checks it, applies DP noise, and commits the new
// model version, the ledger and the closed round in one change.
func (c *Coordinator) finish(ctx context.Context, now time.Time) error {
	r, d := c.round, c.data
	tr := secagg.Transcript{
		Params:      secagg.Params{Session: r.Session, Dim: r.Dim, Group: c.group(r)},
		Threshold:   r.Threshold,
		Roster:      r.Roster,
		Commitments: make(map[string][]byte, len(r.U2)),
		Inputs:      make(map[string]secagg.MaskedInput, len(r.U3)),
	}
	for _, id := range r.U2 {
		tr.Commitments[id] = d.commitments[id]
	}
	for _, id := range r.U3 {
		tr.Inputs[id] = d.inputs[id]
	}
	for _, id := range sortedKeys(d.reveals) {
		tr.Reveals = append(tr.Reveals, d.reveals[id]...)
	}
	sum, err := secagg.Unmask(ctx, tr)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return c.abandon(ctx, now, "unmasking failed: "+err.Error())
	}
	if sum, err = c.group(r).Decode(sum); err != nil {
		return c.abandon(ctx, now, "decoding the sum: "+err.Error())
	}
	if r.Kind == RoundStatistics {
		return c.finishStatistics(ctx, now, sum)
	}
	bound, err := c.evalBoundOf(ctx, r, r.U3)
	if err != nil {
		return err
	}
	base := c.history[len(c.history)-1]
	if base.Version != r.BaseVersion {
		return fmt.Errorf("%w: round %d started from %s, history ends at %s", ErrStoreMismatch, r.Number, r.BaseVersion, base.Version)
	}
	var mv *ModelVersion
	var ledger *dp.Ledger
	if r.Kind == RoundEvaluation {
		if err := zeroUpdate(sum[:r.Dim-evalWords]); err != nil {
			return c.abandon(ctx, now, err.Error())
		}
	} else if mv, ledger, err = c.aggregate(r, sum, now); err != nil {
		return c.abandon(ctx, now, err.Error())
	}
	// The evaluation words measure the round's starting model: its figures
	// go with that version.
	var evaluated *ModelVersion
	evalNote := ""
	met, err := evalMetrics(sum[r.Dim-evalWords:], len(r.U3), bound)
	switch {
	case err != nil:
		// The update passed its own checks; only the figures are refused.
		evalNote = "; evaluation refused: " + err.Error()
	case met != nil:
		met.EvaluatedVersion = base.Version
		ev := base
		ev.Metrics = met
		evaluated = &ev
		evalNote = fmt.Sprintf("; %s evaluated on %d held-out records", base.Version, met.EvalSamples)
	}
	done := r.clone()
	done.Phase = PhaseClosed
	done.Outcome = fmt.Sprintf("closed with %d contributors", len(r.U3)) + evalNote
	if mv != nil {
		done.ResultVersion = mv.Version
	}
	if err := c.store.SaveFederated(ctx, Change{Rounds: []*RoundState{done}, Model: mv, Evaluated: evaluated, Ledger: ledger}); err != nil {
		return fmt.Errorf("federated: saving round %d: %w", r.Number, err)
	}
	c.round, c.ended = done, endOf(done)
	if ledger != nil {
		c.ledger = ledger
	}
	if evaluated != nil {
		c.history[len(c.history)-1] = *evaluated
	}
	if mv != nil {
		c.history = append(c.history, *mv)
		c.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "federated round closed", slog.Int("round", r.Number), slog.String("version", mv.Version), slog.Int("contributors", len(r.U3)))
	} else {
		c.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "federated evaluation round closed", slog.Int("round", r.Number), slog.String("evaluated", base.Version), slog.Int("contributors", len(r.U3)))
	}
	c.notify()
	return c.openNext(ctx, now)
}

// zeroUpdate checks the weight words of an evaluation round's sum: every
// participant sends a zero update, so anything else is refused.
func zeroUpdate(words []uint64) error {
	for i, w := range words {
		if w != 0 {
			return fmt.Errorf("evaluation round: weight word %d of the sum is not zero", i)
		}
	}
	return nil
}

// aggregate turns the unmasked sum into the next model version. It runs the
// server-side bounds_check and nan_check on the aggregate: a participant that
// masked an out-of-range vector cannot be identified, but its round is refused.
func (c *Coordinator) aggregate(r *RoundState, sum []uint64, now time.Time) (*ModelVersion, *dp.Ledger, error) {
	q, err := secagg.NewQuantizer(r.ClipNorm, r.FracBits, r.MaxParticipants)
	if err != nil {
		return nil, nil, err
	}
	nw := r.Dim - evalWords
	n := float64(len(r.U3))
	update := q.Dequantize(sum[:nw])
	slack := math.Sqrt(float64(nw)) * n * math.Ldexp(1, -int(r.FracBits))
	if r.NoiseShare > 0 {
		slack += noiseSlack(r.NoiseShare, r.FracBits, nw, len(r.U3))
	}
	if err := BoundsCheck(update, n*r.ClipNorm+slack); err != nil {
		return nil, nil, fmt.Errorf("aggregate %w", err)
	}
	var ledger *dp.Ledger
	var spent float64
	if r.NoiseMultiplier > 0 {
		ledger = c.ledger.Clone()
		if err := ledger.Spend(r.Number, r.NoiseMultiplier); err != nil {
			return nil, nil, err
		}
		spent = ledger.Spent()
	}
	if r.NoiseMultiplier > 0 && r.NoiseShare == 0 { // distributed DP: the participants' shares are in the sum already
		var seed [32]byte
		if _, err := io.ReadFull(c.cfg.Rand, seed[:]); err != nil {
			return nil, nil, fmt.Errorf("noise randomness: %w", err)
		}
		dp.AddGaussianNoise(mrand.New(mrand.NewChaCha8(seed)), update, r.NoiseMultiplier*r.ClipNorm)
	}
	base := c.history[len(c.history)-1]
	w := slices.Clone(base.Weights)
	for i := range w {
		w[i] += c.cfg.ServerLearningRate * update[i] / n
	}
	if err := NaNCheck(w); err != nil {
		return nil, nil, err
	}
	h, err := ModelHash(w)
	if err != nil {
		return nil, nil, err
	}
	mv := &ModelVersion{
		Version: versionString(len(c.history)), Round: r.Number, Hash: h, Parent: base.Version,
		Contributors: slices.Clone(r.U3), Weights: w, NoiseMultiplier: r.NoiseMultiplier,
		EpsilonSpent: spent, Scaling: slices.Clone(base.Scaling), CreatedAt: now.UTC(),
	}
	return mv, ledger, nil
}

// evalBound is the most held-out records org may report: MaxEvalRecords, or
// its registered cohort size when that is smaller.
func (c *Coordinator) evalBound(ctx context.Context, r *RoundState, org string) (int, error) {
	b := r.MaxEvalRecords
	if c.cfg.Cohorts == nil {
		return b, nil
	}
	n, err := c.cfg.Cohorts.CohortSize(ctx, org)
	if err != nil {
		return 0, fmt.Errorf("federated: cohort size of %q: %w", org, err)
	}
	return max(0, min(b, n)), nil
}

// evalBoundOf sums evalBound over orgs.
func (c *Coordinator) evalBoundOf(ctx context.Context, r *RoundState, orgs []string) (int64, error) {
	var sum int64
	for _, org := range orgs {
		b, err := c.evalBound(ctx, r, org)
		if err != nil {
			return 0, err
		}
		sum += int64(b)
	}
	return sum, nil
}
