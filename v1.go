package healthagents

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/healthagents/healthagents/npi"
	"github.com/healthagents/healthagents/prescription"
	"github.com/healthagents/healthagents/record"
)

// The v1 family's error codes (spec section 7). They ride in an *Error's
// Detail as a prefix, "NO_INSURANCE: ...", as DESIGN.md fixes; V1Code reads
// them back.
const (
	V1PatientNotFound  = "PATIENT_NOT_FOUND" // 404
	V1NoInsurance      = "NO_INSURANCE"      // 422
	V1ProofInvalid     = "PROOF_INVALID"     // 500
	V1NetworkError     = "NETWORK_ERROR"     // 503
	V1InteractionFound = "INTERACTION_FOUND" // finding in a 200 result
	V1Contraindicated  = "CONTRAINDICATED"   // finding in a 200 result
	V1Ineligible       = "INELIGIBLE"        // finding in a 200 result
	V1PharmacyError    = "PHARMACY_ERROR"    // 503
	V1ProofFailed      = "PROOF_FAILED"      // 500 (503 when the chain is unreachable)
)

// V1Code returns the uppercase v1 code in front of err's detail, or "".
func V1Code(err error) string {
	var e *Error
	if !errors.As(err, &e) {
		return ""
	}
	code, _, ok := strings.Cut(e.Detail, ": ")
	if !ok || code == "" || strings.ToUpper(code) != code || strings.ContainsAny(code, " '") {
		return ""
	}
	return code
}

func v1Error(code Code, v1 string, cause error, format string, args ...any) *Error {
	return &Error{Code: code, Detail: v1 + ": " + fmt.Sprintf(format, args...), err: cause}
}

// Sentinel errors of the v1 stores.
var (
	// ErrPatientNotFound: no envelope is registered under the patient id.
	ErrPatientNotFound = errors.New("healthagents: patient not found")
	// ErrPrescriptionNotFound: no validation is stored under the id.
	ErrPrescriptionNotFound = errors.New("healthagents: prescription not found")
	// ErrInvalidAttestation: a PharmacyOracle refused an availability
	// attestation or query as malformed before reaching the chain (V1
	// answers 400). pharmacy.ErrInvalid wraps it.
	ErrInvalidAttestation = errors.New("healthagents: invalid pharmacy attestation")
)

// PatientRegistry keeps patient envelopes exactly as received, still
// encrypted, each under an owner and a patient id. *store.PatientStore is
// one.
//
// A patient id names a record only within its owner (the same owner string
// as StoredPrescription.Owner): the key is (owner, patient id). Two owners
// may register the same id; each sees, replaces and deletes only its own.
type PatientRegistry interface {
	// PutPatient stores env under (owner, env.PatientID), replacing that
	// owner's previous one.
	PutPatient(ctx context.Context, owner string, env PatientData) error
	// Patient returns the owner's envelope, or an error wrapping
	// ErrPatientNotFound (also when only another owner has one).
	Patient(ctx context.Context, owner, patientID string) (PatientData, error)
	// DeletePatient removes the owner's envelope, or returns an error
	// wrapping ErrPatientNotFound.
	DeletePatient(ctx context.Context, owner, patientID string) error
}

// StoredPrescription is a prescription validation as kept by a
// PrescriptionStore: Result is the JSON of the V1PrescriptionResult.
type StoredPrescription struct {
	ID        string
	Owner     string // who may read it back ("" for anyone)
	PatientID string
	Status    string
	CreatedAt time.Time
	Result    []byte
}

// PrescriptionStore keeps prescription validations. *store.PrescriptionStore
// is one.
type PrescriptionStore interface {
	SavePrescription(ctx context.Context, p StoredPrescription) error
	// Prescription returns one, or an error wrapping ErrPrescriptionNotFound.
	Prescription(ctx context.Context, id string) (StoredPrescription, error)
}

