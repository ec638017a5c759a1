package healthagents

// The root family's prescription validation (POST /validate-prescription).

import (
	"context"
	"math/big"
	"strings"
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
	d, err := s.rx.Validate(ctx, rec, drugCode)
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
	att, err := s.provePrescription(ctx, rec, d, s.serviceTime())
	if err != nil {
		return nil, s.proofError(ctx, prescriptionPrefix, err)
	}
	if att != nil {
		res.Proof = att
		res.ZKProofVerified = att.Verified && provesCoverage(att)
	}
	err = s.emit(ctx, Event{Type: EventPrescriptionValidated, PatientID: env.PatientID, Data: map[string]any{
		"drug_code": drugCode, "valid": res.Valid, "zk_proof_verified": res.ZKProofVerified,
	}})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// provesCoverage reports whether a prescription attestation states that the
// plan covers the drug: its last public input (see Attestor) is 1.
func provesCoverage(att *Attestation) bool {
	n := len(att.PublicInputs)
	if n == 0 {
		return false
	}
	v, ok := new(big.Int).SetString(strings.TrimPrefix(att.PublicInputs[n-1], "0x"), 16)
	return ok && v.Cmp(big.NewInt(1)) == 0
}
