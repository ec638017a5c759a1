package healthagents_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
)

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
