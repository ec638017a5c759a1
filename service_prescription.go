package healthagents

// The root family's prescription validation (POST /validate-prescription).

import (
	"context"
	"fmt"
	"strings"

	"github.com/healthagents/healthagents/prescription"
)

// ValidatePrescription checks drugCode for the patient in env: interactions
// with current medications, contraindications, and coverage. Valid follows
// the clinical checks; ZKProofVerified is true only when a proof that the
// plan covers the drug on the service date was verified on chain.
//
// A blocking interaction or contraindication is an error (422, the spec's
// detail). A current medication or allergy the agent cannot identify is
// not: the answer is 200 with valid false and a Reason naming the entries
// (docs/decisions.md, "Unidentified entries"), and the proof states it.
func (s *Service) ValidatePrescription(ctx context.Context, env *PatientData, drugCode string) (*PrescriptionResult, error) {
	if err := checkCode("drug_code", drugCode); err != nil {
		return nil, err
	}
	if _, err := s.rx.Lookup(drugCode); err != nil {
		return nil, lookupError(err, "Drug", drugCode)
	}
	rec, err := s.openChecked(ctx, env, prescriptionPrefix)
	if err != nil {
		return nil, err
	}
	dctx, end := s.step(ctx, "decide")
	d, err := s.rx.Validate(dctx, rec, drugCode)
	end(err)
	if err != nil {
		return nil, s.internal(ctx, prescriptionPrefix, err)
	}
	if d.Blocked() {
		return nil, &Error{Code: CodeUnprocessable, Detail: prescriptionPrefix + ": " + d.Reason}
	}
	res := &PrescriptionResult{
		Valid:               d.Valid,
		Reason:              unidentifiedReason(d.Unidentified),
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

// unidentifiedReason is the root family's reason for a prescription that
// is not valid because entries of the record could not be identified
// ("" for none). It names the entries as the caller's record has them:
// it goes in the answer, never in a log or an event.
func unidentifiedReason(us []prescription.Unidentified) string {
	if len(us) == 0 {
		return ""
	}
	names := make([]string, len(us))
	for i, u := range us {
		names[i] = u.String()
	}
	return fmt.Sprintf("Review required: the patient's %s could not be identified, so interactions and contraindications with it were not checked", strings.Join(names, ", "))
}
