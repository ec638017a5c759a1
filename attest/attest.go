package attest

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/eligibility"
	"github.com/healthagents/healthagents/prescription"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/zkp"
)

// Statement kinds on chain: one per circuit, named like it.
const (
	KindEligibility  = chain.Kind(zkp.CircuitEligibility)
	KindPrescription = chain.Kind(zkp.CircuitPrescription)
)

// Prover proves statements; *zkp.Prover is one.
type Prover interface {
	ProveEligibility(ctx context.Context, in zkp.EligibilityInput) (*zkp.Proof, error)
	ProvePrescription(ctx context.Context, in zkp.PrescriptionInput) (*zkp.Proof, error)
}

// Ledger verifies and records proofs on chain; *chain.Ledger is one.
type Ledger interface {
	Submit(ctx context.Context, kind chain.Kind, proof [8]*big.Int, inputs []*big.Int) (chain.Receipt, error)
}

// Attestor implements healthagents.Attestor.
type Attestor struct {
	prover Prover
	ledger Ledger
}

var _ healthagents.Attestor = (*Attestor)(nil)

// New returns an Attestor proving with prover and verifying on ledger.
func New(prover Prover, ledger Ledger) (*Attestor, error) {
	if prover == nil || ledger == nil {
		return nil, errors.New("attest: prover and ledger are required")
	}
	return &Attestor{prover: prover, ledger: ledger}, nil
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

// AttestEligibility proves d from the record's coverage and verifies the
// proof on chain. A record without coverage has nothing to prove: the
// attestation is returned unverified.
func (a *Attestor) AttestEligibility(ctx context.Context, rec *record.Record, d eligibility.Decision) (*healthagents.Attestation, error) {
	if rec.Coverage == nil {
		return &healthagents.Attestation{Circuit: zkp.CircuitEligibility}, nil
	}
	proof, err := a.prover.ProveEligibility(ctx, zkp.EligibilityInput{
		Coverage:      rec.Coverage,
		ClassIndex:    d.Procedure.Class.Index,
		ClassCode:     d.Procedure.Class.Code,
		ProcedureCode: d.Procedure.Code,
		ServiceDate:   d.ServiceDate,
		CoveragePct:   d.CoveragePct,
		PreAuth:       d.RequiresAuthorization,
		Eligible:      d.Eligible,
	})
	if err != nil {
		return nil, proveError(err)
	}
	return a.verify(ctx, KindEligibility, proof)
}

// AttestPrescription proves the coverage statement behind a prescription —
// the plan covers d's drug on date (coverage active, date in the window, the
// drug not excluded), or does not — and verifies the proof on chain. The
// attestation's last public input is the statement's Covered output (1 or
// 0), as healthagents.Attestor requires: a verified proof of "not covered"
// is returned like any other, and the Service does not count it as
// zk_proof_verified.
func (a *Attestor) AttestPrescription(ctx context.Context, rec *record.Record, d prescription.Decision, date time.Time) (*healthagents.Attestation, error) {
	if rec.Coverage == nil {
		return &healthagents.Attestation{Circuit: zkp.CircuitPrescription}, nil
	}
	covered, err := zkp.Covers(rec.Coverage, d.Drug.RxCUI, date)
	if err != nil {
		return nil, proveError(err)
	}
	proof, err := a.prover.ProvePrescription(ctx, zkp.PrescriptionInput{
		Coverage: rec.Coverage, DrugCode: d.Drug.RxCUI, ServiceDate: date, Covered: covered,
	})
	if err != nil {
		return nil, proveError(err)
	}
	return a.verify(ctx, KindPrescription, proof)
}

func (a *Attestor) verify(ctx context.Context, kind chain.Kind, proof *zkp.Proof) (*healthagents.Attestation, error) {
	solidity, err := chain.ProofFromGnark(proof.Groth16)
	if err != nil {
		return nil, fmt.Errorf("attest: encoding the proof: %w", err)
	}
	att := &healthagents.Attestation{
		Circuit:      proof.Circuit,
		ProofData:    proof.ProofData(),
		PublicInputs: proof.PublicInputs(),
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
