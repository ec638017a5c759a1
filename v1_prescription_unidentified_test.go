package healthagents_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/quick"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/prescription"
	"github.com/healthagents/healthagents/record"
)

// TestV1PrescriptionUnidentified is issue 25's "unknown never means safe":
// warfarin coded as EHRs code it still blocks ibuprofen; a medication or
// allergy the service cannot identify gives requires_review with a warning
// naming it, never approved and never "clear" — and the entry reaches no
// event.
func TestV1PrescriptionUnidentified(t *testing.T) {
	t.Parallel()
	f := newV1(t, healthagents.WithAttestor(stubAttestor{}))
	validate := func(pid string, meds ...healthagents.V1Medication) *healthagents.V1PrescriptionResult {
		t.Helper()
		res, err := f.v1.ValidatePrescription(t.Context(), testOwner, healthagents.V1PrescriptionRequest{PatientID: pid, ProviderNPI: providerNPI, Medications: meds})
		require.NoError(t, err)
		return res
	}
	for i, warfarin := range []string{"855332", "warfarin sodium 5 MG Oral Tablet", "Coumadin 5 mg tablet"} {
		pid := fmt.Sprintf("PT-W%d", i)
		f.register(t, patient(pid, []string{warfarin}, nil))
		res := validate(pid, med("12345678901", "ibuprofen"))
		assert.Equal(t, healthagents.StatusRejected, res.ValidationStatus, warfarin)
		assert.Equal(t, []string{healthagents.V1InteractionFound}, res.Codes, warfarin)
		require.Len(t, res.Checks.DrugInteractions.Warnings, 1, warfarin)
		assert.Equal(t, "warfarin", res.Checks.DrugInteractions.Warnings[0].With, warfarin)
	}

	f.register(t, patient("PT-U", []string{"99999999", "11289"}, []string{"codeine"}))
	res := validate("PT-U", med("0071-0155-23", "atorvastatin"))
	assert.Equal(t, healthagents.StatusRequiresReview, res.ValidationStatus)
	assert.Equal(t, []string{healthagents.V1Unidentified}, res.Codes)
	checks := res.Checks.DrugInteractions
	assert.Equal(t, "warning", checks.Status, "never clear")
	assert.Zero(t, checks.InteractionsFound)
	require.Len(t, checks.Warnings, 2)
	for i, want := range []struct{ kind, entry string }{{"medication", "99999999"}, {"allergy", "codeine"}} {
		w := checks.Warnings[i]
		assert.Equal(t, "unidentified", w.Type)
		assert.Equal(t, want.kind, w.EntryKind)
		assert.Equal(t, want.entry, w.Entry)
		assert.Equal(t, "moderate", w.Severity)
		assert.Contains(t, w.Mechanism, `"`+want.entry+`"`)
		assert.Empty(t, w.NDCCode)
	}
	require.NotNil(t, res.ZKProof, "a decision that needs review is still proven")
	stored, err := f.v1.Prescription(t.Context(), testOwner, res.PrescriptionID)
	require.NoError(t, err)
	assert.Equal(t, res, stored)
	for _, e := range f.sink.events {
		b, err := json.Marshal(e)
		require.NoError(t, err)
		assert.NotContains(t, string(b), "99999999", "the entry is in no event")
		assert.NotContains(t, string(b), "codeine", "the entry is in no event")
	}

	// A blocking finding still rejects, and the entry is still warned of.
	res = validate("PT-U", med("12345678901", "ibuprofen"))
	assert.Equal(t, healthagents.StatusRejected, res.ValidationStatus)
	assert.Equal(t, []string{healthagents.V1InteractionFound, healthagents.V1Unidentified}, res.Codes)

	// A combination product as a line is refused, not half checked.
	_, err = f.v1.ValidatePrescription(t.Context(), testOwner, healthagents.V1PrescriptionRequest{PatientID: "PT-U", ProviderNPI: providerNPI,
		Medications: []healthagents.V1Medication{med("12345678901", "acetaminophen / hydrocodone")}})
	assert.Equal(t, healthagents.CodeInvalid, healthagents.ErrorCode(err))
	assert.Contains(t, healthagents.ErrorDetail(err), "combination product")
}

