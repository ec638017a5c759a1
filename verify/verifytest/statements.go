package verifytest

import (
	"testing"
	"time"

	"github.com/iden3/go-iden3-crypto/babyjub"

	"github.com/healthagents/healthagents/credential"
	"github.com/healthagents/healthagents/prescription"
	"github.com/healthagents/healthagents/zkp"
	"github.com/healthagents/healthagents/zkp/statement"
)

// payerKey is the fixture payer's Baby Jubjub key.
func payerKey() babyjub.PrivateKey {
	var k babyjub.PrivateKey
	copy(k[:], "healthagents verifytest payer!!!")
	return k
}

func credentialWith(t testing.TB, nonce uint64) *credential.Credential {
	t.Helper()
	c, err := credential.Sign(payerKey(), credential.Terms{
		MemberID: "W123456789", Salt: "123456789012345678901234567890", PayerID: "60054", PlanID: "PPO-GOLD",
		Status: "active", Start: "2026-01-01", End: "2026-12-31", Deductible: 1500, DeductibleMet: 1500, Copay: 25,
		Expires: "2026-12-31", Nonce: nonce, Excluded: []string{"PROC005"}, Overrides: map[string]int{"PROC002": 70},
	})
	must(t, err, "sign credential")
	return c
}

// ServiceDay is the day the fixture's statements are about.
var ServiceDay = time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC)

// EligibilityStatement is a real eligibility-v3 statement (zkp's own
// opening, claims checked against a signed credential with this revocation
// nonce): PROC001 (MRI, 80 %, pre-authorisation) on ServiceDay, eligible.
// Record it with RecordStatement.
func EligibilityStatement(t testing.TB, nonce uint64) statement.Statement {
	t.Helper()
	st, err := zkp.EligibilityV3Statement(zkp.EligibilityV3Input{Credential: credentialWith(t, nonce), ProcedureCode: "70551",
		ServiceDate: ServiceDay, Eligible: true, CoveragePct: 80, PreAuth: true})
	must(t, err, "eligibility statement")
	return st
}

// PrescriptionStatement is a real prescription-v4 statement: aspirin and
// metformin for a patient on warfarin and on a medication the service
// could not identify, with a penicillin allergy and an amoxicillin
// allergy, on ServiceDay — every kind of text filled (the unidentified
// entries' too), and empty slots.
func PrescriptionStatement(t testing.TB, nonce uint64) statement.Statement {
	t.Helper()
	agent, err := prescription.New()
	must(t, err, "prescription agent")
	var triggers []int
	for i, tr := range agent.Rules().Triggers {
		if tr.String() == "allergy:penicillin" {
			triggers = append(triggers, i)
		}
	}
	st, _, err := zkp.PrescriptionV4Statement(zkp.PrescriptionV4Input{Credential: credentialWith(t, nonce), Drugs: []string{"1191", "6809"},
		ServiceDate: ServiceDay, Facts: prescription.Facts{Medications: []string{"11289"}, Triggers: triggers, AllergyDrugs: []string{"723"},
			Unidentified: []prescription.Unidentified{{Kind: prescription.EntryMedication, Entry: "Tylenol PM"}}}})
	must(t, err, "prescription statement")
	return st
}
