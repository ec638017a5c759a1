package zkp

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/test"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/record"
)

func day(s string) time.Time {
	t, err := time.Parse(record.DateLayout, s)
	if err != nil {
		panic(err)
	}
	return t
}

func sampleCoverage() *record.Coverage {
	return &record.Coverage{
		PayerID: "60054", PlanID: "PPO-GOLD", MemberID: "W123456789",
		Status: record.StatusActive, Start: "2026-01-01", End: "2026-12-31",
		ExcludedProcedures: []string{"PROC005", "abc12"},
		CoverageOverrides:  map[string]int{"PROC002": 70, "70551": 95, "PROC004": 0},
	}
}

func withStatus(c *record.Coverage, status string) *record.Coverage {
	cc := *c
	cc.Status = status
	return &cc
}

func withOverrides(o map[string]int) *record.Coverage {
	c := sampleCoverage()
	c.CoverageOverrides = o
	return c
}

func newTestProver(t *testing.T, opts ...ProverOption) *Prover {
	t.Helper()
	p, err := NewProver(testSys, opts...)
	require.NoError(t, err)
	return p
}

func newTestVerifier(t *testing.T) *Verifier {
	t.Helper()
	v, err := NewVerifier(testSys)
	require.NoError(t, err)
	return v
}

// eligibilityCases lists decisions with their outputs written out by hand
// from the rules, independently of the package's own rule code.
var eligibilityCases = []struct {
	name     string
	cov      *record.Coverage
	class    int
	code     string
	date     string
	pct      int
	preAuth  bool
	eligible bool
}{
	{"ok/base coverage", sampleCoverage(), 1, "71045", "2026-06-01", 80, true, true},
	{"ok/class override", sampleCoverage(), 2, "72148", "2026-06-01", 70, false, true},
	{"ok/code override beats class override", sampleCoverage(), 2, "70551", "2026-06-01", 95, false, true},
	{"ok/override of zero percent", sampleCoverage(), 4, "93000", "2026-06-01", 0, false, true},
	{"ok/base coverage 100", sampleCoverage(), 3, "27447", "2026-06-01", 100, true, true},
	{"ok/first day of window", sampleCoverage(), 1, "71045", "2026-01-01", 80, true, true},
	{"ok/last day of window", sampleCoverage(), 1, "71045", "2026-12-31", 80, true, true},
	{"ineligible/day before window", sampleCoverage(), 1, "71045", "2025-12-31", 0, true, false},
	{"ineligible/day after window", sampleCoverage(), 1, "71045", "2027-01-01", 0, true, false},
	{"ineligible/class excluded", sampleCoverage(), 5, "43239", "2026-06-01", 0, true, false},
	{"ineligible/code excluded case-insensitively", sampleCoverage(), 3, "ABC12", "2026-06-01", 0, true, false},
	{"ok/override key matched case-insensitively", withOverrides(map[string]int{"proc001": 50}), 1, "71045", "2026-06-01", 50, true, true},
	{"ok/exact override key beats folded one", withOverrides(map[string]int{"proc001": 50, "PROC001": 40}), 1, "71045", "2026-06-01", 40, true, true},
	{"ok/smallest folded key wins", withOverrides(map[string]int{"proc001": 50, "Proc001": 30}), 1, "71045", "2026-06-01", 30, true, true},
	{"ok/override key trimmed", withOverrides(map[string]int{" 71045 ": 33}), 1, "71045", "2026-06-01", 33, true, true},
	{"ok/requested code canonicalised", sampleCoverage(), 2, " 70551", "2026-06-01", 95, false, true},
	{"ineligible/inactive", withStatus(sampleCoverage(), record.StatusInactive), 1, "71045", "2026-06-01", 0, true, false},
	{"ineligible/cancelled", withStatus(sampleCoverage(), record.StatusCancelled), 2, "70551", "2026-06-01", 0, false, false},
}

