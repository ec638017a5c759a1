package healthagents

// The v1 prescription wire types and the plausibility bounds of a line.

import (
	"time"

	"github.com/healthagents/healthagents/prescription"
)

// Plausibility bounds of a medication line (docs/decisions/v1.md).
const (
	MaxMedications = 10   // per prescription
	MaxQuantity    = 5000 // units dispensed per fill
	MaxDaysSupply  = 365  // days one fill lasts
	MaxRefills     = 11   // refills after the first fill
	MaxBatch       = 25   // prescriptions per batch-validate call
	// MaxAvailabilityDays bounds a pharmacy's estimated_availability: at
	// most this many days after today (UTC). The lower bound is the
	// oracle's: after 1970-01-01.
	MaxAvailabilityDays = 366
)

// V1Medication is one line of a v1 prescription.
type V1Medication struct {
	NDCCode    string `json:"ndc_code" required:"true" doc:"NDC in 4-4-2, 5-3-2, 5-4-1 or 5-4-2 hyphenated form, or 11 digits." example:"0071-0155-23"`
	Name       string `json:"name" maxLength:"64" doc:"Drug name; used when the NDC is not in the catalogue, and must name the same drug when both are known." example:"atorvastatin"`
	Strength   string `json:"strength" maxLength:"64" example:"20 mg"`
	Quantity   int    `json:"quantity" minimum:"1" maximum:"5000" example:"30"`
	DaysSupply int    `json:"days_supply" minimum:"1" maximum:"365" example:"30"`
	Refills    int    `json:"refills" minimum:"0" maximum:"11" example:"3"`
}

// V1PrescriptionRequest is the body of POST /api/v1/prescriptions/validate.
type V1PrescriptionRequest struct {
	PatientID   string         `json:"patient_id" required:"true" maxLength:"64" example:"PT-000123"`
	ProviderNPI string         `json:"provider_npi" required:"true" example:"1234567893"`
	Medications []V1Medication `json:"medications" required:"true" minItems:"1" maxItems:"10"`
	Indication  string         `json:"indication" maxLength:"256" doc:"Free text; stored with the validation, not interpreted."`
	PharmacyNPI string         `json:"pharmacy_npi" doc:"The dispensing pharmacy; without it pharmacy_confirmation is unconfirmed." example:"1245319599"`
}

// V1Warning is one finding of the drug checks.
type V1Warning struct {
	Type       string `json:"type" enum:"interaction,contraindication,unidentified" doc:"unidentified: a current medication or an allergy of the patient's record that the service could not identify, so nothing about it was checked; the prescription then needs review."`
	NDCCode    string `json:"ndc_code" doc:"The prescribed medication (11 digits); empty for an unidentified entry, which concerns every medication."`
	Drug       string `json:"drug"`
	With       string `json:"with,omitempty" doc:"The other drug of an interaction."`
	WithSource string `json:"with_source,omitempty" enum:"current,new" doc:"Whether the other drug is a current medication or another new one."`
	Severity   string `json:"severity" enum:"contraindicated,major,moderate,minor"`
	Mechanism  string `json:"mechanism" doc:"For an interaction, how the two drugs interact. For a contraindication, class-level text only: whether a recorded allergy or a recorded condition argues against the drug, never which allergen or condition. For an unidentified entry, what could not be checked."`
	Management string `json:"management"`
	// Entry and EntryKind name an unidentified entry as the caller's
	// record has it. It is the caller's own data, never logged or sent in
	// events.
	Entry     string `json:"entry,omitempty" maxLength:"65" doc:"For an unidentified warning: the record's entry as it was sent (at most 64 bytes), which the service could not identify. Never logged or sent in events." example:"Tylenol PM"`
	EntryKind string `json:"entry_kind,omitempty" enum:"medication,allergy" doc:"For an unidentified warning: whether the entry is a current medication or an allergy."`
}

// V1DrugInteractions is checks.drug_interactions.
type V1DrugInteractions struct {
	Status            string      `json:"status" enum:"clear,warning,blocked" doc:"clear: no finding and every current medication and allergy identified; warning: moderate or minor findings, or an entry that could not be identified; blocked: a major or contraindicated finding."`
	InteractionsFound int         `json:"interactions_found"`
	Warnings          []V1Warning `json:"warnings"`
}

// V1EligibilityCheck is checks.eligibility.
type V1EligibilityCheck struct {
	Status            string `json:"status" enum:"eligible,ineligible"`
	Coverage          int    `json:"coverage" minimum:"0" maximum:"100" doc:"Percent of the medications on the plan's formulary; 0 when ineligible."`
	RequiresPriorAuth bool   `json:"requires_prior_auth" doc:"A medication is on a specialty formulary tier (4 or 5)."`
}

// V1PharmacyConfirmation is checks.pharmacy_confirmation.
type V1PharmacyConfirmation struct {
	Status                string  `json:"status" enum:"confirmed,unconfirmed"`
	EstimatedAvailability *string `json:"estimated_availability" doc:"Date (YYYY-MM-DD) by which every medication is attested available; null unless confirmed."`
	CrossChainVerified    bool    `json:"cross_chain_verified" doc:"The answer was read from the pharmacy oracle contract on the chain."`
}

// V1Checks is the checks object of a v1 prescription result.
type V1Checks struct {
	DrugInteractions     V1DrugInteractions     `json:"drug_interactions"`
	Eligibility          V1EligibilityCheck     `json:"eligibility"`
	PharmacyConfirmation V1PharmacyConfirmation `json:"pharmacy_confirmation"`
}

// V1PrescriptionResult is the v1 prescription result: a status, finding codes,
// the three checks and the coverage proofs (docs/decisions/v1.md, "Prescriptions").
type V1PrescriptionResult struct {
	ValidationStatus string     `json:"validation_status" enum:"approved,requires_review,rejected"`
	PrescriptionID   string     `json:"prescription_id" example:"rx_k3j5m7n9p1q3r5s7t9v1w3x5"`
	Codes            []string   `json:"codes" doc:"Findings: INTERACTION_FOUND, CONTRAINDICATED, INELIGIBLE, UNIDENTIFIED (a current medication or allergy the service could not identify: requires_review at best)."`
	Checks           V1Checks   `json:"checks"`
	ZKProof          *V1Proof   `json:"zk_proof" doc:"The one proof of the request: for every medication, whether the patient's plan covers it on the service date and its formulary tier (see statement); null when rejected, when the record holds no coverage, or without proofs."`
	ZKProofs         []V1Proof  `json:"zk_proofs,omitempty" doc:"The same proof, as a list of one: one proof and one transaction per request, so nothing links a patient's drugs on chain."`
	Statement        *Statement `json:"statement,omitempty" doc:"What the proof states: the digest recorded on chain and its opening (each drug, its coverage and tier, the day, a fresh salt). Never logged or sent in events."`
	Issuer           string     `json:"issuer,omitempty" doc:"Who vouches for the coverage: \"self\" or the registered payer's name." example:"self"`
	CreatedAt        time.Time  `json:"created_at"`
}

// Validation statuses.
const (
	StatusApproved       = "approved"
	StatusRequiresReview = "requires_review"
	StatusRejected       = "rejected"
)

type medLine struct {
	ndc  string
	drug prescription.Drug
}
