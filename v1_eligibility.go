package healthagents

// The v1 eligibility check.

import (
	"context"
	"crypto/subtle"
	"time"

	"github.com/healthagents/healthagents/eligibility"
	"github.com/healthagents/healthagents/record"
)

// V1EligibilityRequest is the body of POST /api/v1/eligibility/verify.
type V1EligibilityRequest struct {
	PatientID     string `json:"patient_id" required:"true" maxLength:"64" doc:"A patient registered with PUT /api/v1/patients/{patient_id}." example:"PT-000123"`
	MemberID      string `json:"member_id" required:"true" maxLength:"64" doc:"Must equal coverage.member_id of the patient's record." example:"W123456789"`
	ProcedureCode string `json:"procedure_code" required:"true" maxLength:"64" doc:"PROC001..PROC005, or a CPT/HCPCS code mapped onto them." example:"PROC001"`
	ProviderNPI   string `json:"provider_npi" required:"true" doc:"10-digit NPI; its check digit must be valid." example:"1234567893"`
}

// V1Proof is the proof of a decision and its verification on chain.
type V1Proof struct {
	ProofData    string   `json:"proof_data" doc:"The Groth16 proof, hex (256 bytes in the Solidity verifier's layout)."`
	PublicInputs []string `json:"public_inputs" doc:"The public inputs, hex field elements."`
	BlockchainTx string   `json:"blockchain_tx" doc:"Hash of the mined transaction that recorded the decision: the registry's record (the verifier contract accepted the proof; its StatementRecorded event carries the public inputs) or, with CHAIN_ANCHOR=batch, its recordBatch, whose BatchRecorded root the statement's batch path leads to (the proof is then re-verified from proof_data)."`
}

func v1Proof(a *Attestation) *V1Proof {
	if a == nil || !a.Verified {
		return nil
	}
	return &V1Proof{ProofData: a.ProofData, PublicInputs: a.PublicInputs, BlockchainTx: a.TxHash}
}

// V1EligibilityResult is the v1 eligibility result: the decision, the
// coverage figures of the record, and the proof (docs/decisions/v1.md,
// "Eligibility: codes and statuses").
type V1EligibilityResult struct {
	Eligible              bool     `json:"eligible"`
	CoveragePercentage    int      `json:"coverage_percentage" minimum:"0" maximum:"100"`
	RequiresAuthorization bool     `json:"requires_authorization"`
	DeductibleMet         bool     `json:"deductible_met" doc:"coverage.deductible_met has reached coverage.deductible."`
	CopayAmount           float64  `json:"copay_amount" doc:"coverage.copay of the record."`
	Reason                *string  `json:"reason" doc:"Why the patient is not eligible (e.g. an excluded procedure); null when eligible."`
	VerificationProof     *V1Proof `json:"verification_proof" doc:"null only when the service runs without proofs."`
	// Statement and Issuer come with a proof (docs/statement.md).
	Statement *Statement `json:"statement,omitempty" doc:"What the proof states: the digest recorded on chain and its opening (the codes, day and outputs it commits to, with a fresh salt). Show it to a third party to prove this decision; it is never logged or sent in events."`
	Issuer    string     `json:"issuer,omitempty" doc:"Who vouches for the coverage the proof was made from: \"self\" (the service's own issuer key) or the registered payer's name." example:"self"`
}

// VerifyEligibility is POST /api/v1/eligibility/verify, over the record
// owner registered for req.PatientID. Its steps: check the request → open
// the registered record → match the member → decide → prove → emit.
func (v *V1) VerifyEligibility(ctx context.Context, owner string, req V1EligibilityRequest) (*V1EligibilityResult, error) {
	if err := v.checkEligibility(req); err != nil {
		return nil, err
	}
	rec, err := v.registeredRecord(ctx, owner, req.PatientID, eligibilityPrefix)
	if err != nil {
		return nil, err
	}
	if err := matchMember(rec, req.MemberID); err != nil {
		return nil, err
	}
	dctx, end := v.svc.step(ctx, "decide")
	d, err := v.svc.Eligibility().Check(dctx, rec, req.ProcedureCode, v.svc.serviceTime())
	end(err)
	if err != nil {
		return nil, v.svc.internal(ctx, eligibilityPrefix, err)
	}
	if d.NoCoverage {
		return nil, v1Error(CodeUnprocessable, V1NoInsurance, nil, "no active coverage on %s", d.ServiceDate.Format(time.DateOnly))
	}
	res := eligibilityResult(rec, d)
	att, err := v.svc.proveEligibility(ctx, rec, d)
	if err != nil {
		return nil, v.proofError(ctx, eligibilityPrefix, V1ProofInvalid, V1NetworkError, err)
	}
	verified := false
	if att != nil {
		res.VerificationProof = v1Proof(att)
		verified = att.Verified
		if verified {
			res.Statement, res.Issuer = att.Statement, att.Issuer
		}
	}
	data := map[string]any{
		"eligible": d.Eligible, "coverage_percentage": d.CoveragePct,
		"requires_auth": d.RequiresAuthorization, "zk_proof_verified": verified,
	}
	if res.Issuer != "" {
		data["issuer"] = res.Issuer
	}
	err = v.svc.emit(ctx, Event{Type: EventEligibilityVerified, PatientID: req.PatientID, Data: data})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// checkEligibility checks the request's fields and that the procedure is
// known, before any record is opened.
func (v *V1) checkEligibility(req V1EligibilityRequest) error {
	for _, f := range [][2]string{{"patient_id", req.PatientID}, {"member_id", req.MemberID}, {"procedure_code", req.ProcedureCode}} {
		if err := checkCode(f[0], f[1]); err != nil {
			return err
		}
	}
	if err := checkNPI("provider_npi", req.ProviderNPI); err != nil {
		return err
	}
	if _, err := v.svc.Eligibility().Lookup(req.ProcedureCode); err != nil {
		return lookupError(err, "Procedure", req.ProcedureCode)
	}
	return nil
}

// matchMember refuses a record without coverage, or whose member id is not
// memberID (compared in constant time), with NO_INSURANCE.
func matchMember(rec *record.Record, memberID string) error {
	if rec.Coverage == nil {
		return v1Error(CodeUnprocessable, V1NoInsurance, nil, "the patient's record holds no coverage")
	}
	if subtle.ConstantTimeCompare([]byte(rec.Coverage.MemberID), []byte(memberID)) != 1 {
		return v1Error(CodeUnprocessable, V1NoInsurance, nil, "member_id does not match the patient's coverage")
	}
	return nil
}

// eligibilityResult is the v1 result of decision d over rec, before its
// proof.
func eligibilityResult(rec *record.Record, d eligibility.Decision) *V1EligibilityResult {
	res := &V1EligibilityResult{
		Eligible:              d.Eligible,
		CoveragePercentage:    d.CoveragePct,
		RequiresAuthorization: d.RequiresAuthorization,
		DeductibleMet:         rec.Coverage.DeductibleMet >= rec.Coverage.Deductible,
		CopayAmount:           rec.Coverage.Copay,
	}
	if !d.Eligible {
		reason := d.Reason
		res.Reason = &reason
	}
	return res
}
