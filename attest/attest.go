package attest

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"sync/atomic"
	"time"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/credential"
	"github.com/healthagents/healthagents/eligibility"
	"github.com/healthagents/healthagents/prescription"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/trust"
	"github.com/healthagents/healthagents/zkp"
	"github.com/healthagents/healthagents/zkp/statement"
)

// Statement kinds on chain: one per circuit, named like it.
const (
	KindEligibility  = chain.Kind(zkp.CircuitEligibilityV3)
	KindPrescription = chain.Kind(zkp.CircuitPrescriptionV4)
)

// Prover proves statements; *zkp.Prover is one.
type Prover interface {
	ProveEligibilityV3(ctx context.Context, in zkp.EligibilityV3Input) (*zkp.Proof, statement.Statement, error)
	ProvePrescriptionV4(ctx context.Context, in zkp.PrescriptionV4Input) (*zkp.Proof, statement.Statement, []zkp.PrescriptionV4Outcome, error)
}

// Trust chooses the payer credential a decision is proven from;
// *trust.Policy is one.
type Trust interface {
	Credential(ctx context.Context, rec *record.Record, day time.Time) (*credential.Credential, trust.Issuer, error)
}

// Option configures New.
type Option func(*Attestor)

// WithTrust sets the COVERAGE_TRUST policy that gives each decision its
// credential (and issuer label). Without it, only a record's own
// credential is used, checked with credential.Check, and a record without
// one has nothing to prove.
func WithTrust(t Trust) Option { return func(a *Attestor) { a.trust = t } }

// WithBatchAnchoring says the ledger anchors in batches (chain.AnchorBatch):
// once a decision is proven, its wait for the batch uses no CPU, so the
// attestor gives back the request's admission slot
// (healthagents.ReleaseSlot) before submitting, and the slots bound the
// proofs being made, not the decisions waiting for their batch.
func WithBatchAnchoring() Option { return func(a *Attestor) { a.releaseSlot = true } }

// Ledger verifies and records proofs on chain; *chain.Ledger is one. The
// context of Submit carries the time the decision's proof began
// (chain.DecisionStart) and whether the decision is still alone
// (chain.WithDecisionAlone) when no other decision was in progress then.
type Ledger interface {
	Submit(ctx context.Context, kind chain.Kind, proof [8]*big.Int, inputs []*big.Int) (chain.Receipt, error)
}

// Attestor implements healthagents.Attestor.
type Attestor struct {
	prover Prover
	ledger Ledger
	trust  Trust
	rx     *prescription.Agent // reads a record's facts for the clinical checks

	releaseSlot bool // WithBatchAnchoring

	mu      sync.Mutex // guards proving and alone (begin)
	proving int        // decisions being proven now
	alone   *loneDecision
}

var _ healthagents.Attestor = (*Attestor)(nil)

// New returns an Attestor proving with prover and verifying on ledger.
func New(prover Prover, ledger Ledger, opts ...Option) (*Attestor, error) {
	if prover == nil || ledger == nil {
		return nil, errors.New("attest: prover and ledger are required")
	}
	rx, err := prescription.New()
	if err != nil {
		return nil, fmt.Errorf("attest: %w", err)
	}
	a := &Attestor{prover: prover, ledger: ledger, rx: rx}
	for _, o := range opts {
		o(a)
	}
	return a, nil
}

// credential returns the credential rec's decision on day is proven from,
// and its issuer label; nil when there is nothing to prove from. A refusal
// (trust.Detail words it) is returned as it is.
func (a *Attestor) credential(ctx context.Context, rec *record.Record, day time.Time) (*credential.Credential, string, error) {
	if a.trust != nil {
		c, iss, err := a.trust.Credential(ctx, rec, day)
		return c, iss.Label, err
	}
	if rec.Coverage == nil || rec.Coverage.Credential == nil {
		return nil, "", nil
	}
	c := rec.Coverage.Credential
	if err := c.Check(rec.Coverage.MemberID, day); err != nil {
		return nil, "", err
	}
	h, err := c.KeyHash()
	if err != nil {
		return nil, "", err
	}
	return c, h.String(), nil
}

