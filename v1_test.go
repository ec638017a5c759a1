package healthagents_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/eligibility"
	"github.com/healthagents/healthagents/prescription"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/zkp"
)

// The fakes below stand in for store's tables in these unit tests only; the
// real stores are tested in package store and end to end in server's v1
// round trips through app.Open.

type memPatients struct {
	mu sync.Mutex
	m  map[[2]string]healthagents.PatientData // by (owner, patient id)
}

func (p *memPatients) PutPatient(_ context.Context, owner string, env healthagents.PatientData) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[[2]string]healthagents.PatientData{}
	}
	p.m[[2]string{owner, env.PatientID}] = env
	return nil
}

func (p *memPatients) Patient(_ context.Context, owner, id string) (healthagents.PatientData, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	env, ok := p.m[[2]string{owner, id}]
	if !ok {
		return env, healthagents.ErrPatientNotFound
	}
	return env, nil
}

func (p *memPatients) DeletePatient(_ context.Context, owner, id string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.m[[2]string{owner, id}]; !ok {
		return healthagents.ErrPatientNotFound
	}
	delete(p.m, [2]string{owner, id})
	return nil
}

type memPrescriptions struct {
	mu sync.Mutex
	m  map[string]healthagents.StoredPrescription
}

func (s *memPrescriptions) SavePrescription(_ context.Context, p healthagents.StoredPrescription) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]healthagents.StoredPrescription{}
	}
	s.m[p.ID] = p
	return nil
}

func (s *memPrescriptions) Prescription(_ context.Context, id string) (healthagents.StoredPrescription, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.m[id]
	if !ok {
		return p, healthagents.ErrPrescriptionNotFound
	}
	return p, nil
}

type memOracle struct {
	mu         sync.Mutex
	m          map[string]healthagents.Availability
	fail       error // of every call
	failAttest error // of Attest only
}

func (o *memOracle) Availability(_ context.Context, npi, ndc string) (healthagents.Availability, bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.fail != nil {
		return healthagents.Availability{}, false, o.fail
	}
	a, ok := o.m[npi+"/"+ndc]
	return a, ok, nil
}

func (o *memOracle) Attest(_ context.Context, a healthagents.Availability) (healthagents.AttestationReceipt, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := errors.Join(o.fail, o.failAttest); err != nil {
		return healthagents.AttestationReceipt{}, err
	}
	if o.m == nil {
		o.m = map[string]healthagents.Availability{}
	}
	o.m[a.PharmacyNPI+"/"+a.NDC] = a
	return healthagents.AttestationReceipt{TxHash: "0xabc", BlockNumber: 7}, nil
}

// stubAttestor returns a verified attestation, or err.
type stubAttestor struct{ err error }

func (s stubAttestor) AttestEligibility(context.Context, *record.Record, eligibility.Decision) (*healthagents.Attestation, error) {
	if s.err != nil {
		return nil, s.err
	}
	return &healthagents.Attestation{ProofData: "0x01", PublicInputs: []string{"0x02"}, TxHash: "0xe1", Verified: true}, nil
}

// AttestPrescription states coverage as the real statement does: its last
// public input is the Covered output (zkp.Covers).
func (s stubAttestor) AttestPrescription(_ context.Context, rec *record.Record, d prescription.Decision, date time.Time) (*healthagents.Attestation, error) {
	if s.err != nil {
		return nil, s.err
	}
	covered, err := zkp.Covers(rec.Coverage, d.Drug.RxCUI, date)
	if err != nil {
		return nil, err
	}
	flag := "0x00"
	if covered {
		flag = "0x01"
	}
	return &healthagents.Attestation{ProofData: "0x03", PublicInputs: []string{"0x04", flag}, TxHash: "0xp1", Verified: true}, nil
}

const (
	providerNPI = "1234567893"
	pharmacyNPI = "1245319599"
	// testOwner is the owner the unit tests register patients and store
	// validations under.
	testOwner = "org:test"
)

type v1Fixture struct {
	v1     *healthagents.V1
	kr     *cipher.Keyring
	sink   *recordingSink
	oracle *memOracle
}

func newV1(t *testing.T, opts ...healthagents.Option) *v1Fixture {
	t.Helper()
	f := &v1Fixture{sink: &recordingSink{}, oracle: &memOracle{}}
	svc, kr := newService(t, append([]healthagents.Option{healthagents.WithEvents(f.sink)}, opts...)...)
	f.kr = kr
	var err error
	f.v1, err = healthagents.NewV1(svc, &memPatients{}, &memPrescriptions{}, healthagents.WithPharmacyOracle(f.oracle))
	require.NoError(t, err)
	return f
}

