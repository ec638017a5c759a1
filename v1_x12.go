package healthagents

// The v1 eligibility check over X12: a 270 interchange in, a 271 out
// (docs/x12.md). Each question is decided by VerifyEligibility, the
// operation behind POST /api/v1/eligibility/verify: proven, recorded on
// chain and emitted exactly as there.

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/healthagents/healthagents/npi"
	"github.com/healthagents/healthagents/x12"
)

// X12ControlNumbers hands out the control numbers of the X12 answers
// (ISA13, GS06), 1 to 999999999, unique across the service's replicas;
// *store.X12Controls is one.
type X12ControlNumbers interface {
	NextX12Control(ctx context.Context) (int, error)
}

// WithX12ControlNumbers sets where the X12 answers' control numbers come
// from; without one they are drawn at random.
func WithX12ControlNumbers(c X12ControlNumbers) V1Option {
	return func(v *V1) error { v.controls = c; return nil }
}

// X12 answer kinds.
const (
	X12Kind271 = "271"
	X12Kind999 = "999"
	X12KindTA1 = "TA1"
)

// MaxX12Decisions is the most decisions one 270 interchange may ask for:
// each is a proof and a transaction, and a real-time answer is due within
// CAQH CORE's 20 seconds. More is answered AAA 04 (authorized quantity
// exceeded) at every information source, nothing decided.
const MaxX12Decisions = 30

// X12Answer is the answer to a 270 interchange.
type X12Answer struct {
	// Body is the interchange: a 271, or the 999 or TA1 that refuses the
	// 270 (X12Kind271, X12Kind999, X12KindTA1 in Kind).
	Body []byte
	Kind string
	// Accessed are the patients whose records were read, each with the
	// code of its refusal ("" when its questions were answered), for the
	// audit log. A 999 or a TA1 reads none.
	Accessed []X12Access
}

// X12Access is one patient record an X12 answer read.
type X12Access struct {
	PatientID string
	Code      Code
}

// X12Options are the transport's hooks into EligibilityX12.
type X12Options struct {
	// Admit is asked, once the 270 is read and before anything is
	// decided, whether the number of decisions it asks for may be made
	// (the rate limits). An error refuses every question: its code
	// becomes the AAA at each information source (CodeRateLimited: 04
	// resubmission allowed; CodeInvalid, CodeTooLarge: 04 correct and
	// resubmit; CodeForbidden: 41; anything else: 42).
	Admit func(decisions int) error
	// SenderID answers an interchange whose ISA could not be read (ISA06
	// of the TA1, qualifier ZZ); default HEALTHAGENTS.
	SenderID string
}

// EligibilityX12 answers an X12 270 interchange (005010X279A1) for the
// owner's registered patients: a 271 with, for every subscriber and
// dependent, each question (EQ) decided by VerifyEligibility, its traces
// echoed and BHT03 kept; an AAA where a question or a member cannot be
// served; a 999 or a TA1, deciding nothing, when the 270 fails its syntax
// or envelope checks. The error is non-nil only when no X12 answer can be
// written (a bug).
func (v *V1) EligibilityX12(ctx context.Context, owner string, interchange []byte, opts X12Options) (*X12Answer, error) {
	now := v.svc.serviceTime()
	rp := x12.Reply{Control: v.nextControl(ctx), Time: now, DefaultSenderID: opts.SenderID}
	inq, err := x12.Read270(interchange)
	if err != nil {
		body, kind, rerr := x12.RenderAck(err, rp)
		if rerr != nil {
			return nil, rerr
		}
		return &X12Answer{Body: body, Kind: string(kind)}, nil
	}
	plans := make([][]*memberPlan, len(inq.Transactions))
	decisions := 0
	for i, tx := range inq.Transactions {
		plans[i] = planTransaction(tx, now)
		for _, p := range plans[i] {
			decisions += len(p.procedures)
		}
	}
	var refusal *x12.Rejection
	switch {
	case decisions > MaxX12Decisions:
		refusal = &x12.Rejection{Level: x12.SourceLevel, ValidRequest: true, Reason: "04", FollowUp: "C"}
	case opts.Admit != nil:
		if aerr := opts.Admit(decisions); aerr != nil {
			refusal = admitRejection(aerr)
		}
	}
	d := &x12Decider{v: v, owner: owner, day: now}
	responses := make([]x12.Response, len(inq.Transactions))
	for i, tx := range inq.Transactions {
		responses[i] = d.respond(ctx, tx, plans[i], refusal)
	}
	body, err := x12.Render271s(inq, rp, responses)
	if err != nil {
		return nil, err
	}
	return &X12Answer{Body: body, Kind: X12Kind271, Accessed: d.accessed}, nil
}

