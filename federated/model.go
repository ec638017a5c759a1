package federated

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
)

// Model is a differentiable binary classifier over a flat weight vector.
// Implementations hold hyper-parameters only, never weights, so one Model
// serves every round and participant.
type Model interface {
	// NumWeights is the length of the weight vector.
	NumWeights() int
	// Predict returns P(y = 1 | x).
	Predict(w, x []float64) float64
	// LossGrad writes into grad the gradient of the mean regularised loss over
	// the batch, and returns that loss.
	LossGrad(w []float64, xs [][]float64, ys []float64, grad []float64) float64
}

// LogisticRegression is L2-regularised logistic regression. Weights are the
// feature coefficients followed by the bias.
type LogisticRegression struct {
	features int
	l2       float64
}

// NewLogisticRegression returns the model for the given number of features.
func NewLogisticRegression(features int, l2 float64) (*LogisticRegression, error) {
	if features < 1 || l2 < 0 || math.IsNaN(l2) || math.IsInf(l2, 0) {
		return nil, fmt.Errorf("%w: logistic regression with %d features, l2 %g", ErrTask, features, l2)
	}
	return &LogisticRegression{features: features, l2: l2}, nil
}

// NumWeights is features + 1.
func (m *LogisticRegression) NumWeights() int { return m.features + 1 }

func (m *LogisticRegression) logit(w, x []float64) float64 {
	z := w[m.features]
	for i, v := range x {
		z += w[i] * v
	}
	return z
}

// Predict returns the logistic of the linear score.
func (m *LogisticRegression) Predict(w, x []float64) float64 { return sigmoid(m.logit(w, x)) }

func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// LossGrad computes the mean log loss plus (l2/2)|w|^2 (bias excluded).
func (m *LogisticRegression) LossGrad(w []float64, xs [][]float64, ys []float64, grad []float64) float64 {
	clear(grad)
	if len(xs) == 0 {
		return 0
	}
	loss := 0.0
	for k, x := range xs {
		z := m.logit(w, x)
		p := sigmoid(z)
		// log(1+e^z) - y z, computed stably.
		loss += math.Max(z, 0) + math.Log1p(math.Exp(-math.Abs(z))) - ys[k]*z
		r := p - ys[k]
		for i, v := range x {
			grad[i] += r * v
		}
		grad[m.features] += r
	}
	n := float64(len(xs))
	loss /= n
	for i := range grad {
		grad[i] /= n
	}
	for i := range m.features {
		grad[i] += m.l2 * w[i]
		loss += 0.5 * m.l2 * w[i] * w[i]
	}
	return loss
}

// Canonical weight encoding: "HAFW", a version byte (1), a uint32
// little-endian count, then each weight as IEEE 754 binary64 little-endian in
// model order. Only finite weights are encodable.
const (
	weightsMagic   = "HAFW"
	weightsVersion = 1
	weightsHeader  = 4 + 1 + 4
	// MaxWeights bounds a decoded weight vector.
	MaxWeights = 1 << 24
)

// Errors about weight vectors.
var (
	ErrMalformedWeights = errors.New("federated: malformed weight encoding")
	ErrNaN              = errors.New("federated: nan_check failed: non-finite value")
	ErrBounds           = errors.New("federated: bounds_check failed")
)

// EncodeWeights returns the canonical encoding of w; negative zero is
// written as zero.
func EncodeWeights(w []float64) ([]byte, error) {
	if len(w) > MaxWeights {
		return nil, fmt.Errorf("%w: %d weights", ErrMalformedWeights, len(w))
	}
	if err := NaNCheck(w); err != nil {
		return nil, err
	}
	out := make([]byte, weightsHeader+8*len(w))
	copy(out, weightsMagic)
	out[4] = weightsVersion
	binary.LittleEndian.PutUint32(out[5:], uint32(len(w)))
	for i, v := range w {
		// v + 0 turns -0 into +0: one vector, one encoding.
		binary.LittleEndian.PutUint64(out[weightsHeader+8*i:], math.Float64bits(v+0))
	}
	return out, nil
}

// DecodeWeights parses the canonical encoding, rejecting trailing bytes,
// non-finite values and negative zero (which would give one vector two
// encodings).
func DecodeWeights(b []byte) ([]float64, error) {
	if len(b) < weightsHeader || string(b[:4]) != weightsMagic || b[4] != weightsVersion {
		return nil, fmt.Errorf("%w: bad header", ErrMalformedWeights)
	}
	n := binary.LittleEndian.Uint32(b[5:])
	if n > MaxWeights || uint64(len(b)-weightsHeader) != 8*uint64(n) {
		return nil, fmt.Errorf("%w: length mismatch", ErrMalformedWeights)
	}
	w := make([]float64, n)
	for i := range w {
		bits := binary.LittleEndian.Uint64(b[weightsHeader+8*i:])
		if bits == 1<<63 {
			return nil, fmt.Errorf("%w: negative zero at %d", ErrMalformedWeights, i)
		}
		w[i] = math.Float64frombits(bits)
	}
	if err := NaNCheck(w); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformedWeights, err)
	}
	return w, nil
}

// ModelHash is the SHA-256, as 64 hex characters, of the canonical encoding.
func ModelHash(w []float64) (string, error) {
	b, err := EncodeWeights(w)
	if err != nil {
		return "", err
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:]), nil
}

// NaNCheck is nan_check: every value must be finite.
func NaNCheck(v []float64) error {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%w: coordinate %d", ErrNaN, i)
		}
	}
	return nil
}

// BoundsCheck is bounds_check: the vector's L2 norm, and so every
// coordinate, must be at most bound.
func BoundsCheck(v []float64, bound float64) error {
	if n := L2Norm(v); n > bound*(1+1e-12) {
		return fmt.Errorf("%w: norm %.4g above %.4g", ErrBounds, n, bound)
	}
	return nil
}

// L2Norm returns the Euclidean norm.
func L2Norm(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}

// Clip scales v in place so that its L2 norm is at most c and returns the
// norm before clipping.
func Clip(v []float64, c float64) float64 {
	n := L2Norm(v)
	if n > c {
		f := c / n
		for i := range v {
			v[i] *= f
		}
	}
	return n
}