func (f *v1Fixture) register(t *testing.T, r *record.Record) {
	t.Helper()
	b, err := r.Marshal()
	require.NoError(t, err)
	env, err := cipher.Seal(r.PatientID, b, f.kr)
	require.NoError(t, err)
	require.NoError(t, f.v1.PutPatient(t.Context(), testOwner, r.PatientID, &env))
}

func patient(id string, meds, allergies []string) *record.Record {
	return &record.Record{PatientID: id, Medications: meds, Allergies: allergies, Coverage: &record.Coverage{
		MemberID: "W1", Status: "active", Start: "2026-01-01", End: "2026-12-31",
		Deductible: 1500, DeductibleMet: 1500, Copay: 25, ExcludedProcedures: []string{"PROC005"},
	}}
}

func TestV1Eligibility(t *testing.T) {
	t.Parallel()
	f := newV1(t, healthagents.WithAttestor(stubAttestor{}))
	f.register(t, patient("PT-1", nil, nil))
	lapsed := patient("PT-2", nil, nil)
	lapsed.Coverage.End = "2026-06-30"
	lapsed.Coverage.DeductibleMet = 10
	f.register(t, lapsed)
	bare := patient("PT-3", nil, nil)
	bare.Coverage = nil
	f.register(t, bare)

	req := func(mut func(*healthagents.V1EligibilityRequest)) healthagents.V1EligibilityRequest {
		r := healthagents.V1EligibilityRequest{PatientID: "PT-1", MemberID: "W1", ProcedureCode: "PROC001", ProviderNPI: providerNPI}
		if mut != nil {
			mut(&r)
		}
		return r
	}
	res, err := f.v1.VerifyEligibility(t.Context(), testOwner, req(nil))
	require.NoError(t, err)
	assert.True(t, res.Eligible)
	assert.Equal(t, 80, res.CoveragePercentage)
	assert.True(t, res.DeductibleMet)
	assert.InDelta(t, 25.0, res.CopayAmount, 1e-9)
	assert.Nil(t, res.Reason)
	require.NotNil(t, res.VerificationProof)
	assert.Equal(t, "0xe1", res.VerificationProof.BlockchainTx)

	excluded, err := f.v1.VerifyEligibility(t.Context(), testOwner, req(func(r *healthagents.V1EligibilityRequest) { r.ProcedureCode = "PROC005" }))
	require.NoError(t, err)
	assert.False(t, excluded.Eligible)
	require.NotNil(t, excluded.Reason)

	tests := []struct {
		name   string
		mut    func(*healthagents.V1EligibilityRequest)
		code   healthagents.Code
		v1code string
	}{
		{"fail/npi check digit", func(r *healthagents.V1EligibilityRequest) { r.ProviderNPI = "1234567890" }, healthagents.CodeInvalid, ""},
		{"fail/npi nine digits", func(r *healthagents.V1EligibilityRequest) { r.ProviderNPI = "123456789" }, healthagents.CodeInvalid, ""},
		{"fail/npi missing", func(r *healthagents.V1EligibilityRequest) { r.ProviderNPI = "" }, healthagents.CodeInvalid, ""},
		{"fail/unknown procedure", func(r *healthagents.V1EligibilityRequest) { r.ProcedureCode = "NOPE" }, healthagents.CodeNotFound, ""},
		{"fail/unknown patient", func(r *healthagents.V1EligibilityRequest) { r.PatientID = "PT-404" }, healthagents.CodeNotFound, healthagents.V1PatientNotFound},
		{"fail/member mismatch", func(r *healthagents.V1EligibilityRequest) { r.MemberID = "W2" }, healthagents.CodeUnprocessable, healthagents.V1NoInsurance},
		{"fail/lapsed coverage", func(r *healthagents.V1EligibilityRequest) { r.PatientID = "PT-2" }, healthagents.CodeUnprocessable, healthagents.V1NoInsurance},
		{"fail/no coverage block", func(r *healthagents.V1EligibilityRequest) { r.PatientID = "PT-3" }, healthagents.CodeUnprocessable, healthagents.V1NoInsurance},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := f.v1.VerifyEligibility(t.Context(), testOwner, req(tc.mut))
			require.Error(t, err)
			assert.Equal(t, tc.code, healthagents.ErrorCode(err))
			assert.Equal(t, tc.v1code, healthagents.V1Code(err), healthagents.ErrorDetail(err))
		})
	}
}

