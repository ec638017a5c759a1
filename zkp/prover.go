package zkp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/consensys/gnark/frontend"

	"github.com/healthagents/healthagents/record"
)

// DefaultTimeout is the proof-generation deadline: past it a request answers
// "ZK proof generation timed out" (docs/decisions.md, errors table).
const DefaultTimeout = 5 * time.Second

// EligibilityInput is an eligibility decision to prove: the coverage it was
// taken on and the claimed outputs. The prover refuses (ErrUnsatisfied) a
// claim that does not follow from the coverage by the circuit's rules.
type EligibilityInput struct {
	Coverage      *record.Coverage
	ClassIndex    int    // 1-based index of the procedure class, see Classes
	ClassCode     string // optional: the class's code, e.g. "PROC002"; if set it must match ClassIndex
	ProcedureCode string // requested code, e.g. CPT "70551"; compared in its CanonicalCode form
	ServiceDate   time.Time
	CoveragePct   int
	PreAuth       bool
	Eligible      bool
	// Blinding is the commitment's random value. Nil draws a fresh one from
	// crypto/rand; pass a stored one to reproduce a known commitment.
	Blinding *fr.Element
}

// PrescriptionInput is a prescription's coverage statement to prove: the
// drug (RxCUI) is covered by the committed plan on the service date
// (coverage active, date within the window, drug not excluded) iff Covered.
type PrescriptionInput struct {
	Coverage    *record.Coverage
	DrugCode    string // RxCUI, e.g. "11289"
	ServiceDate time.Time
	Covered     bool
	Blinding    *fr.Element // as in EligibilityInput
}

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

// eligibilityStatement encodes in and checks its claims natively.
func eligibilityStatement(in EligibilityInput, blinding fr.Element) (*EligibilityCircuit, *coverageWitness, error) {
	classes := classTable()
	if in.ClassIndex < 1 || in.ClassIndex > len(classes) {
		return nil, nil, fmt.Errorf("%w: procedure class index %d is not 1..%d", ErrUnsatisfied, in.ClassIndex, len(classes))
	}
	class := classes[in.ClassIndex-1]
	if in.ClassCode != "" && !strings.EqualFold(in.ClassCode, class.Code) {
		return nil, nil, fmt.Errorf("%w: class code does not match class index %d", ErrUnsatisfied, in.ClassIndex)
	}
	cw, err := encodeCoverage(in.Coverage, blinding)
	if err != nil {
		return nil, nil, err
	}
	code := CanonicalCode(in.ProcedureCode)
	exact, err := EncodeCode(code)
	if err != nil {
		return nil, nil, err
	}
	folded, err := EncodeCodeFolded(code)
	if err != nil {
		return nil, nil, err
	}
	day, err := DayNumber(in.ServiceDate)
	if err != nil {
		return nil, nil, err
	}
	var classExact, classFolded fr.Element
	classExact.SetBigInt(class.exact)
	classFolded.SetBigInt(class.folded)

	// The rules, natively; the circuit enforces the same.
	eligible := cw.active && cw.inWindow(day) && !cw.excludes(folded, classFolded)
	pct := uint64(class.BasePct)
	if v, ok := cw.override(exact); ok {
		pct = v
	} else if v, ok := cw.override(classExact); ok {
		pct = v
	}
	if !eligible {
		pct = 0
	}
	switch {
	case in.Eligible != eligible:
		return nil, nil, fmt.Errorf("%w: claimed eligible flag", ErrUnsatisfied)
	case in.CoveragePct < 0 || uint64(in.CoveragePct) != pct:
		return nil, nil, fmt.Errorf("%w: claimed coverage percent", ErrUnsatisfied)
	case in.PreAuth != class.PreAuth:
		return nil, nil, fmt.Errorf("%w: claimed requires_authorization", ErrUnsatisfied)
	}
	return &EligibilityCircuit{
		Coverage:        cw.assign(),
		Commitment:      cw.commitment(),
		ClassIndex:      in.ClassIndex,
		Procedure:       exact,
		ProcedureFolded: folded,
		ServiceDay:      day,
		CoveragePct:     in.CoveragePct,
		PreAuth:         boolInt(in.PreAuth),
		Eligible:        boolInt(in.Eligible),
	}, cw, nil
}