func TestProveEligibility(t *testing.T) {
	t.Parallel()
	p, v := newTestProver(t), newTestVerifier(t)
	for _, tc := range eligibilityCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := EligibilityInput{
				Coverage: tc.cov, ClassIndex: tc.class, ClassCode: Classes()[tc.class-1].Code,
				ProcedureCode: tc.code, ServiceDate: day(tc.date),
				CoveragePct: tc.pct, PreAuth: tc.preAuth, Eligible: tc.eligible,
			}
			proof, err := p.ProveEligibility(t.Context(), in)
			require.NoError(t, err)
			require.NoError(t, v.Verify(t.Context(), proof))

			out, err := proof.Eligibility()
			require.NoError(t, err)
			d, err := DayNumber(day(tc.date))
			require.NoError(t, err)
			assert.Equal(t, EligibilityOutputs{ClassIndex: tc.class, ServiceDay: d, CoveragePct: tc.pct, PreAuth: tc.preAuth, Eligible: tc.eligible}, out)

			// Round trip through the API encoding.
			parsed, err := ParseProof(proof.Circuit, proof.ProofData(), proof.PublicInputs())
			require.NoError(t, err)
			require.NoError(t, v.Verify(t.Context(), parsed))
		})
	}
}

func TestProveEligibilityRejectsFalseClaims(t *testing.T) {
	t.Parallel()
	p := newTestProver(t)
	honest := EligibilityInput{Coverage: sampleCoverage(), ClassIndex: 2, ClassCode: "PROC002", ProcedureCode: "70551", ServiceDate: day("2026-06-01"), CoveragePct: 95, PreAuth: false, Eligible: true}
	for name, mutate := range map[string]func(*EligibilityInput){
		"pct": func(in *EligibilityInput) { in.CoveragePct = 70 },
		"pct when ineligible": func(in *EligibilityInput) {
			in.ServiceDate = day("2027-06-01")
			in.Eligible = false
		},
		"eligible":    func(in *EligibilityInput) { in.Eligible = false },
		"pre-auth":    func(in *EligibilityInput) { in.PreAuth = true },
		"class index": func(in *EligibilityInput) { in.ClassIndex, in.ClassCode = 3, "PROC003" },
		"class code":  func(in *EligibilityInput) { in.ClassCode = "PROC001" },
		"class range": func(in *EligibilityInput) { in.ClassIndex, in.ClassCode = 6, "" },
		"eligible on excluded code": func(in *EligibilityInput) {
			in.ProcedureCode = "Abc12"
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			in := honest
			mutate(&in)
			_, err := p.ProveEligibility(t.Context(), in)
			require.ErrorIs(t, err, ErrUnsatisfied)
		})
	}
}

func TestProveRecordBounds(t *testing.T) {
	t.Parallel()
	p := newTestProver(t)
	tooMany := sampleCoverage()
	tooMany.ExcludedProcedures = []string{"A", "B", "C", "D"}
	dupes := sampleCoverage()
	dupes.ExcludedProcedures = []string{"a", "A", "b", "c", "C"} // 3 distinct case-insensitively
	manyOverrides := sampleCoverage()
	manyOverrides.CoverageOverrides["X"] = 1
	foldedOverrides := sampleCoverage()
	foldedOverrides.CoverageOverrides["proc002"] = 1 // same canonical group as PROC002
	longCode := sampleCoverage()
	longCode.ExcludedProcedures = []string{"123456789", "A", "B", "C"}
	longCode.CoverageOverrides = map[string]int{"123456789": 5, "X": 1, "Y": 2, "Z": 3}
	old := sampleCoverage()
	old.Start = "1969-12-31"
	badDate := sampleCoverage()
	badDate.End = "2026-13-45"
	badPct := sampleCoverage()
	badPct.CoverageOverrides["PROC001"] = 101
	for _, tc := range []struct {
		name string
		cov  *record.Coverage
		code string
		want error
	}{
		{"fail/too many exclusions", tooMany, "71045", ErrRecordTooLarge},
		{"ok/duplicate exclusions fold together", dupes, "71045", nil},
		{"fail/too many overrides", manyOverrides, "71045", ErrRecordTooLarge},
		{"ok/overrides counted by canonical code", foldedOverrides, "71045", nil},
		{"ok/long codes cannot match and are left out", longCode, "71045", nil},
		{"fail/requested code too long", sampleCoverage(), "123456789", ErrRecordTooLarge},
		{"fail/empty requested code", sampleCoverage(), "", ErrRecordTooLarge},
		{"fail/date before 1970", old, "71045", ErrRecordTooLarge},
		{"fail/no coverage", nil, "71045", ErrRecordTooLarge},
		{"fail/bad date, value not echoed", badDate, "71045", record.ErrMalformed},
		{"fail/override out of range", badPct, "71045", record.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := p.ProveEligibility(t.Context(), EligibilityInput{Coverage: tc.cov, ClassIndex: 1, ProcedureCode: tc.code, ServiceDate: day("2026-06-01"), CoveragePct: 80, PreAuth: true, Eligible: true})
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.want)
			assert.NotContains(t, err.Error(), "2026-13-45")
		})
	}
}