func TestV1EligibilityProofErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		err    error
		code   healthagents.Code
		v1code string
	}{
		{"proof rejected", healthagents.ErrProofRejected, healthagents.CodeInternal, healthagents.V1ProofInvalid},
		{"proof timeout", healthagents.ErrProofTimeout, healthagents.CodeInternal, healthagents.V1ProofInvalid},
		{"chain down", healthagents.ErrChainUnavailable, healthagents.CodeUnavailable, healthagents.V1NetworkError},
		{"beyond the circuit", healthagents.ErrProofUnsupported, healthagents.CodeUnprocessable, healthagents.V1ProofInvalid},
		{"anything else", errors.New("prover exploded"), healthagents.CodeInternal, healthagents.V1ProofInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newV1(t, healthagents.WithAttestor(stubAttestor{err: tc.err}))
			f.register(t, patient("PT-1", nil, nil))
			_, err := f.v1.VerifyEligibility(t.Context(), testOwner, healthagents.V1EligibilityRequest{PatientID: "PT-1", MemberID: "W1", ProcedureCode: "PROC001", ProviderNPI: providerNPI})
			require.ErrorIs(t, err, tc.err)
			assert.Equal(t, tc.code, healthagents.ErrorCode(err))
			assert.Equal(t, tc.v1code, healthagents.V1Code(err))
			assert.Empty(t, f.sink.events, "no eligibility.verified without a proof")
		})
	}
}

// TestV1PrescriptionProofErrors: an attestor that fails gives PROOF_FAILED
// (500; 503 when the chain is down; 422 for a record beyond the circuit),
// and nothing is stored or announced. The stub attestor stands in for
// attest.Attestor here only; the real one fails over HTTP in server's
// TestV1ProofErrorsRoundTrip.
func TestV1PrescriptionProofErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		err    error
		code   healthagents.Code
		detail string
	}{
		{"proof rejected", healthagents.ErrProofRejected, healthagents.CodeInternal, "PROOF_FAILED: ZK proof verification failed"},
		{"proof timeout", healthagents.ErrProofTimeout, healthagents.CodeInternal, "PROOF_FAILED: ZK proof generation timed out"},
		{"chain down", healthagents.ErrChainUnavailable, healthagents.CodeUnavailable, "PROOF_FAILED: Service temporarily unavailable"},
		{"beyond the circuit", healthagents.ErrProofUnsupported, healthagents.CodeUnprocessable, "PROOF_FAILED: the record cannot be proven: it exceeds the ZK circuit's bounds (see docs/decisions/zkp.md)"},
		{"anything else", errors.New("prover exploded"), healthagents.CodeInternal, "PROOF_FAILED: internal error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sink := &recordingSink{}
			svc, kr := newService(t, healthagents.WithAttestor(stubAttestor{err: tc.err}), healthagents.WithEvents(sink))
			rx := &memPrescriptions{}
			v1, err := healthagents.NewV1(svc, &memPatients{}, rx)
			require.NoError(t, err)
			registerPatient(t, v1, kr, patient("PT-C", nil, nil))
			_, err = v1.ValidatePrescription(t.Context(), testOwner, healthagents.V1PrescriptionRequest{PatientID: "PT-C", ProviderNPI: providerNPI,
				Medications: []healthagents.V1Medication{med("00071015523", "atorvastatin")}})
			require.ErrorIs(t, err, tc.err)
			assert.Equal(t, tc.code, healthagents.ErrorCode(err))
			assert.Equal(t, healthagents.V1ProofFailed, healthagents.V1Code(err))
			assert.Equal(t, tc.detail, healthagents.ErrorDetail(err))
			assert.Empty(t, rx.m, "nothing stored")
			assert.Empty(t, sink.events, "nothing announced")
		})
	}
}