// Registrar registers a verifying key for a statement kind; *chain.Ledger is
// one. Register must refuse (with chain.ErrVerifierMismatch) to replace a
// verifier holding another key.
type Registrar interface {
	Register(ctx context.Context, kind chain.Kind, vk chain.VerifyingKey) error
}

// Replacer registers a verifying key for a statement kind, replacing a
// verifier holding another key; *chain.Ledger is one.
type Replacer interface {
	Replace(ctx context.Context, kind chain.Kind, vk chain.VerifyingKey) error
}

// Register deploys (or finds already deployed) a verifier contract for each
// circuit of sys and registers it with the registry. It refuses, with an
// error wrapping chain.ErrVerifierMismatch, when a circuit's kind is already
// registered with another verifying key: that is another deployment's key
// set, whose proofs a replacement would break (see Replace).
func Register(ctx context.Context, r Registrar, sys *zkp.System) error {
	return eachKey(sys, func(kind chain.Kind, vk chain.VerifyingKey) error { return r.Register(ctx, kind, vk) })
}

// Replace is Register, except that a circuit's kind registered with another
// verifying key gets a new verifier holding sys's key: proofs made with the
// old key stop verifying.
func Replace(ctx context.Context, r Replacer, sys *zkp.System) error {
	return eachKey(sys, func(kind chain.Kind, vk chain.VerifyingKey) error { return r.Replace(ctx, kind, vk) })
}

func eachKey(sys *zkp.System, f func(chain.Kind, chain.VerifyingKey) error) error {
	for _, name := range zkp.CircuitNames() {
		vk, err := chain.VerifyingKeyFromGnark(sys.VerifyingKey(name))
		if err != nil {
			return fmt.Errorf("attest: %s verifying key: %w", name, err)
		}
		if err := f(chain.Kind(name), vk); err != nil {
			return fmt.Errorf("attest: registering the %s verifier: %w", name, err)
		}
	}
	return nil
}

// AttestEligibility proves d with the eligibility-v3 circuit from the
// payer credential the trust policy gives for the record (signature,
// window, exclusions, overrides and class all checked in the proof), and
// records the statement on chain. A record without coverage (or, without a
// trust policy, without a credential) has nothing to prove: the
// attestation is returned unverified. A credential the policy refuses is
// returned as the policy's error (the root package words it as the API's refusal).
func (a *Attestor) AttestEligibility(ctx context.Context, rec *record.Record, d eligibility.Decision) (*healthagents.Attestation, error) {
	cred, issuer, err := a.credential(ctx, rec, d.ServiceDate)
	if err != nil {
		return nil, err
	}
	if cred == nil {
		return &healthagents.Attestation{Circuit: zkp.CircuitEligibilityV3}, nil
	}
	ctx, work := a.begin(ctx)
	defer work.done()
	proof, st, err := a.prover.ProveEligibilityV3(ctx, zkp.EligibilityV3Input{
		Credential:    cred,
		ProcedureCode: d.Procedure.Code,
		ServiceDate:   d.ServiceDate,
		Eligible:      d.Eligible,
		CoveragePct:   d.CoveragePct,
		PreAuth:       d.RequiresAuthorization,
	})
	work.proven()
	if err != nil {
		return nil, proveError(err)
	}
	att, err := a.verify(ctx, KindEligibility, proof, st)
	if err != nil {
		return nil, err
	}
	att.Issuer = issuer
	return att, nil
}

