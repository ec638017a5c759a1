package federated

import (
	"context"
	"fmt"
	"math"
)

// CohortSizes reports the number of records an organization registered for
// a task: the most held-out records it may claim to have evaluated. The
// organization registry implements it; a Coordinator without one bounds each
// participant by MaxEvalRecords only.
type CohortSizes interface {
	CohortSize(ctx context.Context, org string) (int, error)
}

// The evaluation words after the weights in every aggregated vector. The
// counts give the pooled accuracy; the per-participant accuracy and its
// square (fixed point, accScale) give the mean and the spread across
// participants without revealing any one participant's figure.
const (
	evalCorrect = iota // held-out correct predictions
	evalTotal          // held-out records evaluated
	evalCount          // 1 if the participant evaluated any record, else 0
	evalAcc            // round(accuracy * accScale)
	evalAcc2           // round(accuracy^2 * accScale)
	evalWords
)

// accScale is the fixed-point scale of the per-participant accuracy words.
const accScale = 1 << 20

// evalCounters returns the evaluation words of one participant.
func evalCounters(e Evaluation) [evalWords]uint64 {
	var w [evalWords]uint64
	w[evalCorrect], w[evalTotal] = uint64(e.Correct), uint64(e.Total)
	if e.Total > 0 {
		a := e.Accuracy()
		w[evalCount] = 1
		w[evalAcc] = uint64(math.Round(a * accScale))
		w[evalAcc2] = uint64(math.Round(a * a * accScale))
	}
	return w
}

// evalMetrics reads the summed evaluation words of n contributors whose
// held-out sets hold at most bound records together. Any figure a set of
// honest participants cannot produce is an error; the model update does not
// depend on these words, so the caller may release the model without them.
func evalMetrics(words []uint64, n int, bound int64) (*Metrics, error) {
	if len(words) != evalWords {
		return nil, fmt.Errorf("%w: %d evaluation words", ErrBounds, len(words))
	}
	correct, total, count := int64(words[evalCorrect]), int64(words[evalTotal]), int64(words[evalCount])
	acc, acc2 := int64(words[evalAcc]), int64(words[evalAcc2])
	switch {
	case correct < 0 || total < correct || total > bound:
		return nil, fmt.Errorf("%w: %d correct of %d held-out records, registered cohorts allow %d", ErrBounds, correct, total, bound)
	case count < 0 || count > int64(n) || (count == 0) != (total == 0) || total < count:
		return nil, fmt.Errorf("%w: %d participants evaluated of %d", ErrBounds, count, n)
	case acc < 0 || acc > count*accScale || acc2 < 0 || acc2 > acc+count:
		return nil, fmt.Errorf("%w: per-participant accuracy words out of range", ErrBounds)
	}
	if total == 0 {
		return nil, nil
	}
	m := &Metrics{Accuracy: float64(correct) / float64(total), EvalSamples: int(total), Participants: int(count)}
	mean := float64(acc) / float64(count) / accScale
	meanSq := float64(acc2) / float64(count) / accScale
	// Rounding each word to 2^-20 allows a variance a little below zero.
	if v := meanSq - mean*mean; v < -float64(count)/accScale {
		return nil, fmt.Errorf("%w: per-participant accuracy words inconsistent", ErrBounds)
	} else {
		m.MeanAccuracy, m.AccuracyStdDev = mean, math.Sqrt(max(0, v))
	}
	return m, nil
}

// EvalWords is how many evaluation words follow the weights in every
// masked vector (and in a proved round's statement).
const EvalWords = evalWords
