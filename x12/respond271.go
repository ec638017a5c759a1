package x12

// The 271 that answers a 270: one transaction set per 270 set, the same
// hierarchy (source, receiver, subscriber, dependent), the traces echoed,
// and per member the decisions as EB loops (docs/x12.md).

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Response is the answer to one 270 transaction set.
type Response struct {
	// Reference is the 270's BHT03, echoed in the 271's BHT03.
	Reference string
	Sources   []SourceAnswer
}

// SourceAnswer answers a 2000A loop: the information source as the 270
// named it; a Rejection (2100A AAA) answers for everything below it.
type SourceAnswer struct {
	Party
	Rejection *Rejection
	Receivers []ReceiverAnswer
}

// ReceiverAnswer answers a 2000B loop; a Rejection (2100B AAA) answers for
// its subscribers.
type ReceiverAnswer struct {
	Party
	Rejection   *Rejection
	Subscribers []SubscriberAnswer
}

// SubscriberAnswer answers a 2000C loop and its dependents (2000D).
type SubscriberAnswer struct {
	MemberAnswer
	Dependents []MemberAnswer
}

// Coverage is what a 271 says of the plan (EB*1 or EB*6, service type 30).
type Coverage int

// Plan coverage states.
const (
	// CoverageUnknown: no EB for the plan (nothing was decided).
	CoverageUnknown Coverage = iota
	// CoverageActive: EB*1*IND*30; a decision was made under the plan.
	CoverageActive
	// CoverageInactive: EB*6*IND*30; no coverage in force on the date.
	CoverageInactive
)

// MemberAnswer answers one member level (2000C or 2000D).
type MemberAnswer struct {
	// Traces are the 270's TRN segments, echoed as trace type 2.
	Traces []Trace
	// MemberID is NM109 (MI) at 2100C; names are never written.
	MemberID string
	// Rejection is the AAA of the 2100C/2100D loop; the member then has no
	// benefits.
	Rejection *Rejection
	// ServiceDate is DTP*307, the date the decisions were made for.
	ServiceDate time.Time
	Coverage    Coverage
	// DeductibleMet, when set, is written as EB*C (deductible) once.
	DeductibleMet *bool
	Benefits      []Benefit
}

// Benefit is one decision (or one question that could not be decided) as
// a 2110 loop.
type Benefit struct {
	// ServiceType is EB03: the service type asked (empty for a procedure
	// asked by EQ02).
	ServiceType string
	// Procedure is EB13: HC for a CPT/HCPCS-shaped code, else ZZ (the
	// catalogue's PROC001...).
	Procedure string

	Eligible, RequiresAuthorization bool
	CoveragePercentage              int
	CopayAmount                     float64
	Reason                          string
	ProofTransaction                string
	// Statement is the decision's statement as EncodeStatement wrote it:
	// MSG*DECISION STATEMENT segments after the proof transaction's.
	Statement string
	// Proof is the decision's proof as EncodeProof wrote it, for a
	// decision anchored in a batch (whose transaction holds a Merkle root,
	// not the proof): one MSG*DECISION PROOF DATA after the statement's.
	// It needs the statement.
	Proof string

	// Refused: the question got no decision: EB*V (cannot process), the
	// loop's AAA when Rejection is set, and Message.
	Refused   bool
	Rejection *Rejection
	Message   string
}

// Render271s writes one interchange holding one 271 transaction set per
// response, in order, in one functional group (HB), addressed back to
// inq's sender with rp's control number and time.
func Render271s(inq *Inquiry, rp Reply, responses []Response) ([]byte, error) {
	if err := rp.check(); err != nil {
		return nil, err
	}
	if len(responses) == 0 {
		return nil, fmt.Errorf("%w: a 271 interchange needs at least one response", ErrInvalid)
	}
	w := &writer{}
	w.header(rp.answerTo(&inq.Envelope, inq.ApplicationSender, inq.ApplicationReceiver), rp.Control, rp.Time, "HB", Version)
	at := rp.Time.UTC()
	for i, resp := range responses {
		ctl := fmt.Sprintf("%04d", i+1)
		if err := resp.check(); err != nil {
			return nil, err
		}
		w.startSet("271", ctl, Version)
		w.seg("BHT", "0022", "11", resp.Reference, at.Format("20060102"), at.Format("1504"))
		w.hierarchy(resp)
		w.endSet(ctl)
	}
	w.trailer(rp.Control, len(responses))
	return w.buf.Bytes(), nil
}