// PrescriptionEventStore is a PrescriptionStore that also writes the events
// reporting a validation in the transaction that stores it, so that no
// crash leaves a stored validation without its events, or events about a
// validation that was never stored. *store.PrescriptionOutbox is one.
//
// When the service has an EventSink (WithEvents) and V1's PrescriptionStore
// is a PrescriptionEventStore, V1 hands a validation's events to the store
// instead of the sink: build the store over the same outbox as the sink.
// Other stores get the validation first and the sink its events after, in
// separate writes.
type PrescriptionEventStore interface {
	PrescriptionStore
	// SavePrescriptionWithEvents stores p and records events for
	// delivery in one transaction: after nil both are durable, after an
	// error neither is.
	SavePrescriptionWithEvents(ctx context.Context, p StoredPrescription, events []Event) error
}

// Availability is what a pharmacy attested about a drug package.
type Availability struct {
	PharmacyNPI string
	NDC         string    // 11 digits
	AvailableOn time.Time // the date the pharmacy expects to dispense (UTC midnight)
	AttestedAt  time.Time
	Attester    string // the account that wrote the attestation
}

// AttestationReceipt is the record of an availability attestation written
// to the chain.
type AttestationReceipt struct {
	TxHash      string
	BlockNumber uint64
}

// PharmacyOracle reads and writes pharmacy availability attestations on a
// chain. *pharmacy.Oracle is one. Errors reaching the chain wrap
// ErrChainUnavailable; input the oracle refuses as malformed (an NPI, NDC
// or date it cannot store) wraps ErrInvalidAttestation.
type PharmacyOracle interface {
	// Availability returns the attestation for the pharmacy and NDC;
	// found is false when none was published.
	Availability(ctx context.Context, pharmacyNPI, ndc string) (a Availability, found bool, err error)
	// Attest publishes an attestation in a mined transaction.
	Attest(ctx context.Context, a Availability) (AttestationReceipt, error)
}

// V1 serves the /api/v1 eligibility and prescription operations on top of a
// Service: a patient registry of envelopes, stored validations, and an
// optional pharmacy oracle. Use NewV1.
type V1 struct {
	svc      *Service
	patients PatientRegistry
	rx       PrescriptionStore
	oracle   PharmacyOracle
	newID    func() (string, error)
}

// V1Option configures a V1.
type V1Option func(*V1) error

// WithPharmacyOracle makes prescription validation read pharmacy
// availability from the chain, and enables AttestAvailability. Without one,
// pharmacy_confirmation is always "unconfirmed".
func WithPharmacyOracle(o PharmacyOracle) V1Option {
	return func(v *V1) error { v.oracle = o; return nil }
}

