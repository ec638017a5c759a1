package healthagents

// The checks of a v1 prescription: the request and its drugs, drug
// findings, plan coverage, and the verdict.

import (
	"fmt"
	"time"

	"github.com/healthagents/healthagents/prescription"
	"github.com/healthagents/healthagents/record"
)

// checkPrescription validates the request's shape and resolves its drugs.
func (v *V1) checkPrescription(req *V1PrescriptionRequest) ([]medLine, error) {
	if err := checkCode("patient_id", req.PatientID); err != nil {
		return nil, err
	}
	if err := checkNPI("provider_npi", req.ProviderNPI); err != nil {
		return nil, err
	}
	if req.PharmacyNPI != "" {
		if err := checkNPI("pharmacy_npi", req.PharmacyNPI); err != nil {
			return nil, err
		}
	}
	if len(req.Indication) > 256 {
		return nil, Errorf(CodeInvalid, "Validation error: field 'indication' is longer than 256 characters")
	}
	n := len(req.Medications)
	if n == 0 {
		return nil, Errorf(CodeInvalid, "Validation error: field 'medications' must hold at least one medication")
	}
	if n > MaxMedications {
		return nil, Errorf(CodeInvalid, "Validation error: field 'medications' holds more than %d medications", MaxMedications)
	}
	lines := make([]medLine, n)
	first := make(map[string]int, n) // normalized NDC -> its first line
	for i, m := range req.Medications {
		f := func(name string) string { return fmt.Sprintf("medications[%d].%s", i, name) }
		if err := checkCode(f("ndc_code"), m.NDCCode); err != nil {
			return nil, err
		}
		ndc, err := prescription.NormalizeNDC(m.NDCCode)
		if err != nil {
			return nil, WrapError(CodeInvalid, err, fmt.Sprintf("Validation error: field '%s' is not an NDC in 4-4-2, 5-3-2, 5-4-1 or 11-digit form", f("ndc_code")))
		}
		if j, dup := first[ndc]; dup {
			return nil, Errorf(CodeInvalid, "Validation error: fields 'medications[%d].ndc_code' and '%s' are the same NDC; list each package once (one line carries its whole quantity)", j, f("ndc_code"))
		}
		first[ndc] = i
		for _, b := range []struct {
			field    string
			val, max int
			min      int
		}{{"quantity", m.Quantity, MaxQuantity, 1}, {"days_supply", m.DaysSupply, MaxDaysSupply, 1}, {"refills", m.Refills, MaxRefills, 0}} {
			if b.val < b.min || b.val > b.max {
				return nil, Errorf(CodeInvalid, "Validation error: field '%s' must be between %d and %d", f(b.field), b.min, b.max)
			}
		}
		if len(m.Name) > MaxCodeLength || len(m.Strength) > MaxCodeLength {
			return nil, Errorf(CodeInvalid, "Validation error: field '%s' or '%s' is longer than %d characters", f("name"), f("strength"), MaxCodeLength)
		}
		drug, err := v.svc.Prescription().Lookup(ndc)
		switch {
		case err == nil && m.Name != "":
			if named, nerr := v.svc.Prescription().Lookup(m.Name); nerr == nil && named.RxCUI != drug.RxCUI {
				return nil, Errorf(CodeInvalid, "Validation error: fields '%s' and '%s' name different drugs", f("ndc_code"), f("name"))
			}
		case err != nil && m.Name == "":
			return nil, lookupError(err, "Drug", ndc)
		case err != nil:
			// Most package codes are not in the catalogue: the name decides.
			if drug, err = v.svc.Prescription().Lookup(m.Name); err != nil {
				return nil, lookupError(err, "Drug", ndc)
			}
		}
		lines[i] = medLine{ndc: ndc, drug: drug}
	}
	return lines, nil
}

func drugChecks(lines []medLine, ds []prescription.Decision) V1DrugInteractions {
	out := V1DrugInteractions{Status: "clear", Warnings: []V1Warning{}}
	seen := map[string]bool{}
	worst := 0
	if len(ds) > 0 {
		// The same entries in every decision: warned once.
		for _, u := range ds[0].Unidentified {
			out.Warnings = append(out.Warnings, unidentifiedWarning(u))
			worst = max(worst, prescription.SeverityModerate.Rank())
		}
	}
	for i, d := range ds {
		for _, ia := range d.Interactions {
			if ia.BetweenCandidates {
				// Reported in both candidates' decisions: count the pair once.
				lo, hi := d.Drug.RxCUI, ia.With.RxCUI
				if lo > hi {
					lo, hi = hi, lo
				}
				key := ia.RuleID + "|" + lo + "|" + hi
				if seen[key] {
					continue
				}
				seen[key] = true
			}
			src := "current"
			if ia.BetweenCandidates {
				src = "new"
			}
			out.Warnings = append(out.Warnings, V1Warning{
				Type: "interaction", NDCCode: lines[i].ndc, Drug: d.Drug.Name, With: ia.With.Name, WithSource: src,
				Severity: string(ia.Severity), Mechanism: ia.Mechanism, Management: ia.Management,
			})
			out.InteractionsFound++
			worst = max(worst, ia.Severity.Rank())
		}
		for _, c := range d.Contraindications {
			// Class-level text only: the rule's own reason and management
			// name the allergy or condition (docs/decisions/v1.md).
			mechanism, management := contraindicationText(c)
			out.Warnings = append(out.Warnings, V1Warning{
				Type: "contraindication", NDCCode: lines[i].ndc, Drug: d.Drug.Name,
				Severity: string(c.Severity), Mechanism: mechanism, Management: management,
			})
			worst = max(worst, c.Severity.Rank())
		}
	}
	switch {
	case worst >= prescription.SeverityMajor.Rank():
		out.Status = "blocked"
	case worst > 0:
		out.Status = "warning"
	}
	return out
}