// hierarchy writes the HL levels of one response.
func (w *writer) hierarchy(resp Response) {
	n := 0
	next := func() string { n++; return strconv.Itoa(n) }
	child := func(b bool) string {
		if b {
			return "1"
		}
		return "0"
	}
	for _, src := range resp.Sources {
		srcHL := next()
		recv := src.Rejection == nil && len(src.Receivers) > 0
		w.seg("HL", srcHL, "", "20", child(recv))
		w.seg("NM1", src.Entity, src.EntityType, src.LastName, src.FirstName, "", "", "", src.IDQualifier, src.ID)
		w.rejection(src.Rejection)
		if !recv {
			continue
		}
		for _, rcv := range src.Receivers {
			rcvHL := next()
			subs := rcv.Rejection == nil && len(rcv.Subscribers) > 0
			w.seg("HL", rcvHL, srcHL, "21", child(subs))
			w.seg("NM1", rcv.Entity, rcv.EntityType, "", "", "", "", "", rcv.IDQualifier, rcv.ID)
			w.rejection(rcv.Rejection)
			if !subs {
				continue
			}
			for _, sub := range rcv.Subscribers {
				subHL := next()
				w.seg("HL", subHL, rcvHL, "22", child(len(sub.Dependents) > 0))
				w.member(sub.MemberAnswer, "IL")
				for _, dep := range sub.Dependents {
					w.seg("HL", next(), subHL, "23", "0")
					w.member(dep, "03")
				}
			}
		}
	}
}

func (w *writer) rejection(r *Rejection) {
	if r != nil {
		w.seg("AAA", r.segment()...)
	}
}

// member writes a 2000C/2000D level after its HL: TRN, NM1, AAA, DTP*307,
// the plan, the benefits, the deductible.
func (w *writer) member(m MemberAnswer, entity string) {
	for _, t := range m.Traces {
		w.seg("TRN", "2", t.Number, t.Originator, t.Additional)
	}
	if entity == "IL" && m.MemberID != "" {
		w.seg("NM1", "IL", "1", "", "", "", "", "", "MI", m.MemberID)
	} else {
		w.seg("NM1", entity, "1")
	}
	w.rejection(m.Rejection)
	w.seg("DTP", "307", "D8", m.ServiceDate.UTC().Format("20060102"))
	if m.Rejection != nil {
		return
	}
	switch m.Coverage {
	case CoverageActive:
		w.seg("EB", "1", "IND", PlanCoverage)
	case CoverageInactive:
		w.seg("EB", "6", "IND", PlanCoverage)
	}
	for _, b := range m.Benefits {
		w.benefit(b)
	}
	if m.DeductibleMet != nil {
		w.deductible(*m.DeductibleMet)
	}
}

// benefit writes one 2110 loop: the decision on the procedure (EB*1
// covered, EB*I not covered, with the authorization indicator), its
// messages, the patient's share and the copay; or EB*V.
func (w *writer) benefit(b Benefit) {
	proc := ""
	if b.Procedure != "" {
		proc = procedureID(b.Procedure)
	}
	if b.Refused {
		w.seg("EB", "V", "IND", b.ServiceType, "", "", "", "", "", "", "", "", "", proc)
		w.rejection(b.Rejection)
		if m := freeText(b.Message); m != "" {
			w.seg("MSG", m)
		}
		return
	}
	auth := "N"
	if b.RequiresAuthorization {
		auth = "Y"
	}
	code := "I"
	if b.Eligible {
		code = "1"
	}
	w.seg("EB", code, "IND", b.ServiceType, "", "", "", "", "", "", "", auth, "", proc)
	if r := freeText(b.Reason); r != "" && !b.Eligible {
		w.seg("MSG", r)
	}
	w.proofMessage(b.ProofTransaction)
	if b.Statement != "" {
		w.statementMessages(b.Statement)
	}
	w.proofDataMessage(b.Proof)
	if b.Eligible {
		w.shares(b.ServiceType, proc, b.CoveragePercentage, b.CopayAmount)
	}
}

// shares writes the patient's share (co-insurance, EB08 as a fraction)
// and the copay per visit (EB07, EB06 27).
func (w *writer) shares(serviceType, proc string, coverage int, copay float64) {
	w.seg("EB", "A", "IND", serviceType, "", "", "", "", decimal(float64(100-coverage)/100), "", "", "", "", proc)
	w.seg("EB", "B", "IND", serviceType, "", "", "27", decimal(copay), "", "", "", "", "", proc)
}

// deductible writes the plan's deductible: remaining (EB06 29) zero, or a
// message that it is not met.
func (w *writer) deductible(met bool) {
	if met {
		w.seg("EB", "C", "IND", PlanCoverage, "", "", "29", "0")
		return
	}
	w.seg("EB", "C", "IND", PlanCoverage)
	w.seg("MSG", "DEDUCTIBLE NOT MET")
}

func (w *writer) proofMessage(tx string) {
	if tx != "" {
		w.seg("MSG", proofMessage+tx)
	}
}

