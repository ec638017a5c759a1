package zkp

import (
	"context"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/consensys/gnark/frontend"

	"github.com/healthagents/healthagents/credential"
	"github.com/healthagents/healthagents/prescription"
	"github.com/healthagents/healthagents/zkp/statement"
)

// MaxDrugs is how many medications one prescription-v2 proof covers (the v1
// API's most per prescription): a
// request's drugs fill the first slots, the rest are empty (0). One proof
// and one transaction per request, so nothing links a patient's drugs on
// chain.
const MaxDrugs = 10

// PrescriptionV2Circuit is the statement behind a prescription: "the payer
// whose key hashes to IssuerKeyHash signed coverage terms for this subject;
// on this day, for each of these drugs, the plan covers it or not and the
// public formulary puts it on this tier". Public inputs: IssuerKeyHash,
// Digest, CircuitID; the rest is in the digest (docs/statement.md).
type PrescriptionV2Circuit struct {
	Credential signedVars

	ServiceDay frontend.Variable
	Drugs      [MaxDrugs]frontend.Variable // StringField(RxCUI), 0 for an empty slot
	Covered    [MaxDrugs]frontend.Variable
	Tier       [MaxDrugs]frontend.Variable
	Salt       frontend.Variable

	IssuerKeyHash frontend.Variable `gnark:",public"`
	Digest        frontend.Variable `gnark:",public"`
	CircuitID     frontend.Variable `gnark:",public"`
}

// drugCatalogue is the public formulary compiled into prescription-v2:
// keys the RxCUI fields (and 0, the empty slot), column the tier (0 when
// the formulary does not cover the drug).
type drugCatalogue struct {
	version string
	tier    map[string]int
	table   *lookupTable
}

var (
	drugsOnce sync.Once
	drugsV2   *drugCatalogue
	drugsErr  error
)

func formulary() (*drugCatalogue, error) {
	drugsOnce.Do(func() {
		agent, err := prescription.New()
		if err != nil {
			drugsErr = err
			return
		}
		drugs := agent.Drugs()
		sort.Slice(drugs, func(i, j int) bool { return drugs[i].RxCUI < drugs[j].RxCUI })
		c := &drugCatalogue{tier: map[string]int{}}
		keys, tiers := []*big.Int{big.NewInt(0)}, []*big.Int{big.NewInt(0)}
		for _, d := range drugs {
			k, err := codeField("rxcui", d.RxCUI)
			if err != nil {
				drugsErr = err
				return
			}
			t := 0
			if d.Formulary.Covered {
				t = d.Formulary.Tier
			}
			c.tier[d.RxCUI] = t
			keys, tiers = append(keys, k), append(tiers, big.NewInt(int64(t)))
		}
		c.table = newLookupTable(keys, tiers)
		drugsV2 = c
	})
	return drugsV2, drugsErr
}

// prescriptionV2Fields names the digest's fields: five, then drug, covered
// and tier for each slot, then the salt.
func prescriptionV2Fields() []string {
	names := []string{"subject_commitment", "payer_id", "plan_id", "revocation_nonce", "service_day"}
	for i := range MaxDrugs {
		n := strconv.Itoa(i + 1)
		names = append(names, "drug_"+n, "covered_"+n, "formulary_tier_"+n)
	}
	return append(names, "salt")
}

// Define implements frontend.Circuit.
func (c *PrescriptionV2Circuit) Define(api frontend.API) error {
	cat, err := formulary()
	if err != nil {
		return err
	}
	cred := &c.Credential
	cred.verify(api, c.IssuerKeyHash)
	api.AssertIsEqual(c.CircuitID, CircuitID(CircuitPrescriptionV2))
	api.ToBinary(c.ServiceDay, DayBits)
	inForce := cred.covered(api, c.ServiceDay)

	values := []frontend.Variable{cred.Fields[fSubject], cred.Fields[fPayer], cred.Fields[fPlan], cred.Fields[fNonce], c.ServiceDay}
	for i := range MaxDrugs {
		tier := cat.table.lookup(api, c.Drugs[i])[0] // a catalogued drug, or 0
		present := api.Sub(1, api.IsZero(c.Drugs[i]))
		covered := api.Mul(inForce, present, api.Sub(1, cred.excludes(api, c.Drugs[i])))
		api.AssertIsEqual(c.Covered[i], covered)
		api.AssertIsEqual(c.Tier[i], tier)
		values = append(values, c.Drugs[i], c.Covered[i], c.Tier[i])
	}
	values = append(values, c.Salt)
	api.AssertIsEqual(c.Digest, digestOf(api, values))
	return nil
}

// PrescriptionV2Input is a prescription's drugs (RxCUIs, 1 to MaxDrugs) to
// prove from a payer's credential on a day.
type PrescriptionV2Input struct {
	Credential  *credential.Credential
	Drugs       []string
	ServiceDate time.Time
	Salt        *big.Int // nil draws one
}

