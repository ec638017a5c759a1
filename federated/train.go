package federated

import (
	"context"
	"fmt"
	"math/rand/v2"
)

// Update is the result of local training: the change to the global weights
// (not yet clipped) and the training loss. It never leaves the participant
// in the clear.
type Update struct {
	Delta []float64
	Loss  float64
}

// Train runs local gradient descent from the global weights on d and returns
// the weight change. With BatchSize 0 every epoch is one full-batch step;
// otherwise each epoch visits the data once in shuffled mini-batches drawn
// from rng.
func Train(ctx context.Context, m Model, global []float64, d Dataset, spec TrainingSpec, rng *rand.Rand) (*Update, error) {
	if len(global) != m.NumWeights() {
		return nil, fmt.Errorf("%w: %d weights for a model of %d", ErrMalformedWeights, len(global), m.NumWeights())
	}
	if d.Len() == 0 {
		return nil, fmt.Errorf("%w: no labelled training records", ErrTask)
	}
	w := append([]float64(nil), global...)
	grad := make([]float64, len(w))
	idx := make([]int, d.Len())
	for i := range idx {
		idx[i] = i
	}
	var loss float64
	for range spec.Epochs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		bs := spec.BatchSize
		if bs <= 0 || bs >= d.Len() {
			loss = m.LossGrad(w, d.X, d.Y, grad)
			step(w, grad, spec.LearningRate)
			continue
		}
		rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		xs, ys := make([][]float64, 0, bs), make([]float64, 0, bs)
		for off := 0; off < len(idx); off += bs {
			xs, ys = xs[:0], ys[:0]
			for _, k := range idx[off:min(off+bs, len(idx))] {
				xs, ys = append(xs, d.X[k]), append(ys, d.Y[k])
			}
			loss = m.LossGrad(w, xs, ys, grad)
			step(w, grad, spec.LearningRate)
		}
	}
	for i := range w {
		w[i] -= global[i]
	}
	if err := NaNCheck(w); err != nil {
		return nil, err
	}
	return &Update{Delta: w, Loss: loss}, nil
}

func step(w, grad []float64, lr float64) {
	for i := range w {
		w[i] -= lr * grad[i]
	}
}

// Evaluation counts correct predictions (threshold 0.5) on held-out data.
type Evaluation struct {
	Correct int `json:"correct"`
	Total   int `json:"total"`
}

// Accuracy is Correct/Total, or 0 with no data.
func (e Evaluation) Accuracy() float64 {
	if e.Total == 0 {
		return 0
	}
	return float64(e.Correct) / float64(e.Total)
}

// Evaluate scores weights on d.
func Evaluate(m Model, w []float64, d Dataset) Evaluation {
	e := Evaluation{Total: d.Len()}
	for i, x := range d.X {
		if mc, ok := m.(classPredictor); ok {
			if float64(mc.PredictClass(w, x)) == d.Y[i] {
				e.Correct++
			}
			continue
		}
		if (m.Predict(w, x) >= 0.5) == (d.Y[i] == 1) {
			e.Correct++
		}
	}
	return e
}