// nextControl is the next control number, or a random one when the source
// fails (logged: the answer still goes out).
func (v *V1) nextControl(ctx context.Context) int {
	if v.controls != nil {
		n, err := v.controls.NextX12Control(ctx)
		if err == nil && n >= 1 && n <= 999999999 {
			return n
		}
		v.svc.logError(ctx, "x12 control numbers failed; a random one is used", "err", err)
	}
	r, _ := rand.Int(rand.Reader, big.NewInt(999999999)) // crypto/rand does not fail (Go 1.24+)
	return int(r.Int64()) + 1
}

// admitRejection is the AAA (2100A) of a refused admission.
func admitRejection(err error) *x12.Rejection {
	switch ErrorCode(err) {
	case CodeRateLimited:
		return &x12.Rejection{Level: x12.SourceLevel, ValidRequest: true, Reason: "04", FollowUp: "R"}
	case CodeInvalid, CodeTooLarge:
		// More than the caller may ever ask at once: split the interchange.
		return &x12.Rejection{Level: x12.SourceLevel, ValidRequest: true, Reason: "04", FollowUp: "C"}
	case CodeForbidden, CodeUnauthorized:
		return &x12.Rejection{Level: x12.SourceLevel, ValidRequest: false, Reason: "41", FollowUp: "C"}
	}
	return &x12.Rejection{Level: x12.SourceLevel, ValidRequest: true, Reason: "42", FollowUp: "R"}
}

// memberPlan is what one member (2000C or 2000D) of a 270 asks: its
// questions, and the procedures they need decided (each once).
type memberPlan struct {
	member     *x12.Member
	dependent  bool
	questions  []question
	procedures []string
	// dateReason is the AAA03 of a 2100 DTP*291 other than the service
	// day (62 past, 63 future).
	dateReason string
}

// question is one answer a member's EQs ask for: a procedure to decide
// under a service type, or a refusal (EB*V).
type question struct {
	serviceType, procedure string
	refusal                *x12.Rejection
	message                string
}

// planTransaction plans every member of a transaction set.
func planTransaction(tx *x12.Transaction270, day time.Time) []*memberPlan {
	var out []*memberPlan
	for _, sub := range tx.Subscribers() {
		out = append(out, planMember(&sub.Member, false, day))
		for _, d := range sub.Dependents {
			out = append(out, planMember(d, true, day))
		}
	}
	return out
}

