package healthagents_test

import (
	"context"
	"errors"
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

// AttestPrescription states coverage as the real statement does: every
// drug covered when the plan is active on date and excludes none of them.
func (s stubAttestor) AttestPrescription(_ context.Context, rec *record.Record, ds []prescription.Decision, date time.Time) (*healthagents.Attestation, error) {
	if s.err != nil {
		return nil, s.err
	}
	c := rec.Coverage
	day := date.UTC().Format(time.DateOnly)
	covered := c.Status == record.StatusActive && c.Start <= day && day <= c.End
	for _, d := range ds {
		covered = covered && !c.Excludes(d.Drug.RxCUI)
	}
	return &healthagents.Attestation{ProofData: "0x03", PublicInputs: []string{"0x04"}, TxHash: "0xp1", Verified: true, Covered: covered}, nil
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
	svc    *healthagents.Service
	kr     *cipher.Keyring
	sink   *recordingSink
	oracle *memOracle
}

func newV1(t *testing.T, opts ...healthagents.Option) *v1Fixture {
	t.Helper()
	f := &v1Fixture{sink: &recordingSink{}, oracle: &memOracle{}}
	svc, kr := newService(t, append([]healthagents.Option{healthagents.WithEvents(f.sink)}, opts...)...)
	f.kr, f.svc = kr, svc
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

func TestV1Code(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "", healthagents.V1Code(nil))
	assert.Equal(t, "", healthagents.V1Code(errors.New("NO_INSURANCE: x")))
	assert.Equal(t, "", healthagents.V1Code(healthagents.Errorf(healthagents.CodeInvalid, "Validation error: x")))
	assert.Equal(t, "NO_INSURANCE", healthagents.V1Code(healthagents.Errorf(healthagents.CodeUnprocessable, "NO_INSURANCE: x")))
}
