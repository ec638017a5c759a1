package healthagents_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/eligibility"
	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/trust"
	"github.com/healthagents/healthagents/x12"
)

// memIndex is a MemberIndex over memPatients for these unit tests (the
// store's is tested in package store and end to end in server): a key
// finds a patient while its envelope is the registered one.
type memIndex struct {
	patients *memPatients
	mu       sync.Mutex
	rows     map[string][]memKey // by owner + key text
}

type memKey struct{ patientID, dataHash, kind string }

func (m *memIndex) IndexMember(_ context.Context, owner, patientID, dataHash string, keys []healthagents.MemberKey) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rows == nil {
		m.rows = map[string][]memKey{}
	}
	for k, rs := range m.rows {
		var kept []memKey
		for _, r := range rs {
			if !(strings.HasPrefix(k, owner+"\x00") && r.patientID == patientID) {
				kept = append(kept, r)
			}
		}
		m.rows[k] = kept
	}
	for _, k := range keys {
		m.rows[owner+"\x00"+k.Text] = append(m.rows[owner+"\x00"+k.Text], memKey{patientID, dataHash, k.Kind})
	}
	return nil
}

func (m *memIndex) FindMembers(ctx context.Context, owner string, keys []healthagents.MemberKey) ([]healthagents.MemberMatch, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	live := func(r memKey) bool {
		env, err := m.patients.Patient(ctx, owner, r.patientID)
		return err == nil && env.DataHash == r.dataHash
	}
	byID := map[string]*healthagents.MemberMatch{}
	var order []string
	for _, k := range keys {
		for _, r := range m.rows[owner+"\x00"+k.Text] {
			if !live(r) {
				continue
			}
			if byID[r.patientID] == nil {
				byID[r.patientID] = &healthagents.MemberMatch{PatientID: r.patientID}
				order = append(order, r.patientID)
			}
			byID[r.patientID].Matched = append(byID[r.patientID].Matched, r.kind)
		}
	}
	for k, rs := range m.rows {
		if !strings.HasPrefix(k, owner+"\x00") {
			continue
		}
		for _, r := range rs {
			if mm := byID[r.patientID]; mm != nil && live(r) && !containsString(mm.Indexed, r.kind) {
				mm.Indexed = append(mm.Indexed, r.kind)
			}
		}
	}
	var out []healthagents.MemberMatch
	for _, id := range order {
		out = append(out, *byID[id])
	}
	return out, nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// countingAttestor counts the decisions proven.
type countingAttestor struct {
	stubAttestor
	mu sync.Mutex
	n  int
}

func (c *countingAttestor) AttestEligibility(ctx context.Context, rec *record.Record, d eligibility.Decision) (*healthagents.Attestation, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return c.stubAttestor.AttestEligibility(ctx, rec, d)
}

func (c *countingAttestor) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

type x12Fixture struct {
	*v1Fixture
	att *countingAttestor
}

func newX12(t *testing.T, att *countingAttestor) *x12Fixture {
	t.Helper()
	f := newX12Attested(t, att)
	f.att = att
	return f
}

// newX12Attested is newX12 with any attestor (att is then nil).
func newX12Attested(t *testing.T, att healthagents.Attestor) *x12Fixture {
	t.Helper()
	f := &v1Fixture{sink: &recordingSink{}, oracle: &memOracle{}}
	svc, kr := newService(t, healthagents.WithEvents(f.sink), healthagents.WithAttestor(att))
	f.kr = kr
	pats := &memPatients{}
	var err error
	f.v1, err = healthagents.NewV1(svc, pats, &memPrescriptions{}, healthagents.WithMemberIndex(&memIndex{patients: pats}))
	require.NoError(t, err)
	return &x12Fixture{v1Fixture: f}
}

// member registers a patient of payer 60054 with a name and birth date.
func (f *x12Fixture) member(t *testing.T, id, memberID, family, given, birth string, mut func(*record.Record)) {
	t.Helper()
	r := patient(id, nil, nil)
	r.Coverage.PayerID, r.Coverage.MemberID = "60054", memberID
	if family != "" {
		r.Name = &record.Name{Family: family, Given: given}
	}
	r.BirthDate = birth
	if mut != nil {
		mut(r)
	}
	f.register(t, r)
}

func (f *x12Fixture) ask(t *testing.T, in string, opts healthagents.X12Options) (*healthagents.X12Answer, map[string]bool, string) {
	t.Helper()
	ans, err := f.v1.EligibilityX12(t.Context(), testOwner, []byte(in), opts)
	require.NoError(t, err)
	segs, err := x12.Split(ans.Body)
	require.NoError(t, err)
	lines := map[string]bool{}
	var all []string
	for _, s := range segs {
		l := strings.Join(s, "*")
		lines[l] = true
		all = append(all, l)
	}
	return ans, lines, strings.Join(all, "\n")
}

// request270 wraps subscriber loops (each starting with its HL*n*2*22)
// in one 270 to payer 60054 from NPI 1234567893.
func request270(subscribers ...string) string {
	body := []string{"BHT*0022*13*REQ-77*20261121*1200", "HL*1**20*1", "NM1*PR*2*ACME HEALTH*****PI*60054",
		"HL*2*1*21*1", "NM1*1P*2*CLINIC*****XX*" + providerNPI}
	for _, s := range subscribers {
		body = append(body, strings.Split(s, "~")...)
	}
	var b strings.Builder
	b.WriteString("ISA*00*          *00*          *ZZ*CLEARINGHOUSE  *ZZ*HEALTHAGENTS   *261121*1200*^*00501*000000077*0*T*:~")
	b.WriteString("GS*HS*CLEARINGHOUSE*HEALTHAGENTS*20261121*1200*77*X*005010X279A1~ST*270*0001*005010X279A1~")
	for _, s := range body {
		b.WriteString(s + "~")
	}
	fmt.Fprintf(&b, "SE*%d*0001~GE*1*77~IEA*1*000000077~", len(body)+2)
	return b.String()
}

func TestEligibilityX12(t *testing.T) {
	t.Parallel()
	f := newX12(t, &countingAttestor{})
	f.member(t, "PT-X1", "W123456789", "Doe", "Jane", "1968-04-02", nil)
	in := request270(
		"HL*3*2*22*0~TRN*1*TRACE-1*9CLEARHOUS~NM1*IL*1*DOE*JANE****MI*W123456789~DMG*D8*19680402~DTP*291*D8*20261121~EQ*4~EQ**HC:70551~EQ*2",
		"HL*4*2*22*0~TRN*1*TRACE-2*9CLEARHOUS~NM1*IL*1*ROE*RICHARD****MI*W000000000~DMG*D8*19700101~EQ*4~EQ*5~EQ*62",
	)
	ans, lines, all := f.ask(t, in, healthagents.X12Options{})
	assert.Equal(t, healthagents.X12Kind271, ans.Kind)
	for _, want := range []string{
		"BHT*0022*11*REQ-77*20261121*1200",
		"TRN*2*TRACE-1*9CLEARHOUS", "NM1*IL*1******MI*W123456789", "EB*1*IND*30",
		"EB*1*IND*4********N**ZZ:PROC002", "EB*A*IND*4*****0.4*****ZZ:PROC002",
		"EB*1*IND*********Y**HC:70551", "EB*A*IND******0.2*****HC:70551",
		"EB*I*IND*2********Y**ZZ:PROC005", "MSG*DECISION PROOF TRANSACTION 0xe1", "EB*C*IND*30***29*0",
		"TRN*2*TRACE-2*9CLEARHOUS", "NM1*IL*1******MI*W000000000", "AAA*Y**75*C",
	} {
		assert.True(t, lines[want], "no %s in\n%s", want, all)
	}
	assert.Equal(t, 3, f.att.count(), "three decisions, each proven")
	assert.Equal(t, 3, f.sink.count(healthagents.EventEligibilityVerified), "each emitted as the JSON route does")
	require.Len(t, ans.Accessed, 1)
	assert.Equal(t, healthagents.X12Access{PatientID: "PT-X1"}, ans.Accessed[0])
	assert.NotContains(t, all, "DOE")
	assert.NotContains(t, all, "19680402", "names and birth dates are never written back")
}

// TestEligibilityX12Members: who is the subscriber.
func TestEligibilityX12Members(t *testing.T) {
	t.Parallel()
	f := newX12(t, &countingAttestor{})
	f.member(t, "PT-A", "M-1", "Müller", "Zoë", "1980-01-01", nil)
	f.member(t, "PT-B", "M-2", "", "", "1990-02-02", nil)         // no name on record
	f.member(t, "PT-T1", "M-3", "Twin", "Ann", "2001-03-03", nil) // twins on one member id
	f.member(t, "PT-T2", "M-3", "Twin", "Bob", "2001-03-03", nil)
	f.member(t, "PT-N", "M-4", "Nopayer", "Nina", "1975-05-05", func(r *record.Record) { r.Coverage.PayerID = "" })
	f.member(t, "PT-I", "M-5", "Lapsed", "Ian", "1960-06-06", func(r *record.Record) { r.Coverage.Status = "inactive" })
	tests := []struct {
		name, nm1, dmg string
		want           string
	}{
		{"ok/name folded, no birth date", "NM1*IL*1*MULLER*ZOE****MI*M-1", "", "EB*1*IND*4"},
		{"ok/birth date only", "NM1*IL*1******MI*M-1", "DMG*D8*19800101", "EB*1*IND*4"},
		{"ok/name the record lacks, birth date matches", "NM1*IL*1*BEE*BEA****MI*M-2", "DMG*D8*19900202", "EB*1*IND*4"},
		{"fail/member id only", "NM1*IL*1******MI*M-1", "", "AAA*N**73*C"},
		{"fail/last name only", "NM1*IL*1*MULLER*****MI*M-1", "", "AAA*N**73*C"},
		{"fail/birth date contradicts", "NM1*IL*1*MULLER*ZOE****MI*M-1", "DMG*D8*19800102", "AAA*Y**71*C"},
		{"fail/name contradicts", "NM1*IL*1*MILLER*ZOE****MI*M-1", "DMG*D8*19800101", "AAA*Y**73*C"},
		{"fail/another member id", "NM1*IL*1*MULLER*ZOE****MI*M-9", "DMG*D8*19800101", "AAA*Y**75*C"},
		{"fail/no member id", "NM1*IL*1*MULLER*ZOE", "DMG*D8*19800101", "AAA*N**72*C"},
		{"fail/two patients", "NM1*IL*1******MI*M-3", "DMG*D8*20010303", "AAA*Y**76*C"},
		{"ok/the twin by name", "NM1*IL*1*TWIN*BOB****MI*M-3", "DMG*D8*20010303", "EB*1*IND*4"},
		{"fail/record without payer is not indexed", "NM1*IL*1*NOPAYER*NINA****MI*M-4", "DMG*D8*19750505", "AAA*Y**75*C"},
		{"ok/inactive coverage", "NM1*IL*1*LAPSED*IAN****MI*M-5", "DMG*D8*19600606", "EB*6*IND*30"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sub := "HL*3*2*22*0~TRN*1*T*9CLEARHOUS~" + tc.nm1
			if tc.dmg != "" {
				sub += "~" + tc.dmg
			}
			_, _, all := f.ask(t, request270(sub+"~EQ*4"), healthagents.X12Options{})
			assert.Contains(t, all, "\n"+tc.want, "no %s in\n%s", tc.want, all)
		})
	}
	// Another owner's patients are not found.
	ans, err := f.v1.EligibilityX12(t.Context(), "org:other", []byte(request270("HL*3*2*22*0~NM1*IL*1*MULLER*ZOE****MI*M-1~EQ*4")), healthagents.X12Options{})
	require.NoError(t, err)
	assert.Contains(t, string(ans.Body), "AAA*Y**75*C")
}