func TestV1Registry(t *testing.T) {
	t.Parallel()
	f := newV1(t)
	f.register(t, patient("PT-1", nil, nil))
	b, err := patient("PT-1", nil, nil).Marshal()
	require.NoError(t, err)
	env, err := cipher.Seal("PT-1", b, f.kr)
	require.NoError(t, err)

	err = f.v1.PutPatient(t.Context(), testOwner, "PT-9", &env)
	assert.Equal(t, healthagents.CodeInvalid, healthagents.ErrorCode(err), "path and envelope ids differ")
	bad := env
	bad.DataHash = "00" + bad.DataHash[2:]
	err = f.v1.PutPatient(t.Context(), testOwner, "PT-1", &bad)
	assert.Equal(t, healthagents.CodeInvalid, healthagents.ErrorCode(err), "hash mismatch")

	require.NoError(t, f.v1.DeletePatient(t.Context(), testOwner, "PT-1"))
	err = f.v1.DeletePatient(t.Context(), testOwner, "PT-1")
	assert.Equal(t, healthagents.V1PatientNotFound, healthagents.V1Code(err))
	_, err = f.v1.VerifyEligibility(t.Context(), testOwner, healthagents.V1EligibilityRequest{PatientID: "PT-1", MemberID: "W1", ProcedureCode: "PROC001", ProviderNPI: providerNPI})
	assert.Equal(t, healthagents.V1PatientNotFound, healthagents.V1Code(err))
}

func med(ndc, name string) healthagents.V1Medication {
	return healthagents.V1Medication{NDCCode: ndc, Name: name, Strength: "10 mg", Quantity: 30, DaysSupply: 30, Refills: 2}
}