// unidentifiedWarning is the warning for an entry of the patient's record
// the agent could not identify. It names the entry as the caller sent it.
func unidentifiedWarning(u prescription.Unidentified) V1Warning {
	what := "current medication"
	if u.Kind == prescription.EntryAllergy {
		what = "allergy"
	}
	return V1Warning{
		Type: "unidentified", Severity: string(prescription.SeverityModerate), Entry: u.Entry, EntryKind: u.Kind,
		Mechanism:  fmt.Sprintf("The patient's %s %q could not be identified (no RxNorm ingredient, product or NDC the drug catalogue knows, and no readable drug name), so its interactions and contraindications with the prescribed medications were not checked.", what, u.Entry),
		Management: "Review the patient's record before dispensing; record the entry with its RxNorm code, NDC or RxNorm name and validate again.",
	}
}

// contraindicationText is the mechanism and management of a v1
// contraindication warning. It says whether a recorded allergy or a
// recorded condition triggered the finding, never which one: the rule's
// reason and management ("A recorded penicillin allergy: ...", "...
// kidney disease ...") name the patient's allergen or condition, which
// is medical data the result must not carry. The prescriber reads the
// record for the detail.
func contraindicationText(c prescription.Contraindication) (mechanism, management string) {
	what, withheld := "a recorded condition", "The condition"
	if c.Kind == prescription.KindAllergy {
		what, withheld = "a recorded allergy", "The allergen"
	}
	switch {
	case c.Severity == prescription.SeverityContraindicated:
		mechanism = "Contraindicated for this patient: " + what + " rules this drug out."
		management = "Do not prescribe; review the patient's record and choose a drug of another class."
	case c.Severity.Blocks():
		mechanism = "Major patient contraindication: " + what + " argues strongly against this drug."
		management = "Avoid; review the patient's record and choose another drug unless the benefit clearly outweighs the risk."
	default:
		mechanism = "Patient caution: " + what + " calls for care with this drug."
		management = "Review the patient's record before dispensing; monitor the patient if prescribed."
	}
	return mechanism + " " + withheld + " is not named here; see the patient's record.", management
}

// coverageCheck: eligible when the record's coverage is active on the
// service date; coverage is the share of medications on the formulary.
func coverageCheck(rec *record.Record, lines []medLine, now time.Time) V1EligibilityCheck {
	out := V1EligibilityCheck{Status: "ineligible"}
	c := rec.Coverage
	if c == nil || c.Status != record.StatusActive {
		return out
	}
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	start, end := c.Window()
	if day.Before(start) || day.After(end) {
		return out
	}
	out.Status = "eligible"
	covered := 0
	for _, l := range lines {
		if l.drug.Formulary.Covered {
			covered++
		}
		if l.drug.Formulary.Tier >= 4 {
			out.RequiresPriorAuth = true
		}
	}
	out.Coverage = covered * 100 / len(lines)
	return out
}

// verdict is the finding codes and the validation status of a checked
// prescription: rejected when a drug has a blocking finding; requires
// review for a moderate finding, an entry of the record that could not be
// identified, an ineligible plan or a drug that needs prior authorization;
// approved otherwise. A decision that is not valid is never approved.
func verdict(ds []prescription.Decision, checks V1Checks) (codes []string, status string) {
	codes = []string{}
	rejected, review, contraindicated, unidentified := false, false, false, false
	for _, d := range ds {
		rejected = rejected || d.Blocked()
		unidentified = unidentified || len(d.Unidentified) > 0
		review = review || !d.Valid
		for _, ia := range d.Interactions {
			review = review || ia.Severity == prescription.SeverityModerate
		}
		for _, c := range d.Contraindications {
			review = review || c.Severity == prescription.SeverityModerate
			contraindicated = contraindicated || c.Severity.Blocks()
		}
	}
	if checks.DrugInteractions.InteractionsFound > 0 {
		codes = append(codes, V1InteractionFound)
	}
	if contraindicated {
		codes = append(codes, V1Contraindicated)
	}
	if checks.Eligibility.Status != "eligible" {
		codes = append(codes, V1Ineligible)
		review = true
	}
	if unidentified {
		codes = append(codes, V1Unidentified)
	}
	review = review || checks.Eligibility.RequiresPriorAuth
	switch {
	case rejected:
		return codes, StatusRejected
	case review:
		return codes, StatusRequiresReview
	default:
		return codes, StatusApproved
	}
}