func TestProvePrescription(t *testing.T) {
	t.Parallel()
	p, v := newTestProver(t), newTestVerifier(t)
	excl := sampleCoverage()
	excl.ExcludedProcedures = []string{"11289"}
	for _, tc := range []struct {
		name    string
		cov     *record.Coverage
		drug    string
		date    string
		covered bool
	}{
		{"ok/covered", sampleCoverage(), "11289", "2026-03-15", true},
		{"ok/drug excluded", excl, "11289", "2026-03-15", false},
		{"ok/inactive", withStatus(sampleCoverage(), record.StatusInactive), "11289", "2026-03-15", false},
		{"ok/after window", sampleCoverage(), "11289", "2027-03-15", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := PrescriptionInput{Coverage: tc.cov, DrugCode: tc.drug, ServiceDate: day(tc.date), Covered: tc.covered}
			proof, err := p.ProvePrescription(t.Context(), in)
			require.NoError(t, err)
			require.NoError(t, v.Verify(t.Context(), proof))
			covered, err := proof.Prescription()
			require.NoError(t, err)
			assert.Equal(t, tc.covered, covered)

			in.Covered = !in.Covered
			_, err = p.ProvePrescription(t.Context(), in)
			require.ErrorIs(t, err, ErrUnsatisfied)
		})
	}
}

// TestCircuitSoundness feeds the solver assignments that bypass the native
// checks of the prover: each must leave the circuit unsatisfied.
func TestCircuitSoundness(t *testing.T) {
	t.Parallel()
	var blinding, other fr.Element
	blinding.SetUint64(42)
	other.SetUint64(43)
	honest, _, err := eligibilityStatement(EligibilityInput{Coverage: sampleCoverage(), ClassIndex: 2, ProcedureCode: "72148", ServiceDate: day("2026-06-01"), CoveragePct: 70, Eligible: true}, blinding)
	require.NoError(t, err)
	require.NoError(t, isSolved(&EligibilityCircuit{}, honest, ecc.BN254.ScalarField()))

	classTwo := mustExact(t, "PROC002")
	otherRecord := sampleCoverage()
	otherRecord.ExcludedProcedures = []string{"PROC002"}
	foreign, _, err := eligibilityStatement(EligibilityInput{Coverage: otherRecord, ClassIndex: 2, ProcedureCode: "72148", ServiceDate: day("2026-06-01"), Eligible: false}, blinding)
	require.NoError(t, err)
	otherBlinding, _, err := eligibilityStatement(EligibilityInput{Coverage: sampleCoverage(), ClassIndex: 2, ProcedureCode: "72148", ServiceDate: day("2026-06-01"), CoveragePct: 70, Eligible: true}, other)
	require.NoError(t, err)

	for name, mutate := range map[string]func(c *EligibilityCircuit){
		"fail/eligible flag":             func(c *EligibilityCircuit) { c.Eligible = 0 },
		"fail/eligible not boolean":      func(c *EligibilityCircuit) { c.Eligible = 2 },
		"fail/coverage percent":          func(c *EligibilityCircuit) { c.CoveragePct = 60 },
		"fail/pre-auth flag":             func(c *EligibilityCircuit) { c.PreAuth = 1 },
		"fail/class index":               func(c *EligibilityCircuit) { c.ClassIndex = 1 },
		"fail/class index out of range":  func(c *EligibilityCircuit) { c.ClassIndex = 0 },
		"fail/service day out of window": func(c *EligibilityCircuit) { c.ServiceDay = mustDay(t, "2027-02-01") },
		"fail/record does not open commitment (other record)": func(c *EligibilityCircuit) {
			c.Coverage = foreign.Coverage // prover keeps the honest record's commitment
		},
		"fail/record does not open commitment (other blinding)": func(c *EligibilityCircuit) {
			c.Commitment = otherBlinding.Commitment
		},
		"fail/exclusion dropped from witness": func(c *EligibilityCircuit) { c.Coverage.Excluded[0] = 0 },
		"fail/window widened in witness":      func(c *EligibilityCircuit) { c.Coverage.End = mustDay(t, "2027-12-31") },
		"fail/override percent above 100 (commitment recomputed)": func(c *EligibilityCircuit) {
			cw, err := encodeCoverage(sampleCoverage(), blinding)
			require.NoError(t, err)
			for i := range cw.overrideKey {
				if cw.overrideKey[i].Equal(&classTwo) {
					cw.overridePct[i] = 120
				}
			}
			c.Coverage, c.Commitment, c.CoveragePct = cw.assign(), cw.commitment(), 120
		},
		"fail/start beyond DayBits": func(c *EligibilityCircuit) {
			c.Coverage.Start = new(big.Int).Lsh(big.NewInt(1), DayBits)
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a := *honest
			mutate(&a)
			require.Error(t, isSolved(&EligibilityCircuit{}, &a, ecc.BN254.ScalarField()))
		})
	}

	// The same for the prescription circuit.
	ph, _, err := prescriptionStatement(PrescriptionInput{Coverage: sampleCoverage(), DrugCode: "11289", ServiceDate: day("2026-06-01"), Covered: true}, blinding)
	require.NoError(t, err)
	require.NoError(t, isSolved(&PrescriptionCircuit{}, ph, ecc.BN254.ScalarField()))
	for name, mutate := range map[string]func(c *PrescriptionCircuit){
		"fail/covered flag":    func(c *PrescriptionCircuit) { c.Covered = 0 },
		"fail/excluded drug":   func(c *PrescriptionCircuit) { c.Drug = mustCode(t, "PROC005") },
		"fail/day after end":   func(c *PrescriptionCircuit) { c.ServiceDay = mustDay(t, "2027-01-01") },
		"fail/other blinding":  func(c *PrescriptionCircuit) { c.Commitment = otherBlinding.Commitment },
		"fail/inactive record": func(c *PrescriptionCircuit) { c.Coverage.Active = 0 },
	} {
		t.Run("prescription/"+name, func(t *testing.T) {
			t.Parallel()
			a := *ph
			mutate(&a)
			require.Error(t, isSolved(&PrescriptionCircuit{}, &a, ecc.BN254.ScalarField()))
		})
	}
}

