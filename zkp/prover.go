package zkp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"runtime"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/consensys/gnark/frontend"

	"github.com/healthagents/healthagents/prescription"
)

// DefaultTimeout is the proof-generation deadline: past it a request answers
// "ZK proof generation timed out" (docs/decisions.md, errors table).
const DefaultTimeout = 5 * time.Second

type proverOptions struct {
	timeout       time.Duration
	maxConcurrent int
	rand          io.Reader
}

// ProverOption configures NewProver.
type ProverOption func(*proverOptions) error

// WithTimeout sets the proof-generation deadline (default DefaultTimeout).
// A deadline of ctx that comes earlier wins.
func WithTimeout(d time.Duration) ProverOption {
	return func(o *proverOptions) error {
		if d <= 0 {
			return errors.New("zkp: timeout must be positive")
		}
		o.timeout = d
		return nil
	}
}

// WithMaxConcurrent bounds the number of proofs computed at once, abandoned
// ones included (default runtime.GOMAXPROCS(0)). A request waits for a slot
// within its deadline.
func WithMaxConcurrent(n int) ProverOption {
	return func(o *proverOptions) error {
		if n < 1 {
			return errors.New("zkp: max concurrent proofs must be at least 1")
		}
		o.maxConcurrent = n
		return nil
	}
}

// WithRandom sets the source of blinding values (default crypto/rand). Only
// tests have a reason to set it.
func WithRandom(r io.Reader) ProverOption {
	return func(o *proverOptions) error { o.rand = r; return nil }
}

// Prover produces Groth16 proofs of decisions. It is safe for concurrent use.
//
// gnark's prover cannot be interrupted: on a deadline, Prove returns
// ErrTimeout at once and the abandoned proof finishes in the background,
// still holding its concurrency slot, so abandoned proofs cannot pile up
// beyond WithMaxConcurrent.
type Prover struct {
	sys     *System
	timeout time.Duration
	sem     chan struct{}
	rand    io.Reader

	// proving, when set (tests only), runs in the proof's goroutine just
	// before gnark proves, with the request's context: it stands for a proof
	// that is still running when the deadline passes.
	proving func(ctx context.Context)
}

// NewProver returns a Prover using the keys of sys.
func NewProver(sys *System, opts ...ProverOption) (*Prover, error) {
	if sys == nil {
		return nil, errors.New("zkp: nil System")
	}
	o := proverOptions{timeout: DefaultTimeout, maxConcurrent: runtime.GOMAXPROCS(0)}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	return &Prover{sys: sys, timeout: o.timeout, sem: make(chan struct{}, o.maxConcurrent), rand: o.rand}, nil
}

func (p *Prover) blinding(given *fr.Element) (fr.Element, error) {
	var b fr.Element
	if given != nil {
		return *given, nil
	}
	if p.rand == nil {
		if _, err := b.SetRandom(); err != nil {
			return b, fmt.Errorf("zkp: draw blinding: %w", err)
		}
		return b, nil
	}
	var buf [fr.Bytes + 16]byte // 16 extra bytes make the reduction bias negligible
	if _, err := io.ReadFull(p.rand, buf[:]); err != nil {
		return b, fmt.Errorf("zkp: draw blinding: %w", err)
	}
	b.SetBytes(buf[:])
	return b, nil
}

type proveResult struct {
	proof *groth16bn254.Proof
	err   error
}

func (p *Prover) prove(ctx context.Context, name string, assignment frontend.Circuit) (*Proof, error) {
	ck, err := p.sys.circuit(name)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	w, err := frontend.NewWitness(assignment, ecc.BN254.ScalarField())
	if err != nil {
		return nil, fmt.Errorf("zkp: witness: %w", err)
	}
	pub, err := w.Public()
	if err != nil {
		return nil, fmt.Errorf("zkp: public witness: %w", err)
	}
	public, ok := pub.Vector().(fr.Vector)
	if !ok {
		return nil, fmt.Errorf("zkp: public witness: unexpected vector %T", pub.Vector())
	}

	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctxErr(ctx)
	}
	done := make(chan proveResult, 1) // buffered: an abandoned prover never blocks
	go func() {
		defer func() { <-p.sem }()
		defer func() {
			if v := recover(); v != nil {
				done <- proveResult{err: fmt.Errorf("gnark prover panicked: %v", v)}
			}
		}()
		if p.proving != nil {
			p.proving(ctx)
		}
		proof, err := ck.prove(w)
		done <- proveResult{proof, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			// The native checks above make this unreachable for a well-formed
			// input; the solver is the backstop. Its message quotes wire
			// values, which derive from the record: it is not passed on.
			return nil, fmt.Errorf("%w: %s circuit: the constraint solver rejected the witness", ErrUnsatisfied, name)
		}
		return &Proof{Circuit: name, Groth16: r.proof, Public: []fr.Element(public)}, nil
	case <-ctx.Done():
		return nil, ctxErr(ctx)
	}
}

// ctxErr maps a finished context to ErrTimeout (deadline) or its own error.
func ctxErr(ctx context.Context) error {
	err := ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	}
	return err
}

// Verifier checks proofs off-chain against a System's verifying keys. It is
// safe for concurrent use.
type Verifier struct {
	sys *System
}

// NewVerifier returns a Verifier using the keys of sys.
func NewVerifier(sys *System) (*Verifier, error) {
	if sys == nil {
		return nil, errors.New("zkp: nil System")
	}
	return &Verifier{sys: sys}, nil
}

// Verify checks proof against its public inputs. A proof that does not
// verify gives an error wrapping ErrInvalidProof. Note that a valid proof
// may state an ineligible decision: check the outputs (Proof.Eligibility,
// Proof.Prescription), not only the proof.
func (v *Verifier) Verify(ctx context.Context, proof *Proof) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if proof == nil || proof.Groth16 == nil {
		return fmt.Errorf("%w: empty proof", ErrInvalidProof)
	}
	ck, err := v.sys.circuit(proof.Circuit)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidProof, err)
	}
	if len(proof.Public) != ck.vk.NbPublicWitness() {
		return fmt.Errorf("%w: %d public inputs, the %s circuit has %d", ErrInvalidProof, len(proof.Public), ck.name, ck.vk.NbPublicWitness())
	}
	if err := groth16bn254.Verify(proof.Groth16, ck.vk, fr.Vector(proof.Public)); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidProof, err)
	}
	return nil
}

// sampleAssignment is a fixed, satisfiable statement for the named circuit,
// used to self-check key pairs.
func sampleAssignment(name string) (frontend.Circuit, error) {
	day := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	cred, err := sampleCredential()
	if err != nil {
		return nil, err
	}
	switch name {
	case CircuitEligibilityV3:
		a, _, err := eligibilityV3Statement(EligibilityV3Input{Credential: cred, ProcedureCode: "70551", ServiceDate: day,
			Eligible: true, CoveragePct: 80, PreAuth: true}, big.NewInt(7))
		return a, err
	case CircuitPrescriptionV4:
		// warfarin and metformin for a patient on ibuprofen with a
		// penicillin allergy: every part of the circuit in use.
		a, _, _, err := prescriptionV4Statement(PrescriptionV4Input{Credential: cred, Drugs: []string{"11289", "6809"}, ServiceDate: day,
			Facts: prescription.Facts{Medications: []string{"5640"}, Triggers: []int{0}, AllergyDrugs: []string{"723"}}}, big.NewInt(7))
		return a, err
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownCircuit, name)
}
