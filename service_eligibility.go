package healthagents

// The root family's eligibility check (POST /verify-eligibility).

import (
	"context"
)

// VerifyEligibility checks whether the patient in env is covered for
// procedureCode today.
func (s *Service) VerifyEligibility(ctx context.Context, env *PatientData, procedureCode string) (*EligibilityResult, error) {
	if err := checkCode("procedure_code", procedureCode); err != nil {
		return nil, err
	}
	if _, err := s.elig.Lookup(procedureCode); err != nil {
		return nil, lookupError(err, "Procedure", procedureCode)
	}
	rec, err := s.openChecked(ctx, env, eligibilityPrefix)
	if err != nil {
		return nil, err
	}
	dctx, end := s.step(ctx, "decide")
	d, err := s.elig.Check(dctx, rec, procedureCode, s.serviceTime())
	end(err)
	if err != nil {
		return nil, s.internal(ctx, eligibilityPrefix, err)
	}
	res := &EligibilityResult{
		Eligible:              d.Eligible,
		CoveragePct:           float64(d.CoveragePct),
		PrivacyPreserved:      true,
		ProcedureCode:         procedureCode,
		RequiresAuthorization: d.RequiresAuthorization,
	}
	if !d.Eligible {
		reason := d.Reason
		res.Reason = &reason
	}
	att, err := s.proveEligibility(ctx, rec, d)
	if err != nil {
		return nil, s.proofError(ctx, eligibilityPrefix, err)
	}
	if att != nil {
		res.Proof = att
		res.ZKProofVerified = att.Verified
		res.DecisionRecord = decisionRecord(att)
	}
	// No code or day in the event: webhooks are not where the decision's
	// content goes (the caller has the result; a third party the statement).
	data := map[string]any{
		"eligible": res.Eligible, "coverage_percentage": d.CoveragePct, "requires_auth": d.RequiresAuthorization,
		"zk_proof_verified": res.ZKProofVerified,
	}
	if att != nil && att.Issuer != "" {
		data["issuer"] = att.Issuer
	}
	err = s.emit(ctx, Event{Type: EventEligibilityVerified, PatientID: env.PatientID, Data: data})
	if err != nil {
		return nil, err
	}
	return res, nil
}