// isSolvedMu serialises gnark's test.IsSolved, which writes package-level
// state (the race detector reports concurrent calls).
var isSolvedMu sync.Mutex

func isSolved(circuit, assignment frontend.Circuit, field *big.Int) error {
	isSolvedMu.Lock()
	defer isSolvedMu.Unlock()
	return test.IsSolved(circuit, assignment, field)
}

func mustDay(t *testing.T, s string) uint64 {
	t.Helper()
	d, err := DayNumber(day(s))
	require.NoError(t, err)
	return d
}

func mustCode(t *testing.T, s string) fr.Element {
	t.Helper()
	e, err := EncodeCodeFolded(s)
	require.NoError(t, err)
	return e
}

func TestVerifierRejectsTampering(t *testing.T) {
	t.Parallel()
	p, v := newTestProver(t), newTestVerifier(t)
	ctx := t.Context()
	proof, err := p.ProveEligibility(ctx, EligibilityInput{Coverage: sampleCoverage(), ClassIndex: 2, ProcedureCode: "72148", ServiceDate: day("2026-06-01"), CoveragePct: 70, Eligible: true})
	require.NoError(t, err)
	require.NoError(t, v.Verify(ctx, proof))
	ineligible, err := p.ProveEligibility(ctx, EligibilityInput{Coverage: sampleCoverage(), ClassIndex: 5, ProcedureCode: "43239", ServiceDate: day("2026-06-01"), CoveragePct: 0, PreAuth: true, Eligible: false})
	require.NoError(t, err)
	otherRecord, err := p.ProveEligibility(ctx, EligibilityInput{Coverage: withStatus(sampleCoverage(), record.StatusInactive), ClassIndex: 2, ProcedureCode: "72148", ServiceDate: day("2026-06-01"), CoveragePct: 0, Eligible: false})
	require.NoError(t, err)

	set := func(pr *Proof, i int, v uint64) *Proof {
		c := *pr
		c.Public = append([]fr.Element(nil), pr.Public...)
		c.Public[i].SetUint64(v)
		return &c
	}
	cases := map[string]*Proof{
		"commitment of another record": func() *Proof {
			c := *proof
			c.Public = append([]fr.Element(nil), proof.Public...)
			c.Public[0] = otherRecord.Public[0]
			return &c
		}(),
		"class index":                    set(proof, 1, 1),
		"procedure":                      set(proof, 2, 7),
		"service date":                   set(proof, 4, mustDay(t, "2026-06-02")),
		"coverage percent":               set(proof, 5, 95),
		"pre-auth flag":                  set(proof, 6, 1),
		"eligible flag":                  set(proof, 7, 0),
		"ineligible proof made eligible": set(set(ineligible, 7, 1), 5, 85),
		"public input dropped": func() *Proof {
			c := *proof
			c.Public = proof.Public[:7]
			return &c
		}(),
		"proof for another circuit": func() *Proof {
			c := *proof
			c.Circuit = CircuitPrescription
			return &c
		}(),
	}
	for name, forged := range cases {
		t.Run("fail/"+name, func(t *testing.T) {
			t.Parallel()
			require.ErrorIs(t, v.Verify(ctx, forged), ErrInvalidProof)
		})
	}

	// Every tampered byte of the encoded proof is rejected, by the decoder
	// (not a point, not in the subgroup) or by the pairing check.
	raw := proof.SolidityProof()
	for i := 0; i < len(raw); i += 7 {
		tampered := bytes.Clone(raw)
		tampered[i] ^= 0x01
		forged, err := ParseProof(CircuitEligibility, "0x"+hexString(tampered), proof.PublicInputs())
		if err == nil {
			err = v.Verify(ctx, forged)
		}
		require.ErrorIs(t, err, ErrInvalidProof, "byte %d", i)
	}
}

