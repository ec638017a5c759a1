package zkp

import (
	"fmt"
	"math/big"
	"strconv"
	"time"

	"github.com/consensys/gnark/frontend"

	"github.com/healthagents/healthagents/credential"
	"github.com/healthagents/healthagents/zkp/statement"
)

// EligibilityV3Circuit is the statement behind an eligibility decision:
// "the payer whose key hashes to IssuerKeyHash signed coverage terms for
// this subject; under those terms and the public procedure catalogue, this
// procedure on this day has these outputs". Its public inputs are
// IssuerKeyHash, Digest and CircuitID; everything else is private and
// committed in Digest (docs/statement.md lists the fields).
type EligibilityV3Circuit struct {
	Credential signedVars

	Procedure     frontend.Variable // StringField of the canonical requested code
	ServiceDay    frontend.Variable // day number
	Eligible      frontend.Variable
	CoveragePct   frontend.Variable
	PreAuth       frontend.Variable
	DeductibleMet frontend.Variable
	Salt          frontend.Variable // fresh per statement: the digest hides its fields

	IssuerKeyHash frontend.Variable `gnark:",public"`
	Digest        frontend.Variable `gnark:",public"`
	CircuitID     frontend.Variable `gnark:",public"`
}

// eligibilityV3Fields is the digest's fields, in the order Define hashes
// them, with how each text renders (the statement's schema: Schema).
var eligibilityV3Fields = []statement.FieldSchema{
	{Name: "subject_commitment", Text: statement.RenderNone},
	{Name: "payer_id", Text: statement.RenderCode},
	{Name: "plan_id", Text: statement.RenderCode},
	{Name: "revocation_nonce", Text: statement.RenderNumber},
	{Name: "procedure", Text: statement.RenderCode},
	{Name: "procedure_class", Text: statement.RenderCode},
	{Name: "service_day", Text: statement.RenderDay},
	{Name: "eligible", Text: statement.RenderFlag},
	{Name: "coverage_pct", Text: statement.RenderNumber},
	{Name: "requires_authorization", Text: statement.RenderFlag},
	{Name: "deductible_met", Text: statement.RenderFlag},
	{Name: "copay_cents", Text: statement.RenderCents},
	{Name: "salt", Text: statement.RenderNone},
}

// Define implements frontend.Circuit.
func (c *EligibilityV3Circuit) Define(api frontend.API) error {
	cat, err := eligibilityCatalogue()
	if err != nil {
		return err
	}
	cred := &c.Credential
	cred.verify(api, c.IssuerKeyHash)
	api.AssertIsEqual(c.CircuitID, CircuitID(CircuitEligibilityV3))
	api.ToBinary(c.ServiceDay, DayBits)

	// The catalogue row of the requested code: exactly one matches, and it
	// gives the class code, base percent and pre-authorisation together.
	row := cat.table.lookup(api, c.Procedure)
	classCode, base, preAuth := row[0], row[1], row[2]

	covered := cred.covered(api, c.ServiceDay)
	excluded := cred.excludes(api, c.Procedure, classCode)
	eligible := api.Mul(covered, api.Sub(1, excluded))

	codeFound, codePct := cred.override(api, c.Procedure)
	classFound, classPct := cred.override(api, classCode)
	pct := api.Select(codeFound, codePct, api.Select(classFound, classPct, base))

	api.AssertIsEqual(c.Eligible, eligible)
	api.AssertIsEqual(c.CoveragePct, api.Mul(eligible, pct))
	api.AssertIsEqual(c.PreAuth, preAuth)
	api.AssertIsEqual(c.DeductibleMet, leq(api, cred.Fields[fDeductible], cred.Fields[fMet], CentsBits))

	api.AssertIsEqual(c.Digest, digestOf(api, []frontend.Variable{
		cred.Fields[fSubject], cred.Fields[fPayer], cred.Fields[fPlan], cred.Fields[fNonce],
		c.Procedure, classCode, c.ServiceDay,
		c.Eligible, c.CoveragePct, c.PreAuth, c.DeductibleMet, cred.Fields[fCopay],
		c.Salt,
	}))
	return nil
}

