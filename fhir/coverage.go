package fhir

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/healthagents/healthagents/credential"
	"github.com/healthagents/healthagents/record"
	r4 "github.com/samply/golang-fhir-models/fhir-models/fhir"
)

// ExtensionBase is the prefix of every extension URL this package defines
// (docs/decisions/fhir.md lists them).
const ExtensionBase = "https://healthagents.dev/fhir/StructureDefinition/"

// Coverage extensions: the plan terms R4's Coverage has no element for.
const (
	// ExtExcludedProcedure (on Coverage, repeating, valueString or
	// valueCode): a procedure code or class the plan does not cover
	// (record coverage.excluded_procedures).
	ExtExcludedProcedure = ExtensionBase + "coverage-excluded-procedure"
	// ExtCoverageOverride (on Coverage, repeating, complex): sub-extensions
	// "procedure" (valueString or valueCode) and "percent"
	// (valueUnsignedInt or valueInteger, 0..100), the coverage percent that
	// replaces the catalogue's for that procedure (record
	// coverage.coverage_overrides).
	ExtCoverageOverride = ExtensionBase + "coverage-override"
	// ExtDeductibleMet (on Coverage, valueMoney): the part of the deductible
	// already met (record coverage.deductible_met).
	ExtDeductibleMet = ExtensionBase + "coverage-deductible-met"
	// ExtCoverageCredential (on Coverage, valueBase64Binary): the payer's
	// signed coverage credential (docs/credentials.md), its JSON in base64
	// (record coverage.credential).
	ExtCoverageCredential = ExtensionBase + "coverage-credential"
)

// coverage picks the Bundle's Coverage and maps it: the only active one,
// else the first; two active ones are refused (which one applies would be
// a guess).
func (m *mapper) coverage() error {
	if len(m.coverages) == 0 {
		return nil
	}
	pick := -1
	for k, c := range m.coverages {
		if c.cov.Status == r4.FinancialResourceStatusCodesActive {
			if pick >= 0 {
				return errAt(entryPath(c.index, "Coverage")+".status", "a second active Coverage (Bundle.entry[%d] is the first); send the one that applies", m.coverages[pick].index)
			}
			pick = k
		}
	}
	if pick < 0 {
		pick = 0
	}
	c := m.coverages[pick]
	cov, err := mapCoverage(entryPath(c.index, "Coverage"), &c.cov)
	if err != nil {
		return err
	}
	m.rec.Coverage = cov
	m.sources.Coverage = entryPath(c.index, "Coverage")
	return nil
}

func mapCoverage(path string, c *r4.Coverage) (*record.Coverage, error) {
	out := &record.Coverage{}
	switch c.Status {
	case r4.FinancialResourceStatusCodesActive:
		out.Status = record.StatusActive
	case r4.FinancialResourceStatusCodesCancelled:
		out.Status = record.StatusCancelled
	default: // draft, entered-in-error: not in force
		out.Status = record.StatusInactive
	}
	if c.Period == nil {
		return nil, errAt(path+".period", "missing (the coverage's start and end dates)")
	}
	var err error
	if out.Start, err = dateOf(path+".period.start", c.Period.Start); err != nil {
		return nil, err
	}
	if out.End, err = dateOf(path+".period.end", c.Period.End); err != nil {
		return nil, err
	}
	switch {
	case c.SubscriberId != nil && strings.TrimSpace(*c.SubscriberId) != "":
		out.MemberID = *c.SubscriberId
	case len(c.Identifier) > 0:
		for _, id := range c.Identifier {
			if id.Value != nil && strings.TrimSpace(*id.Value) != "" {
				out.MemberID = *id.Value
				break
			}
		}
	}
	if out.MemberID == "" {
		return nil, errAt(path+".subscriberId", "missing (the member id: Coverage.subscriberId, or else Coverage.identifier[].value)")
	}
	if len(c.Payor) == 0 {
		return nil, errAt(path+".payor", "missing")
	}
	out.PayerID = referenceKey(c.Payor[0])
	for k, cl := range c.Class {
		if hasCode(cl.Type, SystemCoverageClass, "plan") {
			if strings.TrimSpace(cl.Value) == "" {
				return nil, errAt(fmt.Sprintf("%s.class[%d].value", path, k), "missing")
			}
			out.PlanID = cl.Value
			break
		}
	}
	for k, cb := range c.CostToBeneficiary {
		el := fmt.Sprintf("%s.costToBeneficiary[%d]", path, k)
		var dst *float64
		switch {
		case cb.Type != nil && hasCode(*cb.Type, SystemCopayType, "copay"):
			dst = &out.Copay
		case cb.Type != nil && hasCode(*cb.Type, SystemCopayType, "deductible"):
			dst = &out.Deductible
		default:
			continue // visit-specific copays and percentages: not in the record
		}
		v, err := money(el+".valueMoney", &cb.ValueMoney)
		if err != nil {
			return nil, err
		}
		*dst = v
	}
	if err := coverageExtensions(path, c.Extension, out); err != nil {
		return nil, err
	}
	return out, nil
}