func planMember(m *x12.Member, dependent bool, day time.Time) *memberPlan {
	p := &memberPlan{member: m, dependent: dependent, dateReason: dateReason(m.ServiceDate, day)}
	level := x12.SubscriberBenefitLevel
	if dependent {
		level = x12.DependentBenefitLevel
	}
	add := func(q question) {
		p.questions = append(p.questions, q)
		if q.refusal == nil && q.message == "" && !contains(p.procedures, q.procedure) {
			p.procedures = append(p.procedures, q.procedure)
		}
	}
	for _, eq := range m.Inquiries {
		if r := dateReason(eq.ServiceDate, day); r != "" {
			add(question{serviceType: firstOf(eq.ServiceTypes), procedure: eq.ProcedureCode,
				refusal: &x12.Rejection{Level: level, ValidRequest: true, Reason: r, FollowUp: "C"}})
			continue
		}
		if eq.ProcedureCode != "" {
			q := question{procedure: eq.ProcedureCode}
			if eq.ProcedureQualifier != "HC" && eq.ProcedureQualifier != "ZZ" {
				// NDC, ADA, ICD procedure codes...: not in the catalogue's
				// code systems.
				q.refusal = &x12.Rejection{Level: level, ValidRequest: false, Reason: "54", FollowUp: "C"}
			}
			add(q)
			continue
		}
		for _, stc := range eq.ServiceTypes {
			procs, ok := x12.ProceduresOf(stc)
			if !ok {
				add(question{serviceType: stc, message: "SERVICE TYPE " + stc + " IS NOT IN THE PROCEDURE CATALOGUE"})
				continue
			}
			for _, proc := range procs {
				st := stc
				if stc == x12.PlanCoverage {
					st = x12.ServiceTypeOf(proc)
				}
				add(question{serviceType: st, procedure: proc})
			}
		}
	}
	if p.dateReason != "" || len(p.member.Inquiries) == 0 {
		p.procedures = nil // nothing is decided for this member
	}
	return p
}

func firstOf(s []string) string {
	if len(s) > 0 {
		return s[0]
	}
	return ""
}

// dateReason is the AAA03 of a date of service the service cannot answer
// for: decisions are made for the service day only (62 before it, 63
// after; a range must be that one day).
func dateReason(p *x12.Period, day time.Time) string {
	if p == nil {
		return ""
	}
	y, m, d := day.Date()
	today := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	switch {
	case p.From.Equal(today) && p.To.Equal(today):
		return ""
	case p.To.After(today) && !p.From.Before(today):
		return "63"
	}
	return "62"
}

// x12Decider decides the questions of one interchange.
type x12Decider struct {
	v        *V1
	owner    string
	day      time.Time
	accessed []X12Access
	// down is set once the service failed (the chain, the store): the
	// members after it are answered 42 without trying.
	down bool
}

// respond answers one transaction set; refusal, when set, answers every
// information source instead.
func (d *x12Decider) respond(ctx context.Context, tx *x12.Transaction270, plans []*memberPlan, refusal *x12.Rejection) x12.Response {
	resp := x12.Response{Reference: tx.Reference}
	k := 0
	for _, src := range tx.Sources {
		sa := x12.SourceAnswer{Party: src.Party, Rejection: refusal}
		for _, rcv := range src.Receivers {
			ra := x12.ReceiverAnswer{Party: rcv.Party, Rejection: providerRejection(rcv.Party)}
			if refusal != nil || ra.Rejection != nil {
				// Nothing below a refused level is answered.
				for _, sub := range rcv.Subscribers {
					k += 1 + len(sub.Dependents)
				}
				sa.Receivers = append(sa.Receivers, ra)
				continue
			}
			for _, sub := range rcv.Subscribers {
				memberID := ""
				if sub.IDQualifier == "MI" {
					memberID = sub.ID
				}
				sa := x12.SubscriberAnswer{MemberAnswer: d.answer(ctx, src.ID, memberID, rcv.ID, plans[k])}
				k++
				for range sub.Dependents {
					sa.Dependents = append(sa.Dependents, d.answer(ctx, src.ID, memberID, rcv.ID, plans[k]))
					k++
				}
				ra.Subscribers = append(ra.Subscribers, sa)
			}
			sa.Receivers = append(sa.Receivers, ra)
		}
		resp.Sources = append(resp.Sources, sa)
	}
	return resp
}

