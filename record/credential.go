package record

import (
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/healthagents/healthagents/credential"
)

// checkCredential verifies the payer's signature over the credential's terms
// and that the coverage block says exactly what was signed: a decision then
// rests on signed terms only. Messages name fields, never values.
func (c *Coverage) checkCredential() error {
	err := c.Credential.Verify()
	switch {
	case errors.Is(err, credential.ErrBadSignature):
		return malformed("coverage.credential.signature", "does not verify over the signed terms")
	case errors.Is(err, credential.ErrEncoding):
		return malformed("coverage.credential.terms", "cannot be encoded (see docs/credentials.md)")
	case err != nil:
		return malformed("coverage.credential", "is malformed (schema, issuer key or signature form)")
	}
	t := c.Credential.Terms
	same := map[string]bool{
		"member_id":           t.MemberID == c.MemberID,
		"payer_id":            t.PayerID == c.PayerID,
		"plan_id":             t.PlanID == c.PlanID,
		"status":              t.Status == c.Status,
		"start":               t.Start == c.Start,
		"end":                 t.End == c.End,
		"deductible":          t.Deductible == c.Deductible,
		"deductible_met":      t.DeductibleMet == c.DeductibleMet,
		"copay":               t.Copay == c.Copay,
		"excluded_procedures": sameSet(t.Excluded, c.ExcludedProcedures),
		"coverage_overrides":  maps.Equal(t.Overrides, c.CoverageOverrides) || (len(t.Overrides) == 0 && len(c.CoverageOverrides) == 0),
	}
	for _, f := range slices.Sorted(maps.Keys(same)) {
		if !same[f] {
			return malformed("coverage."+f, "does not match the payer's signed credential")
		}
	}
	return nil
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// CredentialExpired reports whether the coverage carries a credential whose
// expiry day is before day (the expiry day itself still counts).
func (c *Coverage) CredentialExpired(day time.Time) bool {
	if c == nil || c.Credential == nil {
		return false
	}
	exp, err := time.Parse(DateLayout, c.Credential.Terms.Expires)
	return err != nil || day.UTC().Truncate(24*time.Hour).After(exp)
}
