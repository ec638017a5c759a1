package federated

import (
	"fmt"
	"math"
)

// Softmax is L2-regularised multinomial logistic regression over Classes
// classes. Weights are, class after class, the feature coefficients followed
// by the bias. Labels are class indices (0 .. Classes-1, as float64).
type Softmax struct {
	features, classes int
	l2                float64
}

// NewSoftmax returns the model for the given numbers of features and classes.
func NewSoftmax(features, classes int, l2 float64) (*Softmax, error) {
	if features < 1 || classes < 2 || classes > 1000 || l2 < 0 || math.IsNaN(l2) || math.IsInf(l2, 0) {
		return nil, fmt.Errorf("%w: softmax with %d features, %d classes, l2 %g", ErrTask, features, classes, l2)
	}
	return &Softmax{features: features, classes: classes, l2: l2}, nil
}

// NumWeights is classes × (features + 1).
func (m *Softmax) NumWeights() int { return m.classes * (m.features + 1) }

// probs writes the class probabilities of x into p.
func (m *Softmax) probs(w, x, p []float64) {
	stride := m.features + 1
	top := math.Inf(-1)
	for c := range m.classes {
		row := w[c*stride : (c+1)*stride]
		z := row[m.features]
		for i, v := range x {
			z += row[i] * v
		}
		p[c] = z
		top = math.Max(top, z)
	}
	sum := 0.0
	for c := range p {
		p[c] = math.Exp(p[c] - top)
		sum += p[c]
	}
	for c := range p {
		p[c] /= sum
	}
}

// PredictClass returns the most probable class.
func (m *Softmax) PredictClass(w, x []float64) int {
	p := make([]float64, m.classes)
	m.probs(w, x, p)
	best := 0
	for c := range p {
		if p[c] > p[best] {
			best = c
		}
	}
	return best
}

// Predict returns the probability of the most probable class.
func (m *Softmax) Predict(w, x []float64) float64 {
	p := make([]float64, m.classes)
	m.probs(w, x, p)
	best := 0.0
	for _, v := range p {
		best = math.Max(best, v)
	}
	return best
}

// LossGrad computes the mean cross-entropy plus (l2/2)|w|^2 (biases excluded).
func (m *Softmax) LossGrad(w []float64, xs [][]float64, ys []float64, grad []float64) float64 {
	clear(grad)
	if len(xs) == 0 {
		return 0
	}
	stride := m.features + 1
	p := make([]float64, m.classes)
	loss := 0.0
	for k, x := range xs {
		m.probs(w, x, p)
		y := int(ys[k])
		loss -= math.Log(math.Max(p[y], 1e-300))
		for c := range m.classes {
			r := p[c]
			if c == y {
				r--
			}
			g := grad[c*stride : (c+1)*stride]
			for i, v := range x {
				g[i] += r * v
			}
			g[m.features] += r
		}
	}
	n := float64(len(xs))
	loss /= n
	for i := range grad {
		grad[i] /= n
	}
	for c := range m.classes {
		for i := range m.features {
			j := c*stride + i
			grad[j] += m.l2 * w[j]
			loss += 0.5 * m.l2 * w[j] * w[j]
		}
	}
	return loss
}

// classPredictor is a multi-class model: Evaluate counts a prediction
// correct when its class equals the label.
type classPredictor interface {
	PredictClass(w, x []float64) int
}