func TestV1Prescriptions(t *testing.T) {
	t.Parallel()
	f := newV1(t, healthagents.WithAttestor(stubAttestor{}))
	f.register(t, patient("PT-W", []string{"11289"}, nil))      // warfarin
	f.register(t, patient("PT-S", []string{"36437"}, nil))      // sertraline
	f.register(t, patient("PT-A", nil, []string{"penicillin"})) // allergy
	f.register(t, patient("PT-C", nil, nil))                    // clean
	ckd := patient("PT-K", nil, []string{"Penicillin"})         // allergy and
	ckd.Conditions = []string{"N18.5"}                          // chronic kidney disease stage 5
	f.register(t, ckd)
	_, err := f.oracle.Attest(t.Context(), healthagents.Availability{ // atorvastatin at the pharmacy
		PharmacyNPI: pharmacyNPI, NDC: "00071015523", AvailableOn: time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)})
	require.NoError(t, err)

	validate := func(pid string, meds ...healthagents.V1Medication) (*healthagents.V1PrescriptionResult, error) {
		return f.v1.ValidatePrescription(t.Context(), testOwner, healthagents.V1PrescriptionRequest{
			PatientID: pid, ProviderNPI: providerNPI, PharmacyNPI: pharmacyNPI, Medications: meds})
	}

	t.Run("approved, confirmed by the oracle", func(t *testing.T) {
		res, err := validate("PT-C", med("0071-0155-23", "atorvastatin"))
		require.NoError(t, err)
		assert.Equal(t, healthagents.StatusApproved, res.ValidationStatus)
		assert.Empty(t, res.Codes)
		assert.Equal(t, "clear", res.Checks.DrugInteractions.Status)
		assert.Equal(t, "eligible", res.Checks.Eligibility.Status)
		assert.Equal(t, 100, res.Checks.Eligibility.Coverage)
		assert.Equal(t, "confirmed", res.Checks.PharmacyConfirmation.Status)
		require.NotNil(t, res.Checks.PharmacyConfirmation.EstimatedAvailability)
		assert.Equal(t, "2026-11-24", *res.Checks.PharmacyConfirmation.EstimatedAvailability)
		assert.True(t, res.Checks.PharmacyConfirmation.CrossChainVerified)
		require.NotNil(t, res.ZKProof)
		got, err := f.v1.Prescription(t.Context(), testOwner, res.PrescriptionID)
		require.NoError(t, err)
		assert.Equal(t, res, got)
		_, err = f.v1.Prescription(t.Context(), "owner-2", res.PrescriptionID)
		assert.Equal(t, healthagents.CodeNotFound, healthagents.ErrorCode(err), "another owner")
	})
	t.Run("rejected: major interaction with a current medication", func(t *testing.T) {
		res, err := validate("PT-W", med("12345678901", "ibuprofen"))
		require.NoError(t, err)
		assert.Equal(t, healthagents.StatusRejected, res.ValidationStatus)
		assert.Contains(t, res.Codes, healthagents.V1InteractionFound)
		assert.Equal(t, "blocked", res.Checks.DrugInteractions.Status)
		require.NotEmpty(t, res.Checks.DrugInteractions.Warnings)
		w := res.Checks.DrugInteractions.Warnings[0]
		assert.Equal(t, "major", w.Severity)
		assert.Equal(t, "warfarin", w.With)
		assert.Equal(t, "current", w.WithSource)
		assert.NotEmpty(t, w.Mechanism)
		assert.NotEmpty(t, w.Management)
		assert.Nil(t, res.ZKProof)
		assert.Equal(t, "unconfirmed", res.Checks.PharmacyConfirmation.Status, "no attestation for this NDC")
		assert.Nil(t, res.Checks.PharmacyConfirmation.EstimatedAvailability)
	})
	t.Run("rejected: contraindicated by an allergy", func(t *testing.T) {
		res, err := validate("PT-A", med("1234-5678-90", "amoxicillin"))
		require.NoError(t, err)
		assert.Equal(t, healthagents.StatusRejected, res.ValidationStatus)
		assert.Equal(t, []string{healthagents.V1Contraindicated}, res.Codes)
		w := res.Checks.DrugInteractions.Warnings[0]
		assert.Equal(t, "contraindication", w.Type)
		assert.Equal(t, "contraindicated", w.Severity)
		assert.Contains(t, w.Mechanism, "a recorded allergy", "the class of the trigger")
		assert.NotEmpty(t, w.Management)
		requireNoPHI(t, res, "penicillin")
	})
	t.Run("rejected: an allergy and a condition, neither named", func(t *testing.T) {
		res, err := validate("PT-K", med("1234-5678-90", "amoxicillin"), med("2345-6789-01", "metformin"))
		require.NoError(t, err)
		assert.Equal(t, healthagents.StatusRejected, res.ValidationStatus)
		assert.Equal(t, []string{healthagents.V1Contraindicated}, res.Codes)
		ws := res.Checks.DrugInteractions.Warnings
		require.Len(t, ws, 2)
		assert.Equal(t, "amoxicillin", ws[0].Drug)
		assert.Contains(t, ws[0].Mechanism, "a recorded allergy")
		assert.Equal(t, "metformin", ws[1].Drug)
		assert.Contains(t, ws[1].Mechanism, "a recorded condition")
		// The record's entries and the words the rules use for them.
		requireNoPHI(t, res, "penicillin", "N18", "kidney", "eGFR", "beta-lactam", "lactic")
		stored, err := f.v1.Prescription(t.Context(), testOwner, res.PrescriptionID)
		require.NoError(t, err)
		requireNoPHI(t, stored, "penicillin", "N18", "kidney")
	})
	t.Run("requires_review: moderate interaction", func(t *testing.T) {
		res, err := validate("PT-S", med("00003-0894-21", "apixaban"))
		require.NoError(t, err)
		assert.Equal(t, healthagents.StatusRequiresReview, res.ValidationStatus)
		assert.Equal(t, "warning", res.Checks.DrugInteractions.Status)
		assert.Equal(t, 1, res.Checks.DrugInteractions.InteractionsFound)
	})
	t.Run("rejected: interaction between two new medications, counted once", func(t *testing.T) {
		res, err := validate("PT-C", med("11111-111-11", "warfarin"), med("22222-2222-2", "ibuprofen"))
		require.NoError(t, err)
		assert.Equal(t, healthagents.StatusRejected, res.ValidationStatus)
		assert.Equal(t, 1, res.Checks.DrugInteractions.InteractionsFound)
		assert.Equal(t, "new", res.Checks.DrugInteractions.Warnings[0].WithSource)
	})
	t.Run("requires_review: specialty tier needs prior auth", func(t *testing.T) {
		res, err := validate("PT-C", med("33333-3333-33", "posaconazole"))
		require.NoError(t, err)
		assert.Equal(t, healthagents.StatusRequiresReview, res.ValidationStatus)
		assert.True(t, res.Checks.Eligibility.RequiresPriorAuth)
	})
}

// requireNoPHI fails when the JSON of v (the whole result, as a caller
// receives it) contains any of the words, case-insensitively.
func requireNoPHI(t *testing.T, v any, words ...string) {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	body := strings.ToLower(string(b))
	for _, w := range words {
		require.NotContains(t, body, strings.ToLower(w), "the result names the patient's allergy or condition")
	}
}

