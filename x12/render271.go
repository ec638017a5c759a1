package x12

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Version is the implementation guide of the 271 Render271 writes.
const Version = "005010X279A1"

// Interchange is the envelope of one 271: the ISA and GS parties, the
// control numbers and the time.
type Interchange struct {
	// SenderID and ReceiverID are the interchange (ISA06/ISA08, qualifier
	// ZZ) and application (GS02/GS03) sender and receiver codes, 1 to 15
	// characters.
	SenderID, ReceiverID string
	// Control is the interchange control number (ISA13 and IEA02, nine
	// digits), also the group's (GS06, GE02) and the transaction set's
	// (ST02, SE02, four digits at least): 1 to 999999999.
	Control int
	// Time stamps ISA09/ISA10, GS04/GS05 and BHT04/BHT05 (in UTC).
	Time time.Time
	// Production marks the interchange P (production) in ISA15; otherwise
	// T (test).
	Production bool
}

// Eligibility is the answer the 271 carries, and the request it answers.
type Eligibility struct {
	// Source is the information source (loop 2100A, NM1*PR): the party that
	// decided, by name and payer id (NM108 PI).
	SourceName, SourceID string
	// ProviderNPI is the information receiver (loop 2100B, NM1*1P, XX).
	ProviderNPI string
	// MemberID is the subscriber's member id (loop 2100C, NM1*IL, MI).
	MemberID string
	// Reference is BHT03, the reference of the request (1-50 characters).
	Reference string
	// ProcedureCode is the procedure asked about (EB13: HC for a
	// CPT/HCPCS-shaped code, else ZZ).
	ProcedureCode string
	// ServiceDate is the date of the decision (DTP*307).
	ServiceDate time.Time

	Eligible              bool
	CoveragePercentage    int
	RequiresAuthorization bool
	DeductibleMet         bool
	CopayAmount           float64
	Reason                string // why not eligible; free text, 264 characters at most
	// ProofTransaction is the hash of the transaction that verified the
	// decision's proof (MSG), empty without a proof.
	ProofTransaction string
	// Statement is the decision's statement as EncodeStatement wrote it
	// (MSG*DECISION STATEMENT segments after the proof transaction's), and
	// Proof its proof as EncodeProof wrote it, for a decision anchored in a
	// batch (one MSG*DECISION PROOF DATA after the statement's): what
	// verify-decision reads from the 271. Both as in Benefit.
	Statement, Proof string

	// Rejection, when set, is the AAA segment of a request that got no
	// answer (ForProblem maps the service's error answers); the 271 then
	// carries no EB segment and the fields of the answer above are unused.
	Rejection *Rejection
	// Inactive says the member has no coverage in force on the service
	// date: one EB*6 (inactive) and no procedure answer.
	Inactive bool
}

var hcpcsLike = regexp.MustCompile(`^[0-9A-Z][0-9]{3}[0-9A-Z]$`)

// Render271 writes e as one interchange holding one 271 transaction set:
// ISA, GS, ST, BHT, the three HL levels (source, receiver, subscriber) with
// their NM1, DTP*307, the EB segments, MSG, SE, GE, IEA (docs/x12.md). A
// rejected request has an AAA after its level's NM1 instead of EB
// segments; inactive coverage one EB*6. SE01 counts the segments from ST
// to SE; GE01 and IEA01 count one.
func Render271(ic Interchange, e Eligibility) ([]byte, error) {
	if err := check271(ic, e); err != nil {
		return nil, err
	}
	at := ic.Time.UTC()
	stCtl := fmt.Sprintf("%04d", ic.Control)
	w := &writer{}
	w.header(parties{senderQual: "ZZ", sender: ic.SenderID, receiverQual: "ZZ", receiver: ic.ReceiverID,
		appSender: ic.SenderID, appReceiver: ic.ReceiverID, production: ic.Production}, ic.Control, at, "HB", Version)
	w.startSet("271", stCtl, Version)
	w.seg("BHT", "0022", "11", e.Reference, at.Format("20060102"), at.Format("1504"))
	rejectAt := func(l Level) {
		if e.Rejection != nil && e.Rejection.Level == l {
			w.seg("AAA", e.Rejection.segment()...)
		}
	}
	w.seg("HL", "1", "", "20", "1")
	w.seg("NM1", "PR", "2", e.SourceName, "", "", "", "", "PI", e.SourceID)
	rejectAt(SourceLevel)
	w.seg("HL", "2", "1", "21", "1")
	w.seg("NM1", "1P", "2", "", "", "", "", "", "XX", e.ProviderNPI)
	rejectAt(ReceiverLevel)
	w.seg("HL", "3", "2", "22", "0")
	w.seg("NM1", "IL", "1", "", "", "", "", "", "MI", e.MemberID)
	rejectAt(SubscriberLevel)
	w.seg("DTP", "307", "D8", e.ServiceDate.UTC().Format("20060102"))
	switch {
	case e.Rejection == nil && e.Inactive:
		// No coverage in force (health benefit plan coverage, service type 30).
		w.seg("EB", "6", "IND", "30")
	case e.Rejection == nil:
		w.benefits(e)
	}
	w.endSet(stCtl)
	w.trailer(ic.Control, 1)
	return w.buf.Bytes(), nil
}