// AttestPrescription proves, in one prescription-v4 proof for all of ds
// (at most zkp.MaxDrugs), from the payer credential the trust policy gives,
// whether the plan covers each drug on date (coverage active, date in the
// window, the drug not excluded), its formulary tier, and its interaction
// and contraindication findings against the public rule table from rec's
// medications, allergies and conditions (prescription.Agent.Facts; beyond
// the circuit's limits the record cannot be proven), and records the
// statement on chain: one transaction per request, so nothing links a
// patient's drugs. The proven findings must equal ds's, else nothing is
// recorded and an error says so. The attestation's Covered says whether
// every drug is covered; a verified proof of "not covered" is returned like
// any other.
func (a *Attestor) AttestPrescription(ctx context.Context, rec *record.Record, ds []prescription.Decision, date time.Time) (*healthagents.Attestation, error) {
	cred, issuer, err := a.credential(ctx, rec, date)
	if err != nil {
		return nil, err
	}
	if cred == nil || len(ds) == 0 {
		return &healthagents.Attestation{Circuit: zkp.CircuitPrescriptionV4}, nil
	}
	drugs := make([]string, len(ds))
	for i, d := range ds {
		drugs[i] = d.Drug.RxCUI
	}
	ctx, work := a.begin(ctx)
	defer work.done()
	proof, st, outs, err := a.prover.ProvePrescriptionV4(ctx, zkp.PrescriptionV4Input{Credential: cred, Drugs: drugs, ServiceDate: date, Facts: a.rx.Facts(rec, nil)})
	work.proven()
	if err != nil {
		return nil, proveError(err)
	}
	if err := agree(ds, outs); err != nil {
		return nil, err
	}
	att, err := a.verify(ctx, KindPrescription, proof, st)
	if err != nil {
		return nil, err
	}
	att.Issuer, att.Covered = issuer, true
	for _, o := range outs {
		att.Covered = att.Covered && o.Covered
	}
	return att, nil
}

// ErrDisagree is returned when a proof's clinical findings differ from the
// agent's decisions (the circuit and the agent read different rules).
var ErrDisagree = errors.New("attest: the proven clinical findings differ from the prescription agent's decision")

// agree checks that outs states, for every decision of ds, the agent's
// validity and the ranks of its most severe interaction and
// contraindication. The error names no drug or finding.
func agree(ds []prescription.Decision, outs []zkp.PrescriptionV4Outcome) error {
	for i, d := range ds {
		var o *zkp.PrescriptionV4Outcome
		for j := range outs {
			if outs[j].RxCUI == d.Drug.RxCUI {
				o = &outs[j]
			}
		}
		ir, cr := 0, 0
		for _, x := range d.Interactions {
			ir = max(ir, x.Severity.Rank())
		}
		for _, x := range d.Contraindications {
			cr = max(cr, x.Severity.Rank())
		}
		if o == nil || o.Valid != d.Valid || o.InteractionRank != ir || o.ContraindicationRank != cr {
			return fmt.Errorf("%w (decision %d)", ErrDisagree, i+1)
		}
	}
	return nil
}

// begin marks a decision's proof begun. When no other decision of a is
// being proven or waiting as the lone one, ctx gains the time as the
// decision's start (chain.WithDecisionStart) and, for as long as no other
// decision begins before it is done, says it is alone
// (chain.WithDecisionAlone): in batch anchoring a decision made alone on an
// idle replica is answered about the batch window after its proof began,
// proof included, while one begun beside another (a replica under load)
// leaves its batch the whole window to fill. The returned decision's proven
// is called when its proof is made, done when it is answered.
func (a *Attestor) begin(ctx context.Context) (context.Context, *decision) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.proving++
	d := &decision{a: a}
	switch {
	case a.alone != nil:
		a.alone.others.Store(true) // it is no longer alone, and neither is this one
		a.alone = nil
	case a.proving == 1:
		lone := &loneDecision{}
		a.alone, d.lone = lone, lone
		ctx = chain.WithDecisionStart(ctx, time.Now())
		ctx = chain.WithDecisionAlone(ctx, func() bool { return !lone.others.Load() })
	}
	return ctx, d
}

// loneDecision is a decision begun with no other in progress; others
// turns true when another begins before it is done.
type loneDecision struct{ others atomic.Bool }

// decision is one decision in progress (begin).
type decision struct {
	a         *Attestor
	lone      *loneDecision // nil unless it began alone
	wasProven bool
}

// proven marks the decision's proof made.
func (d *decision) proven() {
	d.a.mu.Lock()
	defer d.a.mu.Unlock()
	if !d.wasProven {
		d.wasProven = true
		d.a.proving--
	}
}