func TestV1PrescriptionValidation(t *testing.T) {
	t.Parallel()
	f := newV1(t)
	f.register(t, patient("PT-C", nil, nil))
	tests := []struct {
		name string
		mut  func(*healthagents.V1PrescriptionRequest)
		code healthagents.Code
	}{
		{"ok/as is", func(*healthagents.V1PrescriptionRequest) {}, ""},
		{"fail/10 digits without hyphens", func(r *healthagents.V1PrescriptionRequest) { r.Medications[0].NDCCode = "0071015523" }, healthagents.CodeInvalid},
		{"fail/ndc letters", func(r *healthagents.V1PrescriptionRequest) { r.Medications[0].NDCCode = "0071-01x5-23" }, healthagents.CodeInvalid},
		{"fail/ndc and name disagree", func(r *healthagents.V1PrescriptionRequest) { r.Medications[0].Name = "warfarin" }, healthagents.CodeInvalid},
		{"fail/unknown drug", func(r *healthagents.V1PrescriptionRequest) {
			r.Medications[0] = med("99999-9999-99", "notadrug")
		}, healthagents.CodeNotFound},
		{"fail/zero quantity", func(r *healthagents.V1PrescriptionRequest) { r.Medications[0].Quantity = 0 }, healthagents.CodeInvalid},
		{"fail/huge quantity", func(r *healthagents.V1PrescriptionRequest) { r.Medications[0].Quantity = 5001 }, healthagents.CodeInvalid},
		{"fail/negative days", func(r *healthagents.V1PrescriptionRequest) { r.Medications[0].DaysSupply = -1 }, healthagents.CodeInvalid},
		{"fail/days over a year", func(r *healthagents.V1PrescriptionRequest) { r.Medications[0].DaysSupply = 366 }, healthagents.CodeInvalid},
		{"fail/negative refills", func(r *healthagents.V1PrescriptionRequest) { r.Medications[0].Refills = -1 }, healthagents.CodeInvalid},
		{"fail/12 refills", func(r *healthagents.V1PrescriptionRequest) { r.Medications[0].Refills = 12 }, healthagents.CodeInvalid},
		{"fail/no medications", func(r *healthagents.V1PrescriptionRequest) { r.Medications = nil }, healthagents.CodeInvalid},
		{"fail/the same NDC twice, in two forms", func(r *healthagents.V1PrescriptionRequest) {
			r.Medications = append(r.Medications, med("12345-6789-01", "ibuprofen"), med("0071-0155-23", "atorvastatin"))
		}, healthagents.CodeInvalid},
		{"ok/the same drug in two packages", func(r *healthagents.V1PrescriptionRequest) {
			r.Medications = append(r.Medications, med("12345-6789-01", "atorvastatin"))
		}, ""},
		{"fail/bad pharmacy npi", func(r *healthagents.V1PrescriptionRequest) { r.PharmacyNPI = "1245319590" }, healthagents.CodeInvalid},
		{"fail/unknown patient", func(r *healthagents.V1PrescriptionRequest) { r.PatientID = "PT-X" }, healthagents.CodeNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := healthagents.V1PrescriptionRequest{PatientID: "PT-C", ProviderNPI: providerNPI,
				Medications: []healthagents.V1Medication{med("00071015523", "atorvastatin")}}
			tc.mut(&r)
			res, err := f.v1.ValidatePrescription(t.Context(), testOwner, r)
			if tc.code == "" {
				require.NoError(t, err)
				assert.Equal(t, healthagents.StatusApproved, res.ValidationStatus)
				assert.False(t, res.Checks.PharmacyConfirmation.CrossChainVerified, "no pharmacy_npi: not read")
				return
			}
			assert.Equal(t, tc.code, healthagents.ErrorCode(err), "%v", err)
		})
	}
}

// TestV1DuplicateMedication: a package listed twice is refused with a
// detail naming both lines, before the record is read or anything proven.
func TestV1DuplicateMedication(t *testing.T) {
	t.Parallel()
	f := newV1(t, healthagents.WithAttestor(stubAttestor{}))
	f.register(t, patient("PT-C", nil, nil))
	_, err := f.v1.ValidatePrescription(t.Context(), testOwner, healthagents.V1PrescriptionRequest{PatientID: "PT-C", ProviderNPI: providerNPI,
		Medications: []healthagents.V1Medication{med("00071015523", "atorvastatin"), med("12345-6789-01", "ibuprofen"), med("00071-155-23", "")}})
	assert.Equal(t, healthagents.CodeInvalid, healthagents.ErrorCode(err))
	assert.Equal(t, "Validation error: fields 'medications[0].ndc_code' and 'medications[2].ndc_code' are the same NDC; list each package once (one line carries its whole quantity)",
		healthagents.ErrorDetail(err))
	assert.Empty(t, f.sink.events, "nothing validated")
}

