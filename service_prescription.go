package healthagents

// The root family's prescription validation (POST /validate-prescription).

import (
	"context"

	"github.com/healthagents/healthagents/prescription"
)

// ValidatePrescription checks drugCode for the patient in env: interactions
// with current medications, contraindications, and coverage. Valid follows
// the clinical checks; ZKProofVerified is true only when a proof that the
// plan covers the drug on the service date was verified on chain.
func (s *Service) ValidatePrescription(ctx context.Context, env *PatientData, drugCode string) (*PrescriptionResult, error) {
	if err := checkCode("drug_code", drugCode); err != nil {
		return nil, err
	}
	if _, err := s.rx.Lookup(drugCode); err != nil {
		return nil, lookupError(err, "Drug", drugCode)
	}
	rec, err := s.OpenRecord(ctx, env, prescriptionPrefix)
	if err != nil {
		return nil, err
	}
	dctx, end := s.step(ctx, "decide")
	d, err := s.rx.Validate(dctx, rec, drugCode)
	end(err)
	if err != nil {
		return nil, s.internal(ctx, prescriptionPrefix, err)
	}
	if !d.Valid {
		return nil, &Error{Code: CodeUnprocessable, Detail: prescriptionPrefix + ": " + d.Reason}
	}
	res := &PrescriptionResult{
		Valid:               true,
		DrugCode:            drugCode,
		InteractionsChecked: d.InteractionsChecked,
		CrossChainOracle:    "unconfirmed: no pharmacy availability attestation is published for this drug",
	}
	att, err := s.provePrescription(ctx, rec, []prescription.Decision{d}, s.serviceTime())
	if err != nil {
		return nil, s.proofError(ctx, prescriptionPrefix, err)
	}
	if att != nil {
		res.Proof = att
		res.ZKProofVerified = att.Verified && att.Covered
		res.DecisionRecord = decisionRecord(att)
	}
	// No drug code in the event (see VerifyEligibility).
	data := map[string]any{"valid": res.Valid, "zk_proof_verified": res.ZKProofVerified}
	if att != nil && att.Issuer != "" {
		data["issuer"] = att.Issuer
	}
	err = s.emit(ctx, Event{Type: EventPrescriptionValidated, PatientID: env.PatientID, Data: data})
	if err != nil {
		return nil, err
	}
	return res, nil
}