// PrescriptionV2Outcome is what the proof states for one drug.
type PrescriptionV2Outcome struct {
	RxCUI   string
	Covered bool // the plan covers it on the day: active, in the window, not excluded
	Tier    int  // formulary tier, 0 when the formulary does not cover it
}

func prescriptionV2Statement(in PrescriptionV2Input, salt *big.Int) (*PrescriptionV2Circuit, statement.Opening, []PrescriptionV2Outcome, error) {
	var op statement.Opening
	cat, err := formulary()
	if err != nil {
		return nil, op, nil, err
	}
	if len(in.Drugs) == 0 || len(in.Drugs) > MaxDrugs {
		return nil, op, nil, fmt.Errorf("%w: a prescription proof covers 1 to %d drugs, not %d", ErrRecordTooLarge, MaxDrugs, len(in.Drugs))
	}
	w, err := decodeSigned(in.Credential)
	if err != nil {
		return nil, op, nil, err
	}
	day, err := dayOf(in.ServiceDate)
	if err != nil {
		return nil, op, nil, err
	}
	inForce, valid := w.covered(day)
	if !valid {
		return nil, op, nil, fmt.Errorf("%w: %w", ErrUnsatisfied, credential.ErrExpired)
	}
	a := &PrescriptionV2Circuit{Credential: w.vars, ServiceDay: day, Salt: salt, IssuerKeyHash: w.keyHash, CircuitID: CircuitID(CircuitPrescriptionV2)}
	op = statement.Opening{Circuit: CircuitPrescriptionV2, CircuitID: CircuitID(CircuitPrescriptionV2), IssuerKeyHash: w.keyHash, RevocationNonce: w.nonce,
		Fields: []statement.Field{
			{Name: "subject_commitment", Value: w.subject},
			{Name: "payer_id", Value: w.fields[fPayer], Text: in.Credential.Terms.PayerID},
			{Name: "plan_id", Value: w.fields[fPlan], Text: in.Credential.Terms.PlanID},
			{Name: "revocation_nonce", Value: w.fields[fNonce], Text: strconv.FormatUint(w.nonce, 10)},
			{Name: "service_day", Value: new(big.Int).SetUint64(day), Text: dayText(day)},
		}}
	var outs []PrescriptionV2Outcome
	for i := range MaxDrugs {
		n := strconv.Itoa(i + 1)
		drug, covered, tier, text := big.NewInt(0), false, 0, ""
		if i < len(in.Drugs) {
			t, ok := cat.tier[in.Drugs[i]]
			if !ok {
				return nil, op, nil, fmt.Errorf("%w: a drug is not in the circuit's formulary", ErrRecordTooLarge)
			}
			if drug, err = codeField("rxcui", in.Drugs[i]); err != nil {
				return nil, op, nil, err
			}
			covered, tier, text = inForce && !w.excludes(drug), t, in.Drugs[i]
			outs = append(outs, PrescriptionV2Outcome{RxCUI: in.Drugs[i], Covered: covered, Tier: tier})
		}
		a.Drugs[i], a.Covered[i], a.Tier[i] = drug, bit(covered), tier
		op.Fields = append(op.Fields,
			statement.Field{Name: "drug_" + n, Value: drug, Text: text},
			statement.Field{Name: "covered_" + n, Value: bit(covered), Text: strconv.FormatBool(covered)},
			statement.Field{Name: "formulary_tier_" + n, Value: big.NewInt(int64(tier)), Text: strconv.Itoa(tier)})
	}
	op.Fields = append(op.Fields, statement.Field{Name: "salt", Value: salt})
	d, err := op.Recompute()
	if err != nil {
		return nil, op, nil, err
	}
	a.Digest = d
	return a, op, outs, nil
}

// ProvePrescriptionV2 proves in with the prescription-v2 circuit: one proof
// for every drug of the request. It returns the proof, the statement and
// what it states per drug (in the request's order). Errors as for
// ProveEligibilityV2.
func (p *Prover) ProvePrescriptionV2(ctx context.Context, in PrescriptionV2Input) (*Proof, statement.Statement, []PrescriptionV2Outcome, error) {
	salt, err := p.salt(in.Salt)
	if err != nil {
		return nil, statement.Statement{}, nil, err
	}
	a, op, outs, err := prescriptionV2Statement(in, salt)
	if err != nil {
		return nil, statement.Statement{}, nil, err
	}
	st, err := statement.New(op)
	if err != nil {
		return nil, statement.Statement{}, nil, err
	}
	proof, err := p.prove(ctx, CircuitPrescriptionV2, a)
	if err != nil {
		return nil, statement.Statement{}, nil, err
	}
	return proof, st, outs, nil
}