// benefits writes the 2110C loops of an answer: the plan, the procedure,
// the patient's share, the copay, the deductible and the proof.
func (w *writer) benefits(e Eligibility) {
	// The plan: active coverage (health benefit plan coverage, service type 30).
	w.seg("EB", "1", "IND", "30")
	proc := procedureID(e.ProcedureCode)
	auth := "N"
	if e.RequiresAuthorization {
		auth = "Y"
	}
	if e.Eligible {
		// The procedure: covered, with its authorization indicator.
		w.seg("EB", "1", "IND", "", "", "", "", "", "", "", "", auth, "", proc)
		// The patient's share and the copay.
		w.shares("", proc, e.CoveragePercentage, e.CopayAmount)
	} else {
		// The procedure: not covered.
		w.seg("EB", "I", "IND", "", "", "", "", "", "", "", "", auth, "", proc)
		if r := freeText(e.Reason); r != "" {
			w.seg("MSG", r)
		}
	}
	w.deductible(e.DeductibleMet)
	w.proofMessage(e.ProofTransaction)
	if e.Statement != "" {
		w.statementMessages(e.Statement)
	}
	w.proofDataMessage(e.Proof)
}

func check271(ic Interchange, e Eligibility) error {
	if ic.Control < 1 || ic.Control > 999999999 {
		return fmt.Errorf("%w: the control number must be 1 to 999999999", ErrInvalid)
	}
	if ic.Time.IsZero() || e.ServiceDate.IsZero() {
		return fmt.Errorf("%w: the interchange time and the service date are required", ErrInvalid)
	}
	if e.Rejection != nil {
		if err := e.Rejection.check(); err != nil {
			return err
		}
		switch e.Rejection.Level {
		case SourceLevel, ReceiverLevel, SubscriberLevel:
		default:
			return fmt.Errorf("%w: a one-member 271 rejects at 2100A, 2100B or 2100C, not %s", ErrInvalid, e.Rejection.Level)
		}
		if e.Inactive {
			return fmt.Errorf("%w: a rejected request has no coverage status", ErrInvalid)
		}
	}
	if e.CoveragePercentage < 0 || e.CoveragePercentage > 100 {
		return fmt.Errorf("%w: the coverage percentage must be 0 to 100", ErrInvalid)
	}
	if e.CopayAmount < 0 || e.CopayAmount > 1e9 || e.CopayAmount != e.CopayAmount {
		return fmt.Errorf("%w: the copay must be a non-negative amount", ErrInvalid)
	}
	for _, f := range []struct {
		name, v  string
		min, max int
	}{
		{"sender id", ic.SenderID, 1, 15}, {"receiver id", ic.ReceiverID, 1, 15},
		{"source name", e.SourceName, 1, 60}, {"source id", e.SourceID, 2, 80},
		{"provider NPI", e.ProviderNPI, 10, 10}, {"member id", e.MemberID, 2, 80},
		{"reference", e.Reference, 1, 50}, {"procedure code", e.ProcedureCode, 1, 48},
		{"reason", freeText(e.Reason), 0, 264}, {"proof transaction", e.ProofTransaction, 0, 200},
	} {
		if err := checkValue(f.name, f.v, f.min, f.max); err != nil {
			return err
		}
	}
	// The proof transaction, the statement's parts (at most 8) and the
	// proof share the deductible's 2110 loop: at most 10 MSG.
	return checkDecisionTexts("the answer", e.ProofTransaction, e.Statement, e.Proof)
}

// procedureID is the EB13 composite: HC (HCPCS, which includes CPT) for a
// five-character CPT/HCPCS-shaped code, else ZZ (mutually defined: the
// service's catalogue, PROC001...).
func procedureID(code string) string {
	q := "ZZ"
	if hcpcsLike.MatchString(code) {
		q = "HC"
	}
	return q + string(SubElementSep) + code
}

// decimal writes an X12 R (decimal) value: no exponent, no trailing zeros.
func decimal(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "" || s == "-" {
		return "0"
	}
	return s
}

// freeText is s for a MSG element: separators, control and non-ASCII
// characters become spaces.
func freeText(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c < 0x20 || c > 0x7e || c == ElementSep || c == SubElementSep || c == RepetitionSep || c == SegmentTerm {
			b[i] = ' '
		}
	}
	return strings.TrimSpace(string(b))
}
