package zkp

import (
	"crypto/rand"
	"fmt"
	"math/big"
	"slices"

	"github.com/healthagents/healthagents/zkp/statement"
)

// Schema is the statement schema of the circuit named name: its id, the
// digest's fields in order (those its Define hashes, named as its opening
// names them) with how each text renders, and the public lists the texts
// come from — for the prescription circuits the severity ranks and the
// trigger list compiled into the circuit. Checkers (package verify,
// verify-decision, examples/verify-js/schema.json) refuse a statement that
// does not follow the schema of the circuit id the chain recorded. The
// retired circuits (RetiredCircuitNames) have schemas too, so statements
// recorded under them stay checkable.
func Schema(name string) (statement.Schema, error) {
	switch name {
	case CircuitEligibilityV3, retiredEligibilityV2:
		return statement.Schema{Circuit: name, CircuitID: CircuitID(name), Fields: eligibilityV3Fields}, nil
	case CircuitPrescriptionV4, retiredPrescriptionV3, retiredPrescriptionV2:
		cat, err := formulary()
		if err != nil {
			return statement.Schema{}, err
		}
		triggers := make([]string, len(cat.clinical.rules.Triggers))
		for i := range triggers {
			triggers[i] = cat.clinical.triggerText(i)
		}
		ranks := make([]string, 5)
		for r := range ranks {
			ranks[r] = rankText(r)
		}
		fields := prescriptionV4Fields()
		if name == retiredPrescriptionV2 {
			// prescription-v2 had no unidentified field (issue 25 added it).
			fields = slices.DeleteFunc(fields, func(f statement.FieldSchema) bool { return f.Name == "unidentified" })
		}
		return statement.Schema{Circuit: name, CircuitID: CircuitID(name), Fields: fields,
			Ranks: ranks, Triggers: triggers, TriggerBase: triggerBase, TriggerSlots: MaxTriggers}, nil
	}
	return statement.Schema{}, fmt.Errorf("zkp: no circuit named %q", name)
}

// RetiredCircuitNames lists the circuits this package no longer proves
// whose statements it can still check, newest first.
func RetiredCircuitNames() []string {
	return []string{retiredEligibilityV2, retiredPrescriptionV3, retiredPrescriptionV2}
}

// Schemas is the schema of every circuit (CircuitNames), in that order,
// then of every retired one (RetiredCircuitNames).
func Schemas() ([]statement.Schema, error) {
	var out []statement.Schema
	for _, n := range append(CircuitNames(), RetiredCircuitNames()...) {
		s, err := Schema(n)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// newStatement is the statement of an opening the prover built, checked
// against its circuit's schema: the service never hands out a statement a
// checker would refuse (a text that is not its value's rendering, a field
// out of place).
func newStatement(op statement.Opening) (statement.Statement, error) {
	st, err := statement.New(op)
	if err != nil {
		return statement.Statement{}, err
	}
	sc, err := Schema(op.Circuit)
	if err != nil {
		return statement.Statement{}, err
	}
	if err := st.CheckSchema(sc); err != nil {
		return statement.Statement{}, fmt.Errorf("zkp: the %s opening does not follow its schema: %w", op.Circuit, err)
	}
	return st, nil
}

// EligibilityV3Statement is the statement ProveEligibilityV3 would prove
// for in, without proving it: the same checks of the claims against the
// credential and catalogue, the same opening (a nil in.Salt draws one).
// A checker's tests use it to make real statements cheaply.
func EligibilityV3Statement(in EligibilityV3Input) (statement.Statement, error) {
	salt, err := drawSalt(in.Salt)
	if err != nil {
		return statement.Statement{}, err
	}
	_, op, err := eligibilityV3Statement(in, salt)
	if err != nil {
		return statement.Statement{}, err
	}
	return newStatement(op)
}

// PrescriptionV4Statement is the statement ProvePrescriptionV4 would prove
// for in, without proving it (see EligibilityV3Statement).
func PrescriptionV4Statement(in PrescriptionV4Input) (statement.Statement, []PrescriptionV4Outcome, error) {
	salt, err := drawSalt(in.Salt)
	if err != nil {
		return statement.Statement{}, nil, err
	}
	_, op, outs, err := prescriptionV4Statement(in, salt)
	if err != nil {
		return statement.Statement{}, nil, err
	}
	st, err := newStatement(op)
	return st, outs, err
}

func drawSalt(given *big.Int) (*big.Int, error) {
	if given != nil {
		return new(big.Int).Set(given), nil
	}
	return rand.Int(rand.Reader, fieldOrder)
}