// TestEligibilityX12Questions: dates, providers, service types, procedure
// qualifiers, plan coverage, dependents, limits and failures.
func TestEligibilityX12Questions(t *testing.T) {
	t.Parallel()
	f := newX12(t, &countingAttestor{})
	f.member(t, "PT-Q", "M-Q", "Quest", "Quinn", "1985-08-08", nil)
	f.member(t, "PT-D", "M-Q", "Quest", "Dora", "2015-09-09", nil) // a dependent on the same member id
	sub := "HL*3*2*22*0~NM1*IL*1*QUEST*QUINN****MI*M-Q~DMG*D8*19850808"
	tests := []struct {
		name, in string
		want     []string
		absent   []string
	}{
		{"plan coverage asks every class", request270(sub + "~EQ*30"), []string{"EB*1*IND*30", "EB*1*IND*62********Y**ZZ:PROC001",
			"EB*1*IND*4********N**ZZ:PROC002", "EB*1*IND*62********Y**ZZ:PROC003", "EB*1*IND*5********N**ZZ:PROC004", "EB*I*IND*2********Y**ZZ:PROC005"}, nil},
		{"unmapped service type", request270(sub + "~EQ*88"), []string{"EB*V*IND*88", "MSG*SERVICE TYPE 88 IS NOT IN THE PROCEDURE CATALOGUE"}, []string{"EB*1*IND*30"}},
		{"procedure code outside the catalogue", request270(sub + "~EQ**HC:99999"), []string{"EB*V*IND***********HC:99999", "AAA*N**AG*C"}, nil},
		{"NDC qualifier", request270(sub + "~EQ**N4:00071015523"), []string{"AAA*N**54*C"}, nil},
		{"past date of service", request270(sub + "~DTP*291*D8*20261001~EQ*4"), []string{"AAA*Y**62*C"}, []string{"EB*1*IND*4"}},
		{"future date of service", request270(sub + "~DTP*291*RD8*20261201-20261231~EQ*4"), []string{"AAA*Y**63*C"}, nil},
		{"an EQ's own date", request270(sub + "~EQ*4~EQ*5~DTP*291*D8*20261001"), []string{"EB*1*IND*4********N**ZZ:PROC002", "EB*V*IND*5", "AAA*Y**62*C"}, nil},
		{"dependent", request270("HL*3*2*22*1~NM1*IL*1*QUEST*QUINN****MI*M-Q~HL*4*3*23*0~TRN*1*DEP-1*9CLEARHOUS~NM1*03*1*QUEST*DORA~DMG*D8*20150909~EQ*5"),
			[]string{"HL*4*3*23*0", "TRN*2*DEP-1*9CLEARHOUS", "NM1*03*1", "EB*1*IND*5********N**ZZ:PROC004"}, nil},
		{"unknown dependent", request270("HL*3*2*22*1~NM1*IL*1*QUEST*QUINN****MI*M-Q~HL*4*3*23*0~NM1*03*1*QUEST*NOBODY~DMG*D8*20150910~EQ*5"),
			[]string{"AAA*Y**67*C"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, lines, all := f.ask(t, tc.in, healthagents.X12Options{})
			for _, w := range tc.want {
				assert.True(t, lines[w], "no %s in\n%s", w, all)
			}
			for _, w := range tc.absent {
				assert.False(t, lines[w], "%s in\n%s", w, all)
			}
		})
	}
	providers := map[string]string{
		"NM1*1P*2*CLINIC*****SV*2000035":    "AAA*Y**51*C", // a payer-assigned provider id: not on file
		"NM1*1P*2*CLINIC*****XX*1234567890": "AAA*N**43*C", // an NPI failing its check digit
	}
	for nm1, want := range providers {
		in := strings.Replace(request270(sub+"~EQ*4"), "NM1*1P*2*CLINIC*****XX*"+providerNPI, nm1, 1)
		before := f.att.count()
		_, lines, all := f.ask(t, in, healthagents.X12Options{})
		assert.True(t, lines[want], "no %s in\n%s", want, all)
		assert.False(t, lines["HL*3*2*22*0"], "no subscriber answered under a refused receiver")
		assert.Equal(t, before, f.att.count(), "nothing decided")
	}
}