// providerRejection is the AAA of an information receiver the service
// cannot act for: an NPI (XX) that fails its check (43), or an identifier
// of another kind, of which the service keeps no file (51).
func providerRejection(p x12.Party) *x12.Rejection {
	switch {
	case p.IDQualifier != "XX":
		return &x12.Rejection{Level: x12.ReceiverLevel, ValidRequest: true, Reason: "51", FollowUp: "C"}
	case npi.Check(p.ID) != nil:
		return &x12.Rejection{Level: x12.ReceiverLevel, ValidRequest: false, Reason: "43", FollowUp: "C"}
	}
	return nil
}

// answer finds and decides one member.
func (d *x12Decider) answer(ctx context.Context, payer, memberID, providerNPI string, p *memberPlan) x12.MemberAnswer {
	m := p.member
	ans := x12.MemberAnswer{Traces: m.Traces, ServiceDate: d.day}
	if !p.dependent {
		ans.MemberID = memberID
	}
	level := x12.SubscriberLevel
	if p.dependent {
		level = x12.DependentLevel
	}
	reject := func(valid bool, reason, followUp string) x12.MemberAnswer {
		ans.Rejection = &x12.Rejection{Level: level, ValidRequest: valid, Reason: reason, FollowUp: followUp}
		ans.Benefits, ans.Coverage, ans.DeductibleMet = nil, x12.CoverageUnknown, nil
		return ans
	}
	switch {
	case len(m.Inquiries) == 0:
		return ans // a subscriber asked about only through its dependents
	case d.down || ctx.Err() != nil:
		return reject(true, "42", "R")
	case p.dateReason != "":
		return reject(true, p.dateReason, "C")
	}
	found := d.v.findMember(ctx, d.owner, payer, memberID, m, p.dependent)
	switch found.reason {
	case "":
	case "42":
		d.down = true
		return reject(true, "42", "R")
	default:
		return reject(found.valid, found.reason, "C")
	}
	decided := map[string]*V1EligibilityResult{}
	for _, proc := range p.procedures {
		res, err := d.v.VerifyEligibility(ctx, d.owner, V1EligibilityRequest{PatientID: found.patientID, MemberID: memberID, ProcedureCode: proc, ProviderNPI: providerNPI})
		if err == nil {
			decided[proc] = res
			if ans.Coverage == x12.CoverageUnknown {
				ans.Coverage = x12.CoverageActive
				met := res.DeductibleMet
				ans.DeductibleMet = &met
			}
			continue
		}
		code, v1 := ErrorCode(err), V1Code(err)
		switch {
		case code == CodeNotFound && v1 == "":
			// An unknown procedure code: that question is refused below.
		case v1 == V1NoInsurance && strings.HasPrefix(ErrorDetail(err), V1NoInsurance+": member_id"):
			d.note(found.patientID, code)
			if p.dependent {
				return reject(true, "67", "C")
			}
			return reject(true, "72", "C")
		case v1 == V1NoInsurance:
			// No coverage in force (as x12.ForProblem maps the JSON
			// answer): EB*6, no question answered.
			d.note(found.patientID, code)
			ans.Coverage, ans.Benefits, ans.DeductibleMet = x12.CoverageInactive, nil, nil
			return ans
		case v1 == V1UntrustedCredential || code == CodeInvalid:
			// The payer's credential is revoked, expired, from an issuer not
			// registered, or malformed (as x12.ForProblem maps the JSON
			// answer): the request's data, to correct — never EB*6, nobody
			// said the coverage is inactive.
			d.note(found.patientID, code)
			return reject(false, "15", "C")
		case v1 == V1PatientNotFound:
			d.note(found.patientID, code)
			if p.dependent {
				return reject(true, "67", "C")
			}
			return reject(true, "75", "C")
		case code == CodeUnprocessable:
			// The record itself cannot be decided on (beyond the circuit's
			// bounds, terms a credential cannot encode): resubmitting will
			// not help.
			d.note(found.patientID, code)
			return reject(true, "42", "N")
		default:
			d.note(found.patientID, code)
			d.down = true
			return reject(true, "42", "R")
		}
	}
	d.note(found.patientID, "")
	for _, q := range p.questions {
		ans.Benefits = append(ans.Benefits, benefitFor(q, decided, p.dependent))
	}
	return ans
}