// Covers reports what the prescription statement claims for a plan, a drug
// (RxCUI) and a service date by the circuit's rule: coverage active, the
// date within the window, the drug not excluded. Use it to fill
// PrescriptionInput.Covered.
func Covers(cov *record.Coverage, drugCode string, date time.Time) (bool, error) {
	cw, err := encodeCoverage(cov, fr.Element{})
	if err != nil {
		return false, err
	}
	drug, err := EncodeCodeFolded(drugCode)
	if err != nil {
		return false, err
	}
	day, err := DayNumber(date)
	if err != nil {
		return false, err
	}
	return cw.covers(drug, day), nil
}

// covers is the prescription rule on an encoded coverage.
func (cw *coverageWitness) covers(drug fr.Element, day uint64) bool {
	return cw.active && cw.inWindow(day) && !cw.excludes(drug)
}

// prescriptionStatement encodes in and checks its claim natively.
func prescriptionStatement(in PrescriptionInput, blinding fr.Element) (*PrescriptionCircuit, *coverageWitness, error) {
	cw, err := encodeCoverage(in.Coverage, blinding)
	if err != nil {
		return nil, nil, err
	}
	drug, err := EncodeCodeFolded(CanonicalCode(in.DrugCode))
	if err != nil {
		return nil, nil, err
	}
	day, err := DayNumber(in.ServiceDate)
	if err != nil {
		return nil, nil, err
	}
	if covered := cw.covers(drug, day); covered != in.Covered {
		return nil, nil, fmt.Errorf("%w: claimed covered flag", ErrUnsatisfied)
	}
	return &PrescriptionCircuit{
		Coverage:   cw.assign(),
		Commitment: cw.commitment(),
		Drug:       drug,
		ServiceDay: day,
		Covered:    boolInt(in.Covered),
	}, cw, nil
}

// ProveEligibility proves in. Errors: ErrUnsatisfied for a claim that does
// not follow, ErrRecordTooLarge for a record outside the circuit's bounds,
// ErrTimeout past the deadline.
func (p *Prover) ProveEligibility(ctx context.Context, in EligibilityInput) (*Proof, error) {
	b, err := p.blinding(in.Blinding)
	if err != nil {
		return nil, err
	}
	assignment, _, err := eligibilityStatement(in, b)
	if err != nil {
		return nil, err
	}
	return p.prove(ctx, CircuitEligibility, assignment, b)
}

// ProvePrescription proves in; errors as for ProveEligibility.
func (p *Prover) ProvePrescription(ctx context.Context, in PrescriptionInput) (*Proof, error) {
	b, err := p.blinding(in.Blinding)
	if err != nil {
		return nil, err
	}
	assignment, _, err := prescriptionStatement(in, b)
	if err != nil {
		return nil, err
	}
	return p.prove(ctx, CircuitPrescription, assignment, b)
}

type proveResult struct {
	proof *groth16bn254.Proof
	err   error
}

func (p *Prover) prove(ctx context.Context, name string, assignment frontend.Circuit, blinding fr.Element) (*Proof, error) {
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
		return &Proof{Circuit: name, Groth16: r.proof, Public: []fr.Element(public), Blinding: blinding}, nil
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
	cov := &record.Coverage{
		MemberID: "SELF-CHECK", Status: record.StatusActive, Start: "2026-01-01", End: "2026-12-31",
		ExcludedProcedures: []string{"PROC005"}, CoverageOverrides: map[string]int{"PROC002": 70},
	}
	day := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	var blinding fr.Element
	blinding.SetUint64(7)
	switch name {
	case CircuitEligibility:
		a, _, err := eligibilityStatement(EligibilityInput{
			Coverage: cov, ClassIndex: 2, ProcedureCode: "70551", ServiceDate: day,
			CoveragePct: 70, PreAuth: false, Eligible: true,
		}, blinding)
		return a, err
	case CircuitPrescription:
		a, _, err := prescriptionStatement(PrescriptionInput{Coverage: cov, DrugCode: "11289", ServiceDate: day, Covered: true}, blinding)
		return a, err
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownCircuit, name)
}