// TestV1NDCForms: each NDC form normalizes to the right 11 digits. The
// catalogue NDC is given without a name, so only a correct normalization
// finds the drug; every form is also looked up in the pharmacy oracle
// under the 11 digits it must normalize to, so a wrong one reads
// "unconfirmed". 00071-0155-2 (5-4-1) is outside the catalogue: the name
// resolves it, the oracle checks the digits, and without a name the 404
// names the normalized code.
func TestV1NDCForms(t *testing.T) {
	t.Parallel()
	f := newV1(t)
	f.register(t, patient("PT-C", nil, nil))
	for _, ndc := range []string{"00071015523", "00071015502"} {
		_, err := f.oracle.Attest(t.Context(), healthagents.Availability{PharmacyNPI: pharmacyNPI, NDC: ndc, AvailableOn: time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)})
		require.NoError(t, err)
	}
	tests := []struct{ form, ndc, name, want string }{
		{"4-4-2", "0071-0155-23", "", "00071015523"},
		{"5-3-2", "00071-155-23", "", "00071015523"},
		{"5-4-2", "00071-0155-23", "", "00071015523"},
		{"11 digits", "00071015523", "", "00071015523"},
		{"5-4-1", "00071-0155-2", "atorvastatin", "00071015502"},
	}
	for _, tc := range tests {
		t.Run(tc.form, func(t *testing.T) {
			t.Parallel()
			res, err := f.v1.ValidatePrescription(t.Context(), testOwner, healthagents.V1PrescriptionRequest{PatientID: "PT-C", ProviderNPI: providerNPI,
				PharmacyNPI: pharmacyNPI, Medications: []healthagents.V1Medication{med(tc.ndc, tc.name)}})
			require.NoError(t, err)
			assert.Equal(t, healthagents.StatusApproved, res.ValidationStatus)
			assert.Equal(t, "confirmed", res.Checks.PharmacyConfirmation.Status, "the oracle was asked for %s", tc.want)
		})
	}
	_, err := f.v1.ValidatePrescription(t.Context(), testOwner, healthagents.V1PrescriptionRequest{PatientID: "PT-C", ProviderNPI: providerNPI,
		Medications: []healthagents.V1Medication{med("00071-0155-2", "")}})
	assert.Equal(t, healthagents.CodeNotFound, healthagents.ErrorCode(err))
	assert.Equal(t, "Drug code 00071015502 not found", healthagents.ErrorDetail(err))
}

func TestV1PharmacyErrorAndBatch(t *testing.T) {
	t.Parallel()
	f := newV1(t)
	f.register(t, patient("PT-C", nil, nil))
	f.register(t, patient("PT-W", []string{"11289"}, nil))
	ok := healthagents.V1PrescriptionRequest{PatientID: "PT-C", ProviderNPI: providerNPI, Medications: []healthagents.V1Medication{med("00071015523", "atorvastatin")}}
	bad := healthagents.V1PrescriptionRequest{PatientID: "PT-W", ProviderNPI: providerNPI, Medications: []healthagents.V1Medication{med("00000000001", "ibuprofen")}}
	missing := healthagents.V1PrescriptionRequest{PatientID: "PT-404", ProviderNPI: providerNPI, Medications: ok.Medications}
	items, err := f.v1.BatchValidate(t.Context(), testOwner, []healthagents.V1PrescriptionRequest{ok, bad, missing})
	require.NoError(t, err)
	require.Len(t, items, 3)
	assert.Equal(t, healthagents.StatusApproved, items[0].Result.ValidationStatus)
	assert.Equal(t, healthagents.StatusRejected, items[1].Result.ValidationStatus)
	assert.Equal(t, healthagents.V1PatientNotFound, healthagents.V1Code(items[2].Err))
	_, err = f.v1.BatchValidate(t.Context(), testOwner, make([]healthagents.V1PrescriptionRequest, healthagents.MaxBatch+1))
	assert.Equal(t, healthagents.CodeInvalid, healthagents.ErrorCode(err))

	f.sink.mu.Lock()
	var approved int
	for _, e := range f.sink.events {
		if e.Type == healthagents.EventPrescriptionApproved {
			approved++
		}
	}
	f.sink.mu.Unlock()
	assert.Equal(t, 1, approved, "prescription.approved only for the approved one")

	f.oracle.fail = errors.Join(healthagents.ErrChainUnavailable)
	ok.PharmacyNPI = pharmacyNPI
	_, err = f.v1.ValidatePrescription(t.Context(), testOwner, ok)
	assert.Equal(t, healthagents.V1PharmacyError, healthagents.V1Code(err))
	assert.Equal(t, healthagents.CodeUnavailable, healthagents.ErrorCode(err))
}