func (d *x12Decider) note(patientID string, code Code) {
	d.accessed = append(d.accessed, X12Access{PatientID: patientID, Code: code})
}

// benefitFor is the 2110 loop of one question.
func benefitFor(q question, decided map[string]*V1EligibilityResult, dependent bool) x12.Benefit {
	b := x12.Benefit{ServiceType: q.serviceType, Procedure: q.procedure}
	level := x12.SubscriberBenefitLevel
	if dependent {
		level = x12.DependentBenefitLevel
	}
	res, ok := decided[q.procedure]
	switch {
	case q.refusal != nil:
		b.Refused, b.Rejection = true, q.refusal
	case q.message != "":
		b.Refused, b.Message = true, q.message
	case !ok:
		// Not in the catalogue (the decision answered 404).
		b.Refused, b.Rejection = true, &x12.Rejection{Level: level, ValidRequest: false, Reason: "AG", FollowUp: "C"}
	default:
		b.Eligible, b.CoveragePercentage, b.RequiresAuthorization = res.Eligible, res.CoveragePercentage, res.RequiresAuthorization
		b.CopayAmount = res.CopayAmount
		if res.Reason != nil {
			b.Reason = *res.Reason
		}
		if res.VerificationProof != nil {
			b.ProofTransaction = res.VerificationProof.BlockchainTx
			// The statement, and a batched decision's proof (its
			// transaction records a Merkle root, not the proof), fit the
			// loop, or the question is answered with no decision: a 271
			// whose EB segments are bound to nothing its holder can check
			// is not sent (docs/decisions.md).
			var err error
			b.Statement, b.Proof, err = X12DecisionTexts(res)
			if err == nil {
				err = b.CheckMessages()
			}
			if err != nil {
				return x12.Benefit{ServiceType: q.serviceType, Procedure: q.procedure, Refused: true, Message: unsendableDecision}
			}
		}
	}
	return b
}

// unsendableDecision is the MSG of a decision whose statement and proof do
// not fit its 2110 loop (x12.Benefit.CheckMessages).
const unsendableDecision = "DECISION NOT SENT IN X12 - ITS STATEMENT AND PROOF EXCEED THE 10 MSG OF A 2110 LOOP - ASK POST /API/V1/ELIGIBILITY/VERIFY"

// X12DecisionTexts are the texts a 271 carries of a decision answer
// beside its transaction: its statement (what the JSON answer returns as
// "statement", x12.EncodeStatement) and, for a decision anchored in a
// batch, its proof (proof_data, x12.EncodeProof), so that verify-decision
// --statement answer.271 checks it from the 271 alone. Both are empty for
// an answer without a proof or a statement. An error says they cannot be
// carried (a statement over 8 MSG, a proof_data that is not a proof):
// the answer must not be sent as a 271 without them. Used by
// EligibilityX12 and by `healthagents x12 271`.
func X12DecisionTexts(res *V1EligibilityResult) (statement, proof string, err error) {
	if res.VerificationProof == nil || res.Statement == nil {
		return "", "", nil
	}
	js, err := json.Marshal(res.Statement)
	if err != nil {
		return "", "", err
	}
	if statement, err = x12.EncodeStatement(js); err != nil {
		return "", "", fmt.Errorf("its statement cannot be carried: %w", err)
	}
	if res.Statement.Batch == nil {
		return statement, "", nil // its proof is in its transaction
	}
	if proof, err = x12.EncodeProof(res.VerificationProof.ProofData); err != nil {
		return "", "", fmt.Errorf("it is anchored in a batch and its proof_data cannot be carried: %w", err)
	}
	return statement, proof, nil
}
