package x12

import (
	"fmt"
	"strings"
)

// Level is where in the 271 a request was rejected: the loop whose AAA
// segment says why.
type Level string

// The levels of a 271 that carry an AAA: the HL hierarchy's name loops,
// and the benefit loops under a member.
const (
	SourceLevel            Level = "2100A" // the information source: the service could not answer
	ReceiverLevel          Level = "2100B" // the information receiver: the provider
	SubscriberLevel        Level = "2100C" // the subscriber: the member asked about
	DependentLevel         Level = "2100D" // a dependent of the subscriber
	SubscriberBenefitLevel Level = "2110C" // one benefit inquiry (EQ) of the subscriber
	DependentBenefitLevel  Level = "2110D" // one benefit inquiry (EQ) of a dependent
)

// Rejection is an AAA segment: the request could not be answered, and why.
// A 271 with a Rejection carries no benefit (EB) segments.
type Rejection struct {
	Level Level
	// ValidRequest is AAA01: Y when the request was well formed but could
	// not be answered, N when the request itself was wrong.
	ValidRequest bool
	// Reason is AAA03, a reject reason code valid at Level (see reasons).
	Reason string
	// FollowUp is AAA04, what the requester should do: C correct and
	// resubmit, N resubmission not allowed, P resubmit the original
	// transaction, R resubmission allowed, S, W, X or Y.
	FollowUp string
}

// reasons are the AAA03 codes of 005010X279A1 this package writes, by
// level, with their meaning.
var reasons = map[Level]map[string]string{
	SourceLevel: {
		"04": "Authorized Quantity Exceeded",
		"41": "Authorization/Access Restrictions",
		"42": "Unable to Respond at Current Time",
	},
	ReceiverLevel: {
		"15": "Required application data missing",
		"43": "Invalid/Missing Provider Identification",
		"51": "Provider Not on File",
	},
	SubscriberLevel: {
		"15": "Required application data missing",
		"42": "Unable to Respond at Current Time",
		"62": "Date of Service Not Within Allowable Inquiry Period",
		"63": "Date of Service in Future",
		"71": "Patient Birth Date Does Not Match That for the Patient on the Database",
		"72": "Invalid/Missing Subscriber/Insured ID",
		"73": "Invalid/Missing Subscriber/Insured Name",
		"75": "Subscriber/Insured Not Found",
		"76": "Duplicate Subscriber/Insured ID Number",
	},
	DependentLevel: {
		"15": "Required application data missing",
		"42": "Unable to Respond at Current Time",
		"62": "Date of Service Not Within Allowable Inquiry Period",
		"63": "Date of Service in Future",
		"65": "Invalid/Missing Patient Name",
		"67": "Patient Not Found",
		"68": "Duplicate Patient ID Number",
		"71": "Patient Birth Date Does Not Match That for the Patient on the Database",
	},
	SubscriberBenefitLevel: benefitReasons,
	DependentBenefitLevel:  benefitReasons,
}

// benefitReasons are the AAA03 codes of a 2110C/2110D loop this package
// writes.
var benefitReasons = map[string]string{
	"15": "Required application data missing",
	"54": "Inappropriate Product/Service ID Qualifier",
	"62": "Date of Service Not Within Allowable Inquiry Period",
	"63": "Date of Service in Future",
	"AG": "Invalid/Missing Procedure Code",
}

// Reason returns the meaning of AAA03 code at level l, and whether this
// package writes it there.
func Reason(l Level, code string) (string, bool) {
	m, ok := reasons[l][code]
	return m, ok
}

func (r *Rejection) check() error {
	codes, ok := reasons[r.Level]
	if !ok {
		return fmt.Errorf("%w: rejection level %q is not 2100A, 2100B, 2100C, 2100D, 2110C or 2110D", ErrInvalid, r.Level)
	}
	if _, ok := codes[r.Reason]; !ok {
		return fmt.Errorf("%w: reject reason %q is not one this package writes at %s", ErrInvalid, r.Reason, r.Level)
	}
	if len(r.FollowUp) != 1 || !strings.Contains("CNPRSWXY", r.FollowUp) {
		return fmt.Errorf("%w: follow-up action %q is not C, N, P, R, S, W, X or Y", ErrInvalid, r.FollowUp)
	}
	return nil
}

func (r *Rejection) segment() []string {
	valid := "N"
	if r.ValidRequest {
		valid = "Y"
	}
	return []string{valid, "", r.Reason, r.FollowUp}
}

// ForProblem maps an error answer of the v1 eligibility endpoint (its
// HTTP status and problem detail, v1 code in front) to what a 271 says
// instead of benefits (docs/x12.md): a rejection, or inactive coverage
// (EB*6) for NO_INSURANCE other than a member id that does not match. The
// detail's text after the code is never copied into the 271.
func ForProblem(status int, detail string) (rej *Rejection, inactive bool) {
	code, rest, _ := strings.Cut(detail, ": ")
	switch {
	case status == 401 || status == 403:
		return &Rejection{Level: SourceLevel, ValidRequest: false, Reason: "41", FollowUp: "C"}, false
	case status == 429:
		return &Rejection{Level: SourceLevel, ValidRequest: true, Reason: "04", FollowUp: "R"}, false
	case status >= 500:
		return &Rejection{Level: SourceLevel, ValidRequest: true, Reason: "42", FollowUp: "R"}, false
	case code == "PATIENT_NOT_FOUND":
		return &Rejection{Level: SubscriberLevel, ValidRequest: true, Reason: "75", FollowUp: "C"}, false
	case code == "NO_INSURANCE" && strings.HasPrefix(rest, "member_id"):
		return &Rejection{Level: SubscriberLevel, ValidRequest: true, Reason: "72", FollowUp: "C"}, false
	case code == "NO_INSURANCE":
		return nil, true
	case strings.Contains(detail, "provider_npi"):
		return &Rejection{Level: ReceiverLevel, ValidRequest: false, Reason: "43", FollowUp: "C"}, false
	default:
		// Any other refusal of the request (a field out of bounds, an
		// unknown procedure code): the request's data, to correct.
		return &Rejection{Level: SubscriberLevel, ValidRequest: false, Reason: "15", FollowUp: "C"}, false
	}
}