// TestRootPrescriptionUnidentified: the root family answers 200 with valid
// false and a reason naming the entry; an interaction is still the spec's
// 422.
func TestRootPrescriptionUnidentified(t *testing.T) {
	t.Parallel()
	sink := &recordingSink{}
	svc, kr := newService(t, healthagents.WithAttestor(stubAttestor{}), healthagents.WithEvents(sink))
	seal := func(r *record.Record) *healthagents.PatientData {
		b, err := r.Marshal()
		require.NoError(t, err)
		env, err := cipher.Seal(r.PatientID, b, kr)
		require.NoError(t, err)
		return &env
	}
	res, err := svc.ValidatePrescription(t.Context(), seal(patient("PT-1", []string{"Tylenol PM"}, nil)), "6809")
	require.NoError(t, err)
	assert.False(t, res.Valid)
	assert.Equal(t, `Review required: the patient's medication "Tylenol PM" could not be identified, so interactions and contraindications with it were not checked`, res.Reason)
	require.NotNil(t, res.Proof)
	require.Len(t, sink.events, 1)
	assert.Equal(t, false, sink.events[0].Data["valid"])
	assert.NotContains(t, fmt.Sprint(sink.events[0].Data), "Tylenol")

	res, err = svc.ValidatePrescription(t.Context(), seal(patient("PT-1", []string{"6809"}, nil)), "6809")
	require.NoError(t, err)
	assert.True(t, res.Valid)
	assert.Empty(t, res.Reason)
	b, err := json.Marshal(res)
	require.NoError(t, err)
	assert.NotContains(t, string(b), `"reason"`, "no reason key on a valid answer")

	_, err = svc.ValidatePrescription(t.Context(), seal(patient("PT-1", []string{"Coumadin 5 mg tablet", "Tylenol PM"}, nil)), "5640")
	assert.Equal(t, healthagents.CodeUnprocessable, healthagents.ErrorCode(err))
	assert.Equal(t, "Prescription validation failed: Drug interaction detected with warfarin", healthagents.ErrorDetail(err))
}

// TestNoPrescriptionWithAnUnidentifiedMedicationIsApproved is the issue's
// property: whatever else the record holds and whatever is prescribed, a
// patient with a medication (or allergy) the service cannot identify never
// gets an approved prescription.
func TestNoPrescriptionWithAnUnidentifiedMedicationIsApproved(t *testing.T) {
	t.Parallel()
	f := newV1(t, healthagents.WithAttestor(stubAttestor{}))
	agent, err := prescription.New()
	require.NoError(t, err)
	drugs := agent.Drugs()
	known := func(r *rand.Rand) string {
		d := drugs[r.IntN(len(drugs))]
		return [...]string{d.RxCUI, d.Name, d.Name + " 10 MG Oral Tablet", strings.ToUpper(d.Name)}[r.IntN(4)]
	}
	unknown := []string{"99999999", "Tylenol PM", "{21 (ethinyl estradiol 0.035 MG / norethindrone 1 MG Oral Tablet) } Pack", "12345-6789-0", "zz"}
	checked := 0
	prop := func(seed uint64) bool {
		r := rand.New(rand.NewPCG(seed, 25))
		rec := patient(fmt.Sprintf("PT-%d", seed%1000), nil, nil)
		for range r.IntN(5) {
			rec.Medications = append(rec.Medications, known(r))
		}
		if bad := unknown[r.IntN(len(unknown))]; r.IntN(3) == 0 {
			rec.Allergies = append(rec.Allergies, bad)
		} else {
			rec.Medications = append(rec.Medications, bad)
		}
		r.Shuffle(len(rec.Medications), func(i, j int) { rec.Medications[i], rec.Medications[j] = rec.Medications[j], rec.Medications[i] })
		f.register(t, rec)
		var lines []healthagents.V1Medication
		for i := range 1 + r.IntN(3) {
			lines = append(lines, med(fmt.Sprintf("9%010d", i), drugs[r.IntN(len(drugs))].Name))
		}
		res, err := f.v1.ValidatePrescription(t.Context(), testOwner, healthagents.V1PrescriptionRequest{PatientID: rec.PatientID, ProviderNPI: providerNPI, Medications: lines})
		if err != nil {
			return true // refused: not approved either
		}
		checked++
		return res.ValidationStatus != healthagents.StatusApproved && res.Checks.DrugInteractions.Status != "clear"
	}
	require.NoError(t, quick.Check(prop, &quick.Config{MaxCount: 200}))
	assert.Greater(t, checked, 150, "most generated prescriptions were answered, not refused")
}