func TestVerifyUnknownCircuit(t *testing.T) {
	t.Parallel()
	v := newTestVerifier(t)
	err := v.Verify(t.Context(), &Proof{Circuit: "nope", Groth16: nil})
	require.ErrorIs(t, err, ErrInvalidProof)
	_, err = ParseProof("nope", "", nil)
	require.ErrorIs(t, err, ErrUnknownCircuit)
}

func TestPublicInputsOrder(t *testing.T) {
	t.Parallel()
	p := newTestProver(t)
	var b fr.Element
	b.SetUint64(99)
	proof, err := p.ProveEligibility(t.Context(), EligibilityInput{Coverage: sampleCoverage(), ClassIndex: 2, ProcedureCode: "70551", ServiceDate: day("2026-06-01"), CoveragePct: 95, Eligible: true, Blinding: &b})
	require.NoError(t, err)

	cw, err := encodeCoverage(sampleCoverage(), b)
	require.NoError(t, err)
	exact, folded := mustExact(t, "70551"), mustCode(t, "70551")
	want := []fr.Element{cw.commitment(), fr.NewElement(2), exact, folded, fr.NewElement(mustDay(t, "2026-06-01")), fr.NewElement(95), fr.NewElement(0), fr.NewElement(1)}
	assert.Equal(t, want, proof.Public)
	assert.Equal(t, b, proof.Blinding)

	pi := proof.PublicInputs()
	require.Len(t, pi, 8)
	assert.Equal(t, "0x0000000000000000000000000000000000000000000000000000000000000002", pi[1])
	assert.Len(t, proof.ProofData(), 2+2*ProofSize)

	// The same record and blinding give the same commitment; another
	// blinding hides it.
	again, err := p.ProvePrescription(t.Context(), PrescriptionInput{Coverage: sampleCoverage(), DrugCode: "11289", ServiceDate: day("2026-06-01"), Covered: true, Blinding: &b})
	require.NoError(t, err)
	assert.Equal(t, proof.Commitment(), again.Commitment())
	fresh, err := p.ProvePrescription(t.Context(), PrescriptionInput{Coverage: sampleCoverage(), DrugCode: "11289", ServiceDate: day("2026-06-01"), Covered: true})
	require.NoError(t, err)
	assert.NotEqual(t, proof.Commitment(), fresh.Commitment())
}

func mustExact(t *testing.T, s string) fr.Element {
	t.Helper()
	e, err := EncodeCode(s)
	require.NoError(t, err)
	return e
}

