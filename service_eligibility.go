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
	rec, err := s.OpenRecord(ctx, env, eligibilityPrefix)
	if err != nil {
		return nil, err
	}
	d, err := s.elig.Check(ctx, rec, procedureCode, s.serviceTime())
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
	}
	err = s.emit(ctx, Event{Type: EventEligibilityVerified, PatientID: env.PatientID, Data: map[string]any{
		"procedure_code": procedureCode, "eligible": res.Eligible,
		"coverage_percentage": d.CoveragePct, "requires_auth": d.RequiresAuthorization,
		"zk_proof_verified": res.ZKProofVerified,
	}})
	if err != nil {
		return nil, err
	}
	return res, nil
}