func TestEligibilityX12Refusals(t *testing.T) {
	t.Parallel()
	f := newX12(t, &countingAttestor{})
	f.member(t, "PT-R", "M-R", "Ref", "Ray", "1970-07-07", nil)
	sub := "HL*3*2*22*0~NM1*IL*1*REF*RAY****MI*M-R~EQ*4"

	// Admission refused (the rate limits): nothing decided.
	ans, lines, all := f.ask(t, request270(sub), healthagents.X12Options{Admit: func(n int) error {
		assert.Equal(t, 1, n)
		return healthagents.Errorf(healthagents.CodeRateLimited, "Rate limit exceeded")
	}})
	assert.True(t, lines["AAA*Y**04*R"], all)
	assert.Empty(t, ans.Accessed)
	// More decisions than one interchange may ask.
	many := make([]string, 0, 7)
	for i := range 7 {
		many = append(many, fmt.Sprintf("HL*%d*2*22*0~NM1*IL*1*REF*RAY****MI*M-R~EQ*30", i+3))
	}
	_, lines, all = f.ask(t, request270(many...), healthagents.X12Options{})
	assert.True(t, lines["AAA*Y**04*C"], all)
	// A broken 270: a 999, nothing decided or read.
	broken := strings.Replace(request270(sub), "DTP", "DTP", 1)
	broken = strings.Replace(broken, "EQ*4", "EQ*XX", 1)
	ans, lines, all = f.ask(t, broken, healthagents.X12Options{})
	assert.Equal(t, healthagents.X12Kind999, ans.Kind)
	assert.True(t, lines["IK4*1::1*1365*7"], all)
	assert.Empty(t, ans.Accessed)
	ans, _, _ = f.ask(t, "not x12 at all", healthagents.X12Options{SenderID: "PAYERX"})
	assert.Equal(t, healthagents.X12KindTA1, ans.Kind)
	assert.Contains(t, string(ans.Body), "*ZZ*PAYERX         *ZZ*UNKNOWN        *")
	assert.Zero(t, f.att.count(), "nothing was proven for any of them")

	// The payer's credential refused (revoked): AAA 15, as the JSON
	// route's 422 UNTRUSTED_CREDENTIAL maps (x12.ForProblem); a record
	// beyond the circuit's bounds: 42, resubmission not allowed.
	for err, want := range map[error]string{trust.ErrRevoked: "AAA*N**15*C", healthagents.ErrProofUnsupported: "AAA*Y**42*N"} {
		refused := newX12(t, &countingAttestor{stubAttestor: stubAttestor{err: fmt.Errorf("attest: %w", err)}})
		refused.member(t, "PT-R", "M-R", "Ref", "Ray", "1970-07-07", nil)
		_, lines, all = refused.ask(t, request270(sub), healthagents.X12Options{})
		assert.True(t, lines[want], "%v: no %s in\n%s", err, want, all)
		assert.False(t, lines["EB*6*IND*30"], "never inactive coverage: nobody said so")
	}

	// The chain fails: the member is answered 42, and the members after it
	// are not tried.
	down := newX12(t, &countingAttestor{stubAttestor: stubAttestor{err: healthagents.ErrChainUnavailable}})
	down.member(t, "PT-R", "M-R", "Ref", "Ray", "1970-07-07", nil)
	ans, lines, all = down.ask(t, request270(sub, strings.Replace(sub, "HL*3", "HL*4", 1)), healthagents.X12Options{})
	assert.True(t, lines["AAA*Y**42*R"], all)
	assert.Equal(t, 2, strings.Count(all, "AAA*Y**42*R"))
	assert.Equal(t, 1, down.att.count(), "the second member was not tried")
	require.Len(t, ans.Accessed, 1)
	assert.Equal(t, healthagents.CodeUnavailable, ans.Accessed[0].Code)
}