// NewV1 returns the v1 operations of svc over the given stores.
func NewV1(svc *Service, patients PatientRegistry, prescriptions PrescriptionStore, opts ...V1Option) (*V1, error) {
	if svc == nil || patients == nil || prescriptions == nil {
		return nil, errors.New("healthagents: NewV1 needs a Service, a PatientRegistry and a PrescriptionStore")
	}
	v := &V1{svc: svc, patients: patients, rx: prescriptions, newID: newPrescriptionID}
	for _, o := range opts {
		if err := o(v); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// HasOracle reports whether a pharmacy oracle is configured.
func (v *V1) HasOracle() bool { return v.oracle != nil }

func newPrescriptionID() (string, error) {
	var b [15]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("healthagents: prescription id: %w", err)
	}
	return "rx_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:])), nil
}

const registryPrefix = "Patient registration failed"

// PutPatient registers env under (owner, patientID), replacing the owner's
// previous envelope; another owner's record of the same id is untouched.
// owner is the caller's owner string ("org:<organization>", "key:<rotation
// chain>" over HTTP; "" for in-process callers without keys). The envelope
// is opened and checked like any envelope (hash, CID, decryption, record,
// patient_id inside) and then stored exactly as received: the plaintext is
// not kept.
func (v *V1) PutPatient(ctx context.Context, owner, patientID string, env *PatientData) error {
	if err := checkCode("patient_id", patientID); err != nil {
		return err
	}
	if env == nil {
		return Errorf(CodeInvalid, "Invalid request format: missing field 'patient_data'")
	}
	if env.PatientID != patientID {
		return Errorf(CodeInvalid, "%s: patient_id in the path and in the envelope differ", registryPrefix)
	}
	if _, err := v.svc.OpenRecord(ctx, env, registryPrefix); err != nil {
		return err
	}
	if err := v.patients.PutPatient(ctx, owner, *env); err != nil {
		// A registry that refuses the envelope itself (an IPFS node that
		// computes another CID) says so with a 400; anything else is ours.
		var he *Error
		if errors.As(err, &he) && he.Code == CodeInvalid {
			return err
		}
		return v.unavailable(ctx, registryPrefix, err)
	}
	return nil
}

// DeletePatient removes the owner's envelope of the patient. Another
// owner's record of the same id is PATIENT_NOT_FOUND.
func (v *V1) DeletePatient(ctx context.Context, owner, patientID string) error {
	if err := checkCode("patient_id", patientID); err != nil {
		return err
	}
	err := v.patients.DeletePatient(ctx, owner, patientID)
	if errors.Is(err, ErrPatientNotFound) {
		return patientNotFound(err)
	}
	if err != nil {
		return v.unavailable(ctx, registryPrefix, err)
	}
	return nil
}

func patientNotFound(err error) error {
	return v1Error(CodeNotFound, V1PatientNotFound, err, "no patient record is registered under this patient_id")
}

// unavailable hides a storage failure behind 503.
func (v *V1) unavailable(ctx context.Context, op string, err error) error {
	v.svc.logger.ErrorContext(ctx, "storage failed", "op", op, "err", err)
	return WrapError(CodeUnavailable, err, "Service temporarily unavailable")
}

// record returns the opened record the owner registered for the patient.
func (v *V1) record(ctx context.Context, owner, patientID, prefix string) (*record.Record, error) {
	env, err := v.patients.Patient(ctx, owner, patientID)
	if errors.Is(err, ErrPatientNotFound) {
		return nil, patientNotFound(err)
	}
	if err != nil {
		return nil, v.unavailable(ctx, prefix, err)
	}
	return v.svc.OpenRecord(ctx, &env, prefix)
}

// V1EligibilityRequest is the body of POST /api/v1/eligibility/verify.
type V1EligibilityRequest struct {
	PatientID     string `json:"patient_id" required:"true" maxLength:"64" doc:"A patient registered with PUT /api/v1/patients/{patient_id}." example:"PT-000123"`
	MemberID      string `json:"member_id" required:"true" maxLength:"64" doc:"Must equal coverage.member_id of the patient's record." example:"W123456789"`
	ProcedureCode string `json:"procedure_code" required:"true" maxLength:"64" doc:"PROC001..PROC005, or a CPT/HCPCS code mapped onto them." example:"PROC001"`
	ProviderNPI   string `json:"provider_npi" required:"true" doc:"10-digit NPI; its check digit must be valid." example:"1234567893"`
}

// V1Proof is the proof of a decision and its verification on chain.
type V1Proof struct {
	ProofData    string   `json:"proof_data" doc:"The Groth16 proof, hex (256 bytes in the Solidity verifier's layout)."`
	PublicInputs []string `json:"public_inputs" doc:"The public inputs, hex field elements."`
	BlockchainTx string   `json:"blockchain_tx" doc:"Hash of the mined transaction in which the verifier contract accepted the proof; its StatementVerified event carries the inputs."`
}

func v1Proof(a *Attestation) *V1Proof {
	if a == nil || !a.Verified {
		return nil
	}
	return &V1Proof{ProofData: a.ProofData, PublicInputs: a.PublicInputs, BlockchainTx: a.TxHash}
}

// V1EligibilityResult is the v1 eligibility result (spec section 2.7).
type V1EligibilityResult struct {
	Eligible              bool     `json:"eligible"`
	CoveragePercentage    int      `json:"coverage_percentage" minimum:"0" maximum:"100"`
	RequiresAuthorization bool     `json:"requires_authorization"`
	DeductibleMet         bool     `json:"deductible_met" doc:"coverage.deductible_met has reached coverage.deductible."`
	CopayAmount           float64  `json:"copay_amount" doc:"coverage.copay of the record."`
	Reason                *string  `json:"reason" doc:"Why the patient is not eligible (e.g. an excluded procedure); null when eligible."`
	VerificationProof     *V1Proof `json:"verification_proof" doc:"null only when the service runs without proofs."`
}

// VerifyEligibility is POST /api/v1/eligibility/verify, over the record
// owner registered for req.PatientID.
func (v *V1) VerifyEligibility(ctx context.Context, owner string, req V1EligibilityRequest) (*V1EligibilityResult, error) {
	for _, f := range [][2]string{{"patient_id", req.PatientID}, {"member_id", req.MemberID}, {"procedure_code", req.ProcedureCode}} {
		if err := checkCode(f[0], f[1]); err != nil {
			return nil, err
		}
	}
	if err := checkNPI("provider_npi", req.ProviderNPI); err != nil {
		return nil, err
	}
	if _, err := v.svc.elig.Lookup(req.ProcedureCode); err != nil {
		return nil, lookupError(err, "Procedure", req.ProcedureCode)
	}
	rec, err := v.record(ctx, owner, req.PatientID, eligibilityPrefix)
	if err != nil {
		return nil, err
	}
	if rec.Coverage == nil {
		return nil, v1Error(CodeUnprocessable, V1NoInsurance, nil, "the patient's record holds no coverage")
	}
	if subtle.ConstantTimeCompare([]byte(rec.Coverage.MemberID), []byte(req.MemberID)) != 1 {
		return nil, v1Error(CodeUnprocessable, V1NoInsurance, nil, "member_id does not match the patient's coverage")
	}
	d, err := v.svc.elig.Check(ctx, rec, req.ProcedureCode, v.svc.now().UTC())
	if err != nil {
		return nil, v.svc.internal(ctx, eligibilityPrefix, err)
	}
	if d.NoCoverage {
		return nil, v1Error(CodeUnprocessable, V1NoInsurance, nil, "no active coverage on %s", d.ServiceDate.Format(time.DateOnly))
	}
	res := &V1EligibilityResult{
		Eligible:              d.Eligible,
		CoveragePercentage:    d.CoveragePct,
		RequiresAuthorization: d.RequiresAuthorization,
		DeductibleMet:         rec.Coverage.DeductibleMet >= rec.Coverage.Deductible,
		CopayAmount:           rec.Coverage.Copay,
	}
	if !d.Eligible {
		reason := d.Reason
		res.Reason = &reason
	}
	verified := false
	if v.svc.attestor != nil {
		att, err := v.svc.attestor.AttestEligibility(ctx, rec, d)
		if err != nil {
			return nil, v.proofError(ctx, V1ProofInvalid, V1NetworkError, err)
		}
		res.VerificationProof = v1Proof(att)
		verified = att.Verified
	}
	err = v.svc.emit(ctx, Event{Type: EventEligibilityVerified, PatientID: req.PatientID, Data: map[string]any{
		"eligible": d.Eligible, "coverage_percentage": d.CoveragePct,
		"requires_auth": d.RequiresAuthorization, "zk_proof_verified": verified,
	}})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// proofError maps an Attestor error to the v1 codes: proof failures are
// 500 with proofCode, an unreachable chain is 503 with netCode, a record
// beyond the circuit's bounds 422 with proofCode.
func (v *V1) proofError(ctx context.Context, proofCode, netCode string, err error) error {
	switch {
	case errors.Is(err, ErrProofTimeout):
		return v1Error(CodeInternal, proofCode, err, "ZK proof generation timed out")
	case errors.Is(err, ErrProofRejected):
		return v1Error(CodeInternal, proofCode, err, "ZK proof verification failed")
	case errors.Is(err, ErrChainUnavailable):
		return v1Error(CodeUnavailable, netCode, err, "Service temporarily unavailable")
	case errors.Is(err, ErrProofUnsupported):
		// As the root family: the record, not the service, is the problem.
		return v1Error(CodeUnprocessable, proofCode, err, "the record cannot be proven: it exceeds the ZK circuit's bounds (see docs/decisions/zkp.md)")
	}
	v.svc.logger.ErrorContext(ctx, "proof failed", "err", err)
	return v1Error(CodeInternal, proofCode, err, "internal error")
}

func checkNPI(field, s string) error {
	if strings.TrimSpace(s) == "" {
		return Errorf(CodeInvalid, "Validation error: field '%s' is required", field)
	}
	if err := npi.Check(s); err != nil {
		var ne *npi.Error
		reason := "is not an NPI"
		if errors.As(err, &ne) {
			reason = ne.Reason
		}
		return WrapError(CodeInvalid, err, fmt.Sprintf("Validation error: field '%s' is not a valid NPI: %s", field, reason))
	}
	return nil
}

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
	Type       string `json:"type" enum:"interaction,contraindication"`
	NDCCode    string `json:"ndc_code" doc:"The prescribed medication (11 digits)."`
	Drug       string `json:"drug"`
	With       string `json:"with,omitempty" doc:"The other drug of an interaction."`
	WithSource string `json:"with_source,omitempty" enum:"current,new" doc:"Whether the other drug is a current medication or another new one."`
	Severity   string `json:"severity" enum:"contraindicated,major,moderate,minor"`
	Mechanism  string `json:"mechanism" doc:"For an interaction, how the two drugs interact. For a contraindication, class-level text only: whether a recorded allergy or a recorded condition argues against the drug, never which allergen or condition."`
	Management string `json:"management"`
}

// V1DrugInteractions is checks.drug_interactions.
type V1DrugInteractions struct {
	Status            string      `json:"status" enum:"clear,warning,blocked" doc:"clear: no finding; warning: moderate or minor findings; blocked: a major or contraindicated finding."`
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

// V1PrescriptionResult is the v1 prescription result (spec section 2.7).
type V1PrescriptionResult struct {
	ValidationStatus string    `json:"validation_status" enum:"approved,requires_review,rejected"`
	PrescriptionID   string    `json:"prescription_id" example:"rx_k3j5m7n9p1q3r5s7t9v1w3x5"`
	Codes            []string  `json:"codes" doc:"Findings: INTERACTION_FOUND, CONTRAINDICATED, INELIGIBLE."`
	Checks           V1Checks  `json:"checks"`
	ZKProof          *V1Proof  `json:"zk_proof" doc:"Proof of the first medication's coverage statement under the patient's plan (its last public input is 1 when the plan covers the drug on the service date, 0 when not); null when rejected, when the record holds no coverage, or without proofs."`
	ZKProofs         []V1Proof `json:"zk_proofs,omitempty" doc:"One coverage proof per medication, in request order."`
	CreatedAt        time.Time `json:"created_at"`
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
		drug, err := v.svc.rx.Lookup(ndc)
		switch {
		case err == nil && m.Name != "":
			if named, nerr := v.svc.rx.Lookup(m.Name); nerr == nil && named.RxCUI != drug.RxCUI {
				return nil, Errorf(CodeInvalid, "Validation error: fields '%s' and '%s' name different drugs", f("ndc_code"), f("name"))
			}
		case err != nil && m.Name == "":
			return nil, lookupError(err, "Drug", ndc)
		case err != nil:
			// Most package codes are not in the catalogue: the name decides.
			if drug, err = v.svc.rx.Lookup(m.Name); err != nil {
				return nil, lookupError(err, "Drug", ndc)
			}
		}
		lines[i] = medLine{ndc: ndc, drug: drug}
	}
	return lines, nil
}

// ValidatePrescription is POST /api/v1/prescriptions/validate. owner names
// the registry's record to use (see PutPatient) and who may read the stored
// validation back ("" for anyone).
func (v *V1) ValidatePrescription(ctx context.Context, owner string, req V1PrescriptionRequest) (*V1PrescriptionResult, error) {
	lines, err := v.checkPrescription(&req)
	if err != nil {
		return nil, err
	}
	rec, err := v.record(ctx, owner, req.PatientID, prescriptionPrefix)
	if err != nil {
		return nil, err
	}
	codes := make([]string, len(lines))
	for i, l := range lines {
		codes[i] = l.drug.RxCUI
	}
	batch, err := v.svc.rx.Check(ctx, nil, codes, rec)
	if err != nil {
		return nil, v.svc.internal(ctx, prescriptionPrefix, err)
	}
	now := v.svc.now().UTC()
	res := &V1PrescriptionResult{CreatedAt: now.Truncate(time.Microsecond), Codes: []string{}}
	res.Checks.DrugInteractions = drugChecks(lines, batch.Decisions)
	res.Checks.Eligibility = coverageCheck(rec, lines, now)

	rejected, review := false, false
	contraindicated := false
	for _, d := range batch.Decisions {
		rejected = rejected || !d.Valid
		for _, ia := range d.Interactions {
			review = review || ia.Severity == prescription.SeverityModerate
		}
		for _, c := range d.Contraindications {
			review = review || c.Severity == prescription.SeverityModerate
			contraindicated = contraindicated || c.Severity.Blocks()
		}
	}
	if res.Checks.DrugInteractions.InteractionsFound > 0 {
		res.Codes = append(res.Codes, V1InteractionFound)
	}
	if contraindicated {
		res.Codes = append(res.Codes, V1Contraindicated)
	}
	if res.Checks.Eligibility.Status != "eligible" {
		res.Codes = append(res.Codes, V1Ineligible)
		review = true
	}
	review = review || res.Checks.Eligibility.RequiresPriorAuth
	switch {
	case rejected:
		res.ValidationStatus = StatusRejected
	case review:
		res.ValidationStatus = StatusRequiresReview
	default:
		res.ValidationStatus = StatusApproved
	}

	if res.Checks.PharmacyConfirmation, err = v.pharmacy(ctx, req.PharmacyNPI, lines); err != nil {
		return nil, err
	}

	zkVerified := false
	if v.svc.attestor != nil && !rejected && rec.Coverage != nil {
		covered := true
		for _, d := range batch.Decisions {
			att, err := v.svc.attestor.AttestPrescription(ctx, rec, d, now)
			if err != nil {
				return nil, v.proofError(ctx, V1ProofFailed, V1ProofFailed, err)
			}
			if p := v1Proof(att); p != nil {
				res.ZKProofs = append(res.ZKProofs, *p)
				covered = covered && provesCoverage(att)
			}
		}
		if len(res.ZKProofs) == len(batch.Decisions) && len(res.ZKProofs) > 0 {
			p := res.ZKProofs[0]
			res.ZKProof = &p
			zkVerified = covered
		}
	}

	if res.PrescriptionID, err = v.newID(); err != nil {
		return nil, v.svc.internal(ctx, prescriptionPrefix, err)
	}
	body, err := json.Marshal(res)
	if err != nil {
		return nil, v.svc.internal(ctx, prescriptionPrefix, err)
	}
	// As on the root family, zk_proof_verified means eligibility was
	// verified cryptographically: every medication's proof verified on chain
	// and states coverage. A proof of "not covered" verifies just the same.
	data := map[string]any{"valid": !rejected, "zk_proof_verified": zkVerified,
		"prescription_id": res.PrescriptionID, "validation_status": res.ValidationStatus}
	events := []Event{{Type: EventPrescriptionValidated, Time: now, PatientID: req.PatientID, Data: data}}
	if res.ValidationStatus == StatusApproved {
		events = append(events, Event{Type: EventPrescriptionApproved, Time: now, PatientID: req.PatientID, Data: data})
	}
	err = v.save(ctx, StoredPrescription{
		ID: res.PrescriptionID, Owner: owner, PatientID: req.PatientID, Status: res.ValidationStatus,
		CreatedAt: res.CreatedAt, Result: body,
	}, events)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// save stores a validation with the events that report it (none when the
// service has no EventSink): in one transaction when the store is a
// PrescriptionEventStore, else the validation and then each event through
// the sink.
func (v *V1) save(ctx context.Context, p StoredPrescription, events []Event) error {
	if v.svc.events == nil {
		events = nil
	}
	if es, ok := v.rx.(PrescriptionEventStore); ok && len(events) > 0 {
		if err := es.SavePrescriptionWithEvents(ctx, p, events); err != nil {
			return v.unavailable(ctx, prescriptionPrefix, err)
		}
		return nil
	}
	if err := v.rx.SavePrescription(ctx, p); err != nil {
		return v.unavailable(ctx, prescriptionPrefix, err)
	}
	for _, e := range events {
		if err := v.svc.emit(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

func drugChecks(lines []medLine, ds []prescription.Decision) V1DrugInteractions {
	out := V1DrugInteractions{Status: "clear", Warnings: []V1Warning{}}
	seen := map[string]bool{}
	worst := 0
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

// pharmacy reads the oracle for every medication: confirmed only when every
// NDC is attested by the pharmacy.
func (v *V1) pharmacy(ctx context.Context, pharmacyNPI string, lines []medLine) (V1PharmacyConfirmation, error) {
	out := V1PharmacyConfirmation{Status: "unconfirmed"}
	if v.oracle == nil || pharmacyNPI == "" {
		return out, nil
	}
	var latest time.Time
	all := true
	for _, l := range lines {
		a, found, err := v.oracle.Availability(ctx, pharmacyNPI, l.ndc)
		if errors.Is(err, ErrInvalidAttestation) {
			return out, v1Error(CodeInvalid, V1PharmacyError, err, "the pharmacy oracle refused pharmacy_npi or an NDC as malformed")
		}
		if err != nil {
			code := CodeInternal
			if errors.Is(err, ErrChainUnavailable) {
				code = CodeUnavailable
			}
			v.svc.logger.ErrorContext(ctx, "pharmacy oracle read failed", "err", err)
			return out, v1Error(code, V1PharmacyError, err, "the pharmacy oracle could not be read")
		}
		if !found {
			all = false
			continue
		}
		if a.AvailableOn.After(latest) {
			latest = a.AvailableOn
		}
	}
	out.CrossChainVerified = true
	if all {
		out.Status = "confirmed"
		s := latest.UTC().Format(time.DateOnly)
		out.EstimatedAvailability = &s
	}
	return out, nil
}

// Prescription returns a stored validation. A validation stored for another
// owner is not found.
func (v *V1) Prescription(ctx context.Context, owner, id string) (*V1PrescriptionResult, error) {
	if err := checkCode("prescription_id", id); err != nil {
		return nil, err
	}
	p, err := v.rx.Prescription(ctx, id)
	if errors.Is(err, ErrPrescriptionNotFound) || (err == nil && p.Owner != "" && p.Owner != owner) {
		return nil, Errorf(CodeNotFound, "Prescription %s not found", id)
	}
	if err != nil {
		return nil, v.unavailable(ctx, prescriptionPrefix, err)
	}
	var res V1PrescriptionResult
	if err := json.Unmarshal(p.Result, &res); err != nil {
		return nil, v.svc.internal(ctx, prescriptionPrefix, err)
	}
	return &res, nil
}

// V1BatchItem is one prescription's outcome in a batch: a result or an
// error, never both.
type V1BatchItem struct {
	Result *V1PrescriptionResult
	Err    error
}

// BatchValidate validates up to MaxBatch prescriptions, each independently:
// one failing does not fail the others.
func (v *V1) BatchValidate(ctx context.Context, owner string, reqs []V1PrescriptionRequest) ([]V1BatchItem, error) {
	if len(reqs) == 0 {
		return nil, Errorf(CodeInvalid, "Validation error: field 'prescriptions' must hold at least one prescription")
	}
	if len(reqs) > MaxBatch {
		return nil, Errorf(CodeInvalid, "Validation error: field 'prescriptions' holds more than %d prescriptions", MaxBatch)
	}
	out := make([]V1BatchItem, len(reqs))
	for i, r := range reqs {
		if err := ctx.Err(); err != nil {
			return nil, WrapError(CodeUnavailable, err, "Service temporarily unavailable")
		}
		out[i].Result, out[i].Err = v.ValidatePrescription(ctx, owner, r)
	}
	return out, nil
}

// V1Attestation is the body of POST /api/v1/pharmacy/attestations.
type V1Attestation struct {
	PharmacyNPI           string `json:"pharmacy_npi" required:"true" example:"1245319599"`
	NDCCode               string `json:"ndc_code" required:"true" doc:"Any NDC form; stored as 11 digits." example:"0071-0155-23"`
	EstimatedAvailability string `json:"estimated_availability" required:"true" doc:"YYYY-MM-DD: when the pharmacy expects to dispense it." example:"2026-11-24"`
}

// V1AttestationResult answers POST /api/v1/pharmacy/attestations.
type V1AttestationResult struct {
	PharmacyNPI           string `json:"pharmacy_npi"`
	NDCCode               string `json:"ndc_code" doc:"11 digits."`
	EstimatedAvailability string `json:"estimated_availability"`
	BlockchainTx          string `json:"blockchain_tx" doc:"The mined transaction that wrote the attestation to the oracle contract."`
	BlockNumber           uint64 `json:"block_number"`
}

// AttestAvailability writes a pharmacy availability attestation to the
// oracle contract.
func (v *V1) AttestAvailability(ctx context.Context, req V1Attestation) (*V1AttestationResult, error) {
	if err := checkNPI("pharmacy_npi", req.PharmacyNPI); err != nil {
		return nil, err
	}
	ndc, err := prescription.NormalizeNDC(req.NDCCode)
	if err != nil {
		return nil, WrapError(CodeInvalid, err, "Validation error: field 'ndc_code' is not an NDC in 4-4-2, 5-3-2, 5-4-1 or 11-digit form")
	}
	day, err := time.Parse(time.DateOnly, req.EstimatedAvailability)
	if err != nil {
		return nil, Errorf(CodeInvalid, "Validation error: field 'estimated_availability' must be a date YYYY-MM-DD")
	}
	now := v.svc.now().UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	if !day.After(time.Unix(0, 0).UTC()) || day.After(today.AddDate(0, 0, MaxAvailabilityDays)) {
		return nil, Errorf(CodeInvalid, "Validation error: field 'estimated_availability' must be after 1970-01-01 and at most %d days after today (UTC)", MaxAvailabilityDays)
	}
	if v.oracle == nil {
		return nil, v1Error(CodeUnavailable, V1PharmacyError, nil, "no pharmacy oracle is configured")
	}
	rc, err := v.oracle.Attest(ctx, Availability{PharmacyNPI: req.PharmacyNPI, NDC: ndc, AvailableOn: day})
	if errors.Is(err, ErrInvalidAttestation) {
		// V1 checked the NPI, NDC and date first, so this is an oracle
		// stricter than V1; still the caller's input, not our failure.
		return nil, v1Error(CodeInvalid, V1PharmacyError, err, "the pharmacy oracle refused the attestation as malformed")
	}
	if err != nil {
		code := CodeInternal
		if errors.Is(err, ErrChainUnavailable) {
			code = CodeUnavailable
		}
		v.svc.logger.ErrorContext(ctx, "pharmacy attestation failed", "err", err)
		return nil, v1Error(code, V1PharmacyError, err, "the attestation could not be written")
	}
	return &V1AttestationResult{PharmacyNPI: req.PharmacyNPI, NDCCode: ndc, EstimatedAvailability: day.Format(time.DateOnly),
		BlockchainTx: rc.TxHash, BlockNumber: rc.BlockNumber}, nil
}