func coverageExtensions(path string, exts []r4.Extension, out *record.Coverage) error {
	for k, e := range exts {
		el := fmt.Sprintf("%s.extension[%d]", path, k)
		switch e.Url {
		case ExtExcludedProcedure:
			code := firstString(e.ValueString, e.ValueCode)
			if code == "" {
				return errAt(el+".valueString", "missing (the excluded procedure code)")
			}
			out.ExcludedProcedures = append(out.ExcludedProcedures, code)
		case ExtCoverageOverride:
			code, pct, err := override(el, e.Extension)
			if err != nil {
				return err
			}
			if out.CoverageOverrides == nil {
				out.CoverageOverrides = map[string]int{}
			}
			out.CoverageOverrides[code] = pct
		case ExtDeductibleMet:
			v, err := money(el+".valueMoney", e.ValueMoney)
			if err != nil {
				return err
			}
			out.DeductibleMet = v
		case ExtCoverageCredential:
			if e.ValueBase64Binary == nil {
				return errAt(el+".valueBase64Binary", "missing (the credential's JSON, base64)")
			}
			raw, err := base64.StdEncoding.DecodeString(*e.ValueBase64Binary)
			if err != nil {
				return errAt(el+".valueBase64Binary", "is not base64")
			}
			var cred credential.Credential
			if err := json.Unmarshal(raw, &cred); err != nil {
				return errAt(el+".valueBase64Binary", "is not a coverage credential (docs/credentials.md)")
			}
			out.Credential = &cred
		}
	}
	return nil
}

func override(el string, subs []r4.Extension) (string, int, error) {
	code, pct, havePct := "", 0, false
	for _, s := range subs {
		switch s.Url {
		case "procedure":
			code = firstString(s.ValueString, s.ValueCode)
		case "percent":
			switch {
			case s.ValueUnsignedInt != nil:
				pct, havePct = *s.ValueUnsignedInt, true
			case s.ValueInteger != nil:
				pct, havePct = *s.ValueInteger, true
			}
		}
	}
	switch {
	case code == "":
		return "", 0, errAt(el+".extension(procedure)", "missing")
	case !havePct:
		return "", 0, errAt(el+".extension(percent)", "missing")
	case pct < 0 || pct > 100:
		return "", 0, errAt(el+".extension(percent)", "must be a percentage 0-100")
	}
	return code, pct, nil
}

// dateOf is the calendar date of a FHIR date or dateTime element: the
// record needs a full date.
func dateOf(el string, v *string) (string, error) {
	if v == nil || strings.TrimSpace(*v) == "" {
		return "", errAt(el, "missing")
	}
	s := *v
	if len(s) < len(record.DateLayout) {
		return "", errAt(el, "must be a full date YYYY-MM-DD (a year or month alone is not enough)")
	}
	d := s[:len(record.DateLayout)]
	if _, err := time.Parse(record.DateLayout, d); err != nil || (len(s) > len(d) && s[len(d)] != 'T') {
		return "", errAt(el, "must be a FHIR date or dateTime")
	}
	return d, nil
}

func money(el string, m *r4.Money) (float64, error) {
	if m == nil || m.Value == nil {
		return 0, errAt(el+".value", "missing")
	}
	if m.Currency != nil && *m.Currency != "USD" {
		return 0, errAt(el+".currency", "must be USD")
	}
	v, err := strconv.ParseFloat(m.Value.String(), 64)
	if err != nil || v < 0 || v > 1e9 {
		return 0, errAt(el+".value", "must be a non-negative amount")
	}
	return v, nil
}

// referenceKey names a Reference: its identifier value, else its reference,
// else its display.
func referenceKey(r r4.Reference) string {
	switch {
	case r.Identifier != nil && r.Identifier.Value != nil:
		return *r.Identifier.Value
	case r.Reference != nil:
		return *r.Reference
	case r.Display != nil:
		return *r.Display
	}
	return ""
}

func firstString(vs ...*string) string {
	for _, v := range vs {
		if v != nil && strings.TrimSpace(*v) != "" {
			return strings.TrimSpace(*v)
		}
	}
	return ""
}

// hasCode reports whether cc has a coding of system with code.
func hasCode(cc r4.CodeableConcept, system, code string) bool {
	for _, c := range cc.Coding {
		if c.System != nil && *c.System == system && c.Code != nil && *c.Code == code {
			return true
		}
	}
	return false
}

// codeIn returns the codes of cc's codings in system.
func codeIn(cc *r4.CodeableConcept, system string) []string {
	if cc == nil {
		return nil
	}
	var out []string
	for _, c := range cc.Coding {
		if c.System != nil && *c.System == system && c.Code != nil && strings.TrimSpace(*c.Code) != "" {
			out = append(out, strings.TrimSpace(*c.Code))
		}
	}
	return out
}