// EligibilityV3Input is an eligibility decision to prove from a payer's
// credential: the claims must follow from the signed terms and the
// catalogue, else ErrUnsatisfied.
type EligibilityV3Input struct {
	Credential    *credential.Credential
	ProcedureCode string
	ServiceDate   time.Time
	Eligible      bool
	CoveragePct   int
	PreAuth       bool
	// Salt is the digest's fresh salt; nil draws one.
	Salt *big.Int
}

// eligibilityV3Statement checks in natively and returns the assignment and
// the statement's opening.
func eligibilityV3Statement(in EligibilityV3Input, salt *big.Int) (*EligibilityV3Circuit, statement.Opening, error) {
	var op statement.Opening
	cat, err := eligibilityCatalogue()
	if err != nil {
		return nil, op, err
	}
	w, err := decodeSigned(in.Credential)
	if err != nil {
		return nil, op, err
	}
	code := CanonicalCode(in.ProcedureCode)
	row, ok := cat.byCode[code]
	if !ok {
		return nil, op, fmt.Errorf("%w: the procedure is not in the circuit's catalogue (version %s)", ErrRecordTooLarge, cat.version)
	}
	r := cat.rows[row]
	day, err := dayOf(in.ServiceDate)
	if err != nil {
		return nil, op, err
	}
	covered, valid := w.covered(day)
	if !valid {
		return nil, op, fmt.Errorf("%w: %w", ErrUnsatisfied, credential.ErrExpired)
	}
	eligible := covered && !w.excludes(r.codeField, r.classCode)
	pct := r.class.BaseCoverage
	if v, ok := w.override(r.codeField); ok {
		pct = v
	} else if v, ok := w.override(r.classCode); ok {
		pct = v
	}
	if pct < 0 || pct > 100 {
		return nil, op, fmt.Errorf("%w: an override percent is outside 0-100", ErrUnsatisfied)
	}
	if !eligible {
		pct = 0
	}
	switch {
	case in.Eligible != eligible:
		return nil, op, fmt.Errorf("%w: claimed eligible flag", ErrUnsatisfied)
	case in.CoveragePct != pct:
		return nil, op, fmt.Errorf("%w: claimed coverage percent", ErrUnsatisfied)
	case in.PreAuth != r.class.PreAuth:
		return nil, op, fmt.Errorf("%w: claimed requires_authorization", ErrUnsatisfied)
	}
	dayV := new(big.Int).SetUint64(day)
	op = statement.Opening{
		Circuit: CircuitEligibilityV3, CircuitID: CircuitID(CircuitEligibilityV3),
		IssuerKeyHash: w.keyHash, RevocationNonce: w.nonce,
		Fields: []statement.Field{
			{Name: "subject_commitment", Value: w.subject},
			{Name: "payer_id", Value: w.fields[fPayer], Text: in.Credential.Terms.PayerID},
			{Name: "plan_id", Value: w.fields[fPlan], Text: in.Credential.Terms.PlanID},
			{Name: "revocation_nonce", Value: w.fields[fNonce], Text: strconv.FormatUint(w.nonce, 10)},
			{Name: "procedure", Value: r.codeField, Text: r.code},
			{Name: "procedure_class", Value: r.classCode, Text: r.class.Code},
			{Name: "service_day", Value: dayV, Text: dayText(day)},
			{Name: "eligible", Value: bit(eligible), Text: strconv.FormatBool(eligible)},
			{Name: "coverage_pct", Value: big.NewInt(int64(pct)), Text: strconv.Itoa(pct)},
			{Name: "requires_authorization", Value: bit(r.class.PreAuth), Text: strconv.FormatBool(r.class.PreAuth)},
			{Name: "deductible_met", Value: bit(w.deductMet), Text: strconv.FormatBool(w.deductMet)},
			{Name: "copay_cents", Value: w.copay, Text: centsText(w.copay)},
			{Name: "salt", Value: salt},
		},
	}
	d, err := op.Recompute()
	if err != nil {
		return nil, op, err
	}
	return &EligibilityV3Circuit{
		Credential: w.vars, Procedure: r.codeField, ServiceDay: dayV,
		Eligible: bit(eligible), CoveragePct: pct, PreAuth: bit(r.class.PreAuth), DeductibleMet: bit(w.deductMet),
		Salt: salt, IssuerKeyHash: w.keyHash, Digest: d, CircuitID: op.CircuitID,
	}, op, nil
}

func dayText(day uint64) string { return statement.DayText(int64(day)) }

func centsText(c *big.Int) string { return statement.CentsText(c) }