// done marks the decision answered (or failed), its proof made if it was
// not yet.
func (d *decision) done() {
	d.proven()
	d.a.mu.Lock()
	defer d.a.mu.Unlock()
	if d.lone != nil && d.a.alone == d.lone {
		d.a.alone = nil
	}
}

// verify records proof (whose statement is st) on chain and returns the
// attestation with st in its wire form; in batch anchoring (the receipt
// carries a batch) st's leaf must lead by the receipt's path to the root
// the batch's transaction recorded, and the statement carries that path.
func (a *Attestor) verify(ctx context.Context, kind chain.Kind, proof *zkp.Proof, st statement.Statement) (*healthagents.Attestation, error) {
	solidity, err := chain.ProofFromGnark(proof.Groth16)
	if err != nil {
		return nil, fmt.Errorf("attest: encoding the proof: %w", err)
	}
	att := &healthagents.Attestation{
		Circuit:      proof.Circuit,
		ProofData:    proof.ProofData(),
		PublicInputs: proof.PublicInputs(),
	}
	if a.releaseSlot {
		healthagents.ReleaseSlot(ctx)
	}
	rc, err := a.ledger.Submit(ctx, kind, solidity, proof.PublicBig())
	switch {
	case errors.Is(err, chain.ErrRejected):
		return nil, fmt.Errorf("%w: %w", healthagents.ErrProofRejected, err)
	case errors.Is(err, chain.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		return nil, fmt.Errorf("%w: %w", healthagents.ErrChainUnavailable, err)
	case err != nil:
		return nil, fmt.Errorf("attest: submitting the proof: %w", err)
	}
	att.TxHash = rc.TxHash.Hex()
	att.BlockNumber = rc.BlockNumber
	att.Verified = rc.Verified
	if !att.Verified {
		return nil, fmt.Errorf("%w: transaction %s recorded no statement", healthagents.ErrProofRejected, att.TxHash)
	}
	att.Statement = wireStatement(st)
	if rc.Batch != nil {
		leaf, err := st.LeafOf()
		if err == nil {
			err = rc.Batch.Check(leaf)
		}
		if err != nil {
			return nil, fmt.Errorf("attest: the batch of transaction %s does not hold the statement: %w", att.TxHash, err)
		}
		att.Statement.Batch = wireBatch(*rc.Batch)
	}
	return att, nil
}

func proveError(err error) error {
	switch {
	case errors.Is(err, zkp.ErrTimeout):
		return fmt.Errorf("%w: %w", healthagents.ErrProofTimeout, err)
	case errors.Is(err, zkp.ErrRecordTooLarge):
		return fmt.Errorf("%w: %w", healthagents.ErrProofUnsupported, err)
	case errors.Is(err, zkp.ErrUnsatisfied), errors.Is(err, zkp.ErrInvalidProof):
		return fmt.Errorf("%w: %w", healthagents.ErrProofRejected, err)
	}
	return fmt.Errorf("attest: proving: %w", err)
}

// wireBatch is the API form of b: decimal strings.
func wireBatch(b statement.Batch) *healthagents.StatementBatch {
	out := &healthagents.StatementBatch{Root: b.Root.String(), Size: b.Size, LeafIndex: b.Index, Path: make([]string, len(b.Path))}
	for i, v := range b.Path {
		out.Path[i] = v.String()
	}
	return out
}

// wireStatement is the API form of s.
func wireStatement(s statement.Statement) *healthagents.Statement {
	o := s.Opening
	out := &healthagents.Statement{Digest: s.Digest.String(), Opening: healthagents.StatementOpening{
		Circuit: o.Circuit, RevocationNonce: o.RevocationNonce, Fields: make([]healthagents.StatementField, len(o.Fields)),
	}}
	if o.CircuitID != nil {
		out.Opening.CircuitID = o.CircuitID.String()
	}
	if o.IssuerKeyHash != nil {
		out.Opening.IssuerKeyHash = o.IssuerKeyHash.String()
	}
	for i, f := range o.Fields {
		out.Opening.Fields[i] = healthagents.StatementField{Name: f.Name, Value: f.Value.String(), Text: f.Text}
	}
	return out
}
