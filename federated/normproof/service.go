package normproof

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/bits"
	"sync"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/groth16"

	"github.com/healthagents/healthagents/federated"
	"github.com/healthagents/healthagents/federated/secagg"
)

// Service proves and verifies federated.UpdateStatements, compiling and
// setting up one circuit per shape on first use. Prover and verifier must
// use the same keys: in one process, one Service; across processes, the
// coordinator's keys (see docs/federated-privacy.md). Safe for concurrent use.
type Service struct {
	mu   sync.Mutex
	keys map[Shape]*Keys
	// source makes the keys of a shape not yet held (default Setup).
	source func(Shape) (*Keys, error)
	known  KnownKeys // WithKnownKeys
}

var (
	_ federated.UpdateProver   = (*Service)(nil)
	_ federated.UpdateVerifier = (*Service)(nil)
)

// NewService returns an empty Service.
func NewService() *Service { return &Service{keys: map[Shape]*Keys{}, source: Setup} }

// newService is NewService with opts applied.
func newService(opts []Option) *Service {
	v := NewService()
	for _, o := range opts {
		o(v)
	}
	return v
}

// NewServiceFrom is a Service that takes each shape's keys from source,
// called once per shape (NewService's source is Setup). The keys must be
// the ones the verifier trusts; source is responsible for checking them
// (DecodeKeys checks keys from elsewhere).
func NewServiceFrom(source func(Shape) (*Keys, error)) *Service {
	return &Service{keys: map[Shape]*Keys{}, source: source}
}

// Keys returns the keys of s, running Setup the first time.
func (v *Service) Keys(s Shape) (*Keys, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if k, ok := v.keys[s]; ok {
		return k, nil
	}
	k, err := v.source(s)
	if err != nil {
		return nil, err
	}
	v.keys[s] = k
	return k, nil
}

// ProofGroup is the participant's and the coordinator's configuration for
// proved rounds over this Service.
func (v *Service) ProofGroup() (federated.ProofConfig, federated.ParticipantProofs) {
	return federated.ProofConfig{Group: Field{}, Verifier: v}, federated.ParticipantProofs{Group: Field{}, Prover: v}
}

// WeightBits is the Bits of a shape for clip and fracBits: every quantized
// word of an update within clip lies in (-2^Bits, 2^Bits).
func WeightBits(clip float64, fracBits uint) (uint, error) {
	m := math.Ceil(clip * math.Ldexp(1, int(fracBits)))
	if !(m >= 1) || m >= math.Ldexp(1, 59) {
		return 0, fmt.Errorf("%w: clip %g with %d fractional bits", ErrShape, clip, fracBits)
	}
	return uint(bits.Len64(uint64(m))), nil
}

func elementOf(b []byte) (fr.Element, error) {
	var e fr.Element
	if len(b) != fr.Bytes {
		return e, fmt.Errorf("%w: commitment of %d bytes", ErrShape, len(b))
	}
	if err := e.SetBytesCanonical(b); err != nil {
		return e, fmt.Errorf("%w: commitment not in the field", ErrShape)
	}
	return e, nil
}

// convert maps a federated statement to a shape and a circuit statement.
func convert(st *federated.UpdateStatement) (Shape, *Statement, error) {
	b, err := WeightBits(st.ClipNorm, st.FracBits)
	if err != nil {
		return Shape{}, nil, err
	}
	s := Shape{Weights: st.Weights, Extra: st.Extra, Peers: len(st.PairCommitments), Bits: b}
	if err := s.Validate(); err != nil {
		return Shape{}, nil, err
	}
	if len(st.PairPlus) != s.Peers || st.EvalBound < 0 || st.EvalBound >= 1<<ExtraBits {
		return Shape{}, nil, fmt.Errorf("%w: statement", ErrShape)
	}
	out := &Statement{PairPlus: st.PairPlus, EvalBound: uint32(st.EvalBound)}
	if out.Masked, err = Elements(st.Masked); err != nil {
		return Shape{}, nil, err
	}
	if len(out.Masked) != s.Dim() {
		return Shape{}, nil, fmt.Errorf("%w: %d masked elements for %d words", ErrShape, len(out.Masked), s.Dim())
	}
	if out.SelfCommit, err = elementOf(st.SelfCommitment); err != nil {
		return Shape{}, nil, err
	}
	for _, c := range st.PairCommitments {
		e, err := elementOf(c)
		if err != nil {
			return Shape{}, nil, err
		}
		out.PairCommit = append(out.PairCommit, e)
	}
	if out.NormBound, err = NormBound(st.ClipNorm, st.FracBits, st.Weights); err != nil {
		return Shape{}, nil, err
	}
	return s, out, nil
}

// ProveUpdate implements federated.UpdateProver.
func (v *Service) ProveUpdate(ctx context.Context, st *federated.UpdateStatement, sec *federated.UpdateSecret) ([]byte, error) {
	s, cst, err := convert(st)
	if err != nil {
		return nil, err
	}
	if len(sec.PairSeeds) != s.Peers || len(sec.X) != s.Dim() {
		return nil, fmt.Errorf("%w: secret does not fit the statement", ErrShape)
	}
	k, err := v.Keys(s)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cs := &Secret{X: make([]int64, len(sec.X)), SelfSeed: FieldSeed(&sec.SelfSeed)}
	for i, w := range sec.X {
		cs.X[i] = int64(w)
	}
	for i := range sec.PairSeeds {
		cs.PairSeed = append(cs.PairSeed, FieldSeed(&sec.PairSeeds[i]))
	}
	p, err := Prove(k, cst, cs)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := p.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("normproof: encoding proof: %w", err)
	}
	return buf.Bytes(), nil
}

// VerifyUpdate implements federated.UpdateVerifier.
func (v *Service) VerifyUpdate(_ context.Context, st *federated.UpdateStatement, proof []byte) error {
	s, cst, err := convert(st)
	if err != nil {
		return err
	}
	k, err := v.Keys(s)
	if err != nil {
		return err
	}
	p := groth16.NewProof(ecc.BN254)
	n, err := p.ReadFrom(bytes.NewReader(proof))
	if err != nil || n != int64(len(proof)) {
		return fmt.Errorf("%w: malformed proof", ErrProof)
	}
	return Verify(k.VK, s, cst, p)
}

var _ secagg.Group = Field{}