func TestNoPedersenCommitments(t *testing.T) {
	t.Parallel()
	for _, name := range CircuitNames() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ccs, err := CompileCircuit(name)
			require.NoError(t, err)
			assert.Empty(t, commitmentsOf(ccs), "BSB22 commitments in the constraint system")
			ck, err := testSys.circuit(name)
			require.NoError(t, err)
			assert.Empty(t, ck.vk.CommitmentKeys)
			assert.Empty(t, ck.vk.PublicAndCommitmentCommitted)
			assert.Empty(t, ck.pk.CommitmentKeys)
		})
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	in := EligibilityInput{Coverage: sampleCoverage(), ClassIndex: 1, ProcedureCode: "71045", ServiceDate: day("2026-06-01"), CoveragePct: 80, PreAuth: true, Eligible: true}
	t.Run("fail/tiny deadline", func(t *testing.T) {
		t.Parallel()
		p := newTestProver(t, WithTimeout(time.Nanosecond))
		_, err := p.ProveEligibility(t.Context(), in)
		require.ErrorIs(t, err, ErrTimeout)
		assert.Equal(t, "ZK proof generation timed out", ErrTimeout.Error())
	})
	t.Run("fail/no free slot before the deadline", func(t *testing.T) {
		t.Parallel()
		p := newTestProver(t, WithMaxConcurrent(1), WithTimeout(20*time.Millisecond))
		p.sem <- struct{}{} // an abandoned proof still running
		_, err := p.ProveEligibility(t.Context(), in)
		require.ErrorIs(t, err, ErrTimeout)
	})
	t.Run("fail/cancelled is not a timeout", func(t *testing.T) {
		t.Parallel()
		p := newTestProver(t)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := p.ProveEligibility(ctx, in)
		require.ErrorIs(t, err, context.Canceled)
		require.False(t, errors.Is(err, ErrTimeout))
	})
}

// deadlineCtx is a context whose deadline passes when the test says so, not
// after some wall time: its Err is context.DeadlineExceeded once expired.
type deadlineCtx struct {
	context.Context // Background: no values, no deadline reported
	done            chan struct{}
	once            sync.Once
}

func manualDeadline() (context.Context, func()) {
	c := &deadlineCtx{Context: context.Background(), done: make(chan struct{})}
	return c, func() { c.once.Do(func() { close(c.done) }) }
}

func (c *deadlineCtx) Done() <-chan struct{} { return c.done }

func (c *deadlineCtx) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// TestTimeoutWhileProving lets the deadline pass while a proof is being
// computed (the prover's hook holds the proof until then): the call returns
// ErrTimeout at once, the abandoned proof keeps its concurrency slot until it
// finishes, and then the slot is free again.
func TestTimeoutWhileProving(t *testing.T) {
	t.Parallel()
	p := newTestProver(t, WithMaxConcurrent(1))
	entered, release := make(chan struct{}), make(chan struct{})
	var hookCtxErr error
	p.proving = func(ctx context.Context) {
		close(entered)
		<-ctx.Done()
		hookCtxErr = ctx.Err()
		<-release
	}
	ctx, expire := manualDeadline()
	errc := make(chan error, 1)
	go func() {
		_, err := p.ProveEligibility(ctx, eligibleInput())
		errc <- err
	}()
	<-entered // the proof is running
	expire()
	err := <-errc
	require.ErrorIs(t, err, ErrTimeout)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, "ZK proof generation timed out: context deadline exceeded", err.Error())
	assert.Len(t, p.sem, 1, "the abandoned proof still holds its slot")

	close(release) // the abandoned proof runs to its end and frees the slot
	p.proving = nil
	_, err = p.ProveEligibility(t.Context(), eligibleInput())
	require.NoError(t, err)
	assert.ErrorIs(t, hookCtxErr, context.DeadlineExceeded)
}

func hexString(b []byte) string { return hex.EncodeToString(b) }

// The prover's last line of defence: an assignment that slipped past the
// native checks (here, a record that does not open the commitment) is
// refused by gnark's R1CS solver, reported as ErrUnsatisfied.
func TestProverSolverBackstop(t *testing.T) {
	t.Parallel()
	p := newTestProver(t)
	var b fr.Element
	b.SetUint64(11)
	a, _, err := eligibilityStatement(eligibleInput(), b)
	require.NoError(t, err)
	a.Coverage.Blinding = fr.NewElement(12) // no longer opens a.Commitment
	_, err = p.prove(t.Context(), CircuitEligibility, a, b)
	require.ErrorIs(t, err, ErrUnsatisfied)

	a, _, err = eligibilityStatement(eligibleInput(), b)
	require.NoError(t, err)
	a.CoveragePct = 71
	_, err = p.prove(t.Context(), CircuitEligibility, a, b)
	require.ErrorIs(t, err, ErrUnsatisfied)
}