// check refuses a response whose values cannot be written.
func (r Response) check() error {
	if err := checkValue("reference", r.Reference, 0, 50); err != nil {
		return err
	}
	if len(r.Sources) == 0 {
		return fmt.Errorf("%w: a 271 answers at least one information source", ErrInvalid)
	}
	for _, s := range r.Sources {
		if err := checkParty(s.Party, s.Rejection); err != nil {
			return err
		}
		for _, rc := range s.Receivers {
			if err := checkParty(rc.Party, rc.Rejection); err != nil {
				return err
			}
			for _, sub := range rc.Subscribers {
				if err := sub.check(SubscriberLevel); err != nil {
					return err
				}
				for _, d := range sub.Dependents {
					if err := d.check(DependentLevel); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

func checkParty(p Party, rej *Rejection) error {
	for _, f := range []struct {
		name, v  string
		min, max int
	}{
		{"entity code", p.Entity, 2, 3}, {"entity type", p.EntityType, 1, 1}, {"name", p.LastName, 0, 60},
		{"first name", p.FirstName, 0, 35}, {"id qualifier", p.IDQualifier, 1, 2}, {"id", p.ID, 2, 80},
	} {
		if err := checkValue(f.name, f.v, f.min, f.max); err != nil {
			return err
		}
	}
	if rej != nil {
		return rej.check()
	}
	return nil
}

func (m MemberAnswer) check(l Level) error {
	if m.ServiceDate.IsZero() {
		return fmt.Errorf("%w: a member's answer needs its service date", ErrInvalid)
	}
	for _, t := range m.Traces {
		if err := checkValue("trace number", t.Number, 1, 50); err != nil {
			return err
		}
		if err := checkValue("trace originator", t.Originator, 10, 10); err != nil {
			return err
		}
		if err := checkValue("trace additional id", t.Additional, 0, 50); err != nil {
			return err
		}
	}
	if err := checkValue("member id", m.MemberID, 0, 80); err != nil {
		return err
	}
	if m.Rejection != nil {
		if m.Rejection.Level != l {
			return fmt.Errorf("%w: a member's rejection belongs to %s", ErrInvalid, l)
		}
		return m.Rejection.check()
	}
	for _, b := range m.Benefits {
		if err := b.check(l); err != nil {
			return err
		}
	}
	return nil
}

func (b Benefit) check(l Level) error {
	if b.ServiceType != "" && !serviceTypeCodes[b.ServiceType] {
		return fmt.Errorf("%w: %q is not a service type code", ErrInvalid, b.ServiceType)
	}
	if err := checkValue("procedure code", b.Procedure, 0, 48); err != nil {
		return err
	}
	if b.ServiceType == "" && b.Procedure == "" {
		return fmt.Errorf("%w: a benefit names a service type or a procedure", ErrInvalid)
	}
	if err := checkValue("proof transaction", b.ProofTransaction, 0, 200); err != nil {
		return err
	}
	if err := checkDecisionTexts("a benefit", b.ProofTransaction, b.Statement, b.Proof); err != nil {
		return err
	}
	if err := b.CheckMessages(); err != nil {
		return err
	}
	if b.CoveragePercentage < 0 || b.CoveragePercentage > 100 || b.CopayAmount < 0 || b.CopayAmount > 1e9 || b.CopayAmount != b.CopayAmount {
		return fmt.Errorf("%w: a benefit's coverage percentage or copay is out of range", ErrInvalid)
	}
	if b.Rejection != nil {
		if !b.Refused || b.Rejection.Level != benefitLevel(l) {
			return fmt.Errorf("%w: a benefit's rejection is an AAA of a refused %s loop", ErrInvalid, benefitLevel(l))
		}
		return b.Rejection.check()
	}
	return nil
}

// checkDecisionTexts refuses a statement that is not EncodeStatement's
// text after a proof transaction (at most maxStatementMessages parts), and
// a proof that is not EncodeProof's text after its statement; what names
// the answer for the error.
func checkDecisionTexts(what, tx, statement, proof string) error {
	if statement != "" && (tx == "" || (len(statement)+statementChunk-1)/statementChunk > maxStatementMessages ||
		strings.Trim(statement, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "") {
		return fmt.Errorf("%w: %s's statement is EncodeStatement's text, after a proof transaction", ErrInvalid, what)
	}
	if proof != "" {
		if _, err := DecodeProof(proof); err != nil || statement == "" {
			return fmt.Errorf("%w: %s's proof is EncodeProof's text, after its statement", ErrInvalid, what)
		}
	}
	return nil
}

// CheckMessages refuses a decided benefit whose 2110 loop would hold more
// MSG segments than the guide allows (10): the reason, the proof
// transaction, the statement's parts and the proof. A batched decision's
// statement and proof must both fit, or the benefit cannot be written:
// dropping the proof would leave a 271 nobody can verify.
func (b Benefit) CheckMessages() error {
	if b.Refused {
		return nil
	}
	n := (len(b.Statement) + statementChunk - 1) / statementChunk
	if r := freeText(b.Reason); r != "" && !b.Eligible {
		n++
	}
	if b.ProofTransaction != "" {
		n++
	}
	if b.Proof != "" {
		n++
	}
	if n > maxLoopMessages {
		return fmt.Errorf("%w: the decision needs %d MSG segments (reason, proof transaction, %d statement parts, proof), a 2110 loop holds %d",
			ErrInvalid, n, (len(b.Statement)+statementChunk-1)/statementChunk, maxLoopMessages)
	}
	return nil
}

// benefitLevel is the 2110 loop under a member level.
func benefitLevel(l Level) Level {
	if l == DependentLevel {
		return DependentBenefitLevel
	}
	return SubscriberBenefitLevel
}