// TestV1AttestAvailabilityDates: estimated_availability must be after
// 1970-01-01 (the oracle stores Unix days, 0 meaning none) and at most
// MaxAvailabilityDays after today; an oracle refusing an attestation or a
// query as malformed is the caller's 400, not our 500.
func TestV1AttestAvailabilityDates(t *testing.T) {
	t.Parallel()
	f := newV1(t) // today is 2026-11-21
	tests := []struct {
		date string
		ok   bool
	}{
		{"1969-12-31", false},
		{"1970-01-01", false},
		{"0001-01-01", false},
		{"1970-01-02", true},
		{"2026-11-21", true},
		{"2027-11-22", true}, // today + 366 days
		{"2027-11-23", false},
		{"9999-12-31", false},
	}
	for _, tc := range tests {
		t.Run(tc.date, func(t *testing.T) {
			t.Parallel()
			res, err := f.v1.AttestAvailability(t.Context(), healthagents.V1Attestation{PharmacyNPI: pharmacyNPI, NDCCode: "0071-0155-23", EstimatedAvailability: tc.date})
			if tc.ok {
				require.NoError(t, err)
				assert.Equal(t, tc.date, res.EstimatedAvailability)
				return
			}
			assert.Equal(t, healthagents.CodeInvalid, healthagents.ErrorCode(err), "%v", err)
			assert.Equal(t, "Validation error: field 'estimated_availability' must be after 1970-01-01 and at most 366 days after today (UTC)", healthagents.ErrorDetail(err))
		})
	}

	refusing := newV1(t)
	refusing.oracle.failAttest = fmt.Errorf("oracle: %w", healthagents.ErrInvalidAttestation)
	_, err := refusing.v1.AttestAvailability(t.Context(), healthagents.V1Attestation{PharmacyNPI: pharmacyNPI, NDCCode: "0071-0155-23", EstimatedAvailability: "2026-12-01"})
	assert.Equal(t, healthagents.CodeInvalid, healthagents.ErrorCode(err), "%v", err)
	assert.Equal(t, healthagents.V1PharmacyError, healthagents.V1Code(err))
	refusing.oracle.failAttest = fmt.Errorf("oracle: %w", healthagents.ErrChainUnavailable)
	_, err = refusing.v1.AttestAvailability(t.Context(), healthagents.V1Attestation{PharmacyNPI: pharmacyNPI, NDCCode: "0071-0155-23", EstimatedAvailability: "2026-12-01"})
	assert.Equal(t, healthagents.CodeUnavailable, healthagents.ErrorCode(err), "%v", err)

	refusing.register(t, patient("PT-C", nil, nil))
	refusing.oracle.fail = fmt.Errorf("oracle: %w", healthagents.ErrInvalidAttestation)
	_, err = refusing.v1.ValidatePrescription(t.Context(), testOwner, healthagents.V1PrescriptionRequest{PatientID: "PT-C", ProviderNPI: providerNPI,
		PharmacyNPI: pharmacyNPI, Medications: []healthagents.V1Medication{med("00071015523", "atorvastatin")}})
	assert.Equal(t, healthagents.CodeInvalid, healthagents.ErrorCode(err), "%v", err)
	assert.Equal(t, healthagents.V1PharmacyError, healthagents.V1Code(err))
}

func TestV1Code(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "", healthagents.V1Code(nil))
	assert.Equal(t, "", healthagents.V1Code(errors.New("NO_INSURANCE: x")))
	assert.Equal(t, "", healthagents.V1Code(healthagents.Errorf(healthagents.CodeInvalid, "Validation error: x")))
	assert.Equal(t, "NO_INSURANCE", healthagents.V1Code(healthagents.Errorf(healthagents.CodeUnprocessable, "NO_INSURANCE: x")))
}