func (s *recordingSink) count(typ string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range s.events {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// BenchmarkX12Layer is what the X12 layer costs in process: one
// subscriber's 270 with one EQ answered by EligibilityX12, against the same
// decision by VerifyEligibility; the proof is a stub here, so the
// difference is the layer itself (reading the 270, the member lookup, the
// 271).
//
//	go test . -run '^$' -bench X12Layer -benchtime 2000x -count 3
func BenchmarkX12Layer(b *testing.B) {
	svc, kr := newService(b, healthagents.WithEvents(&recordingSink{}), healthagents.WithAttestor(stubAttestor{}))
	pats := &memPatients{}
	v1, err := healthagents.NewV1(svc, pats, &memPrescriptions{}, healthagents.WithMemberIndex(&memIndex{patients: pats}))
	require.NoError(b, err)
	r := patient("PT-L", nil, nil)
	r.Coverage.PayerID, r.Coverage.MemberID = "60054", "W123456789"
	r.Name, r.BirthDate = &record.Name{Family: "Doe", Given: "Jane"}, "1968-04-02"
	raw, err := r.Marshal()
	require.NoError(b, err)
	env, err := cipher.Seal(r.PatientID, raw, kr)
	require.NoError(b, err)
	require.NoError(b, v1.PutPatient(b.Context(), testOwner, r.PatientID, &env))
	in := []byte(request270("HL*3*2*22*0~TRN*1*T*9CLEARHOUS~NM1*IL*1*DOE*JANE****MI*W123456789~DMG*D8*19680402~EQ**HC:70551"))
	req := healthagents.V1EligibilityRequest{PatientID: "PT-L", MemberID: "W123456789", ProcedureCode: "70551", ProviderNPI: providerNPI}
	b.Run("verify", func(b *testing.B) {
		for b.Loop() {
			if _, err := v1.VerifyEligibility(b.Context(), testOwner, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("x12", func(b *testing.B) {
		for b.Loop() {
			ans, err := v1.EligibilityX12(b.Context(), testOwner, in, healthagents.X12Options{})
			if err != nil || ans.Kind != healthagents.X12Kind271 || !strings.Contains(string(ans.Body), "EB*1*IND*********Y**HC:70551") {
				b.Fatalf("%v %s", err, ans.Body)
			}
		}
	})
}

// batchAttestor attests every decision with a statement whose batch has
// pathLen siblings (none: recorded alone), and proofData.
type batchAttestor struct {
	stubAttestor
	proofData string
	pathLen   int
	digest    string // replaces the statement's digest when set
}

func (b batchAttestor) AttestEligibility(context.Context, *record.Record, eligibility.Decision) (*healthagents.Attestation, error) {
	st := batchedStatement(b.pathLen)
	if b.digest != "" {
		st.Digest = b.digest
	}
	return &healthagents.Attestation{ProofData: b.proofData, PublicInputs: []string{"0x02"}, TxHash: "0xe1", Verified: true,
		Statement: st}, nil
}

// batchedStatement is a statement anchored in a batch with a path of n
// pseudo-random values (which deflate poorly), or none for n = 0.
func batchedStatement(n int) *healthagents.Statement {
	st := &healthagents.Statement{Digest: "1480", Opening: healthagents.StatementOpening{Circuit: "eligibility-v3", CircuitID: "7033", IssuerKeyHash: "1706", RevocationNonce: 7}}
	if n == 0 {
		return st
	}
	st.Batch = &healthagents.StatementBatch{Root: "5", Size: 2, LeafIndex: 1}
	x := uint64(88172645463325252)
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		st.Batch.Path = append(st.Batch.Path, fmt.Sprintf("%d%d", x, x*2654435761))
	}
	return st
}

// statementParts is how many MSG batchedStatement(n) needs (9: more than
// a 271 carries).
func statementParts(t *testing.T, n int) int {
	js, err := json.Marshal(batchedStatement(n))
	require.NoError(t, err)
	text, err := x12.EncodeStatement(js)
	if err != nil {
		return 9
	}
	return (len(text) + 229) / 230
}

// TestEligibilityX12BatchedProof: a decision anchored in a batch carries
// its proof after its statement (x12.EncodeProof's text), one recorded
// alone does not; a batched decision whose statement and proof cannot
// both be carried — the proof not proof_data, the statement over 8 MSG,
// or a reason, the transaction, 8 statement parts and the proof: 11 MSG,
// over a 2110 loop's 10 — is answered EB*V with a MSG saying so, never
// without its proof.
func TestEligibilityX12BatchedProof(t *testing.T) {
	t.Parallel()
	pd := "0x" + strings.Repeat("0a", 256)
	text, err := x12.EncodeProof(pd)
	require.NoError(t, err)
	eight, nine := 0, 0
	for n := 1; nine == 0; n++ {
		switch statementParts(t, n) {
		case 8:
			eight = n
		case 9:
			nine = n
		}
	}
	require.NotZero(t, eight, "a path of some length needs 8 MSG")
	// A statement recorded alone whose text (a digest of pseudo-random
	// digits, which deflate poorly) is more than 8 MSG.
	var huge strings.Builder
	for x := uint64(88172645463325252); huge.Len() < 4000; {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		fmt.Fprintf(&huge, "%d", x)
	}
	hugeDigest := huge.String()
	js, err := json.Marshal(&healthagents.Statement{Digest: hugeDigest})
	require.NoError(t, err)
	_, err = x12.EncodeStatement(js)
	require.Error(t, err, "the digest fits a 271")
	// 70551: covered; EQ*2 (PROC005): excluded, with a reason.
	in := request270("HL*3*2*22*0~TRN*1*TRACE-1*9CLEARHOUS~NM1*IL*1*DOE*JANE****MI*W123456789~DMG*D8*19680402~EQ**HC:70551~EQ*2")
	for _, tc := range []struct {
		name      string
		att       batchAttestor
		proofs    int // MSG*DECISION PROOF DATA
		refused   int // of the two questions
		statement bool
	}{
		{name: "ok/batched", att: batchAttestor{proofData: pd, pathLen: 3}, proofs: 2, statement: true},
		{name: "ok/recorded alone", att: batchAttestor{proofData: "0x01"}, statement: true},
		{name: "fail/not proof_data", att: batchAttestor{proofData: "0x01", pathLen: 3}, refused: 2},
		{name: "fail/statement over 8 MSG", att: batchAttestor{proofData: pd, pathLen: nine}, refused: 2},
		{name: "fail/11 MSG with a reason", att: batchAttestor{proofData: pd, pathLen: eight}, proofs: 1, refused: 1, statement: true},
		{name: "fail/recorded alone, statement over 8 MSG", att: batchAttestor{proofData: "0x01", digest: hugeDigest}, refused: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newX12Attested(t, tc.att)
			f.member(t, "PT-X1", "W123456789", "Doe", "Jane", "1968-04-02", nil)
			ans, _, all := f.ask(t, in, healthagents.X12Options{})
			assert.Equal(t, tc.proofs, strings.Count(all, "\nMSG*DECISION PROOF DATA "+text+"\n"), all)
			assert.Equal(t, tc.statement, strings.Contains(all, "MSG*DECISION STATEMENT 1/"), all)
			assert.Equal(t, tc.refused, strings.Count(all, "EB*V*IND"), all)
			assert.Equal(t, tc.refused, strings.Count(all, "\nMSG*DECISION NOT SENT IN X12 - ITS STATEMENT AND PROOF EXCEED THE 10 MSG OF A 2110 LOOP - ASK POST /API/V1/ELIGIBILITY/VERIFY\n"), all)
			ds, err := x12.Decisions(ans.Body)
			require.NoError(t, err)
			assert.Equal(t, tc.proofs > 0, ds["0xe1"].HasProof)
		})
	}
}
