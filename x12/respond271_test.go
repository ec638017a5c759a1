package x12_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/healthagents/healthagents/x12"
	"github.com/healthagents/healthagents/x12/x12test"
)

// answers is a response to TestRead270Hierarchy's shape: an answered
// subscriber, a not-found one with a dependent answered EB*6.
func answers(t testing.TB) (*x12.Inquiry, []x12.Response) {
	t.Helper()
	inq, err := x12.Read270([]byte(interchange270(guideExample)))
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	met := false
	src := inq.Transactions[0].Sources[0]
	rcv := src.Receivers[0]
	resp := x12.Response{Reference: "10001234", Sources: []x12.SourceAnswer{{Party: src.Party, Receivers: []x12.ReceiverAnswer{{Party: rcv.Party,
		Subscribers: []x12.SubscriberAnswer{
			{MemberAnswer: x12.MemberAnswer{
				Traces: []x12.Trace{{Number: "93175-012547", Originator: "9877281234"}}, MemberID: "11122333301", ServiceDate: day,
				Coverage: x12.CoverageActive, DeductibleMet: &met,
				Benefits: []x12.Benefit{
					{ServiceType: "62", Procedure: "PROC001", Eligible: true, RequiresAuthorization: true, CoveragePercentage: 80, CopayAmount: 25, ProofTransaction: "0x" + strings.Repeat("ab", 32)},
					{ServiceType: "2", Procedure: "PROC005", Reason: "procedure PROC005 is excluded by the plan", ProofTransaction: "0x" + strings.Repeat("cd", 32)},
					{ServiceType: "88", Refused: true, Message: "SERVICE TYPE 88 IS NOT IN THE PROCEDURE CATALOGUE"},
					{Procedure: "99999", Refused: true, Rejection: &x12.Rejection{Level: x12.SubscriberBenefitLevel, Reason: "AG", FollowUp: "C"}},
				},
			}},
			{MemberAnswer: x12.MemberAnswer{Traces: []x12.Trace{{Number: "T2", Originator: "9877281234"}}, MemberID: "X1", ServiceDate: day,
				Rejection: &x12.Rejection{Level: x12.SubscriberLevel, ValidRequest: true, Reason: "75", FollowUp: "C"}},
				Dependents: []x12.MemberAnswer{{Traces: []x12.Trace{{Number: "T3", Originator: "9877281234"}}, ServiceDate: day, Coverage: x12.CoverageInactive}}},
		}}}}}}
	return inq, []x12.Response{resp, {Reference: "second", Sources: []x12.SourceAnswer{{Party: src.Party,
		Rejection: &x12.Rejection{Level: x12.SourceLevel, ValidRequest: true, Reason: "42", FollowUp: "R"}}}}}
}

func TestRender271s(t *testing.T) {
	t.Parallel()
	inq, resps := answers(t)
	rp := x12.Reply{Control: 424242, Time: time.Date(2026, 11, 25, 9, 5, 0, 0, time.UTC)}
	out, err := x12.Render271s(inq, rp, resps)
	if err != nil {
		t.Fatal(err)
	}
	segs, err := x12.Split(out)
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, segs)
	var lines []string
	for _, s := range segs {
		lines = append(lines, strings.Join(s, "*"))
	}
	got := strings.Join(lines, "\n")
	for _, want := range []string{
		"ISA*00*          *00*          *ZZ*HEALTHAGENTS   *ZZ*CLEARINGHOUSE  *261125*0905*^*00501*000424242*0*T*:",
		"GS*HB*HEALTHAGENTS*CLEARINGHOUSE*20261125*0905*424242*X*005010X279A1",
		"ST*271*0001*005010X279A1", "BHT*0022*11*10001234*20261125*0905",
		"HL*1**20*1", "NM1*PR*2*ABC COMPANY*****PI*842610001", "HL*2*1*21*1", "NM1*1P*2******XX*1234567893",
		"HL*3*2*22*0", "TRN*2*93175-012547*9877281234", "NM1*IL*1******MI*11122333301", "DTP*307*D8*20261125",
		"EB*1*IND*30", "EB*1*IND*62********Y**ZZ:PROC001", "MSG*DECISION PROOF TRANSACTION 0x" + strings.Repeat("ab", 32),
		"EB*A*IND*62*****0.2*****ZZ:PROC001", "EB*B*IND*62***27*25******ZZ:PROC001",
		"EB*I*IND*2********N**ZZ:PROC005", "MSG*procedure PROC005 is excluded by the plan",
		"EB*V*IND*88", "MSG*SERVICE TYPE 88 IS NOT IN THE PROCEDURE CATALOGUE", "EB*V*IND***********HC:99999", "AAA*N**AG*C",
		"EB*C*IND*30", "MSG*DEDUCTIBLE NOT MET",
		"HL*4*2*22*1", "TRN*2*T2*9877281234", "NM1*IL*1******MI*X1", "AAA*Y**75*C",
		"HL*5*4*23*0", "TRN*2*T3*9877281234", "NM1*03*1", "EB*6*IND*30",
		"ST*271*0002*005010X279A1", "BHT*0022*11*second*20261125*0905", "HL*1**20*0", "AAA*Y**42*R",
		"GE*2*424242", "IEA*1*000424242",
	} {
		if !strings.Contains("\n"+got+"\n", "\n"+want+"\n") {
			t.Errorf("no %s in\n%s", want, got)
		}
	}
	reports := x12test.RequireAccepted(t, out)
	// What node-x12 read back is what we wrote, and x12-parser sees the
	// five HL loops of the first set and the one of the second.
	r := reports[0]
	if n := len(r.Segments()); n != len(segs)-4 {
		t.Fatalf("node-x12 read %d transaction set segments, we wrote %d", n, len(segs)-4)
	}
	if len(r.X12Parser.HL) != 6 {
		t.Fatalf("x12-parser grouped %d HL loops: %v", len(r.X12Parser.HL), r.X12Parser.HL)
	}
}

func TestRender271sRefuses(t *testing.T) {
	t.Parallel()
	inq, resps := answers(t)
	rp := x12.Reply{Control: 1, Time: time.Now()}
	for name, mut := range map[string]func(*x12.Response){
		"trace with a separator": func(r *x12.Response) { r.Sources[0].Receivers[0].Subscribers[0].Traces[0].Number = "A*B" },
		"short originator":       func(r *x12.Response) { r.Sources[0].Receivers[0].Subscribers[0].Traces[0].Originator = "123" },
		"benefit rejection level": func(r *x12.Response) {
			r.Sources[0].Receivers[0].Subscribers[0].Benefits[3].Rejection.Level = x12.SubscriberLevel
		},
		"unknown service type": func(r *x12.Response) { r.Sources[0].Receivers[0].Subscribers[0].Benefits[0].ServiceType = "MR" },
		"no service date":      func(r *x12.Response) { r.Sources[0].Receivers[0].Subscribers[0].ServiceDate = time.Time{} },
		"no source":            func(r *x12.Response) { r.Sources = nil },
	} {
		t.Run(name, func(t *testing.T) {
			_, resps := answers(t)
			mut(&resps[0])
			if _, err := x12.Render271s(inq, rp, resps); !errors.Is(err, x12.ErrInvalid) {
				t.Fatalf("got %v", err)
			}
		})
	}
	if _, err := x12.Render271s(inq, x12.Reply{Time: time.Now()}, resps); !errors.Is(err, x12.ErrInvalid) {
		t.Fatalf("control 0: got %v", err)
	}
}

// TestAcksReadByTheParsers: every 999 and TA1 of the broken table is read
// by both npm parsers, and names its fault the same way through them.
func TestAcksReadByTheParsers(t *testing.T) {
	t.Parallel()
	reply := x12.Reply{Control: 7, Time: time.Date(2026, 11, 25, 9, 5, 0, 0, time.UTC)}
	var outs [][]byte
	cases := brokenCases()
	for _, tc := range cases {
		_, err := x12.Read270([]byte(tc.in))
		out, _, rerr := x12.RenderAck(err, reply)
		if rerr != nil {
			t.Fatalf("%s: %v", tc.name, rerr)
		}
		outs = append(outs, out)
	}
	reports := x12test.RequireAccepted(t, outs...)
	for i, tc := range cases {
		r := reports[i]
		if tc.ta1 != "" {
			if len(r.NodeX12.TA1) < 6 || r.NodeX12.TA1[5] != tc.ta1 {
				t.Errorf("%s: node-x12 read TA1 %v", tc.name, r.NodeX12.TA1)
			}
			continue
		}
		lines := map[string]bool{}
		for _, s := range r.Segments() {
			lines[strings.Join(s, "*")] = true
		}
		for _, w := range tc.want {
			if !lines[w] {
				t.Errorf("%s: node-x12 read no %s", tc.name, w)
			}
		}
	}
}

// TestParsersRefuseBrokenAnswers: the parsers the tests rely on do refuse
// what is wrong (a miscounted SE01, a too-long element), so their
// acceptance above means something.
func TestParsersRefuseBrokenAnswers(t *testing.T) {
	t.Parallel()
	inq, resps := answers(t)
	out, err := x12.Render271s(inq, x12.Reply{Control: 9, Time: time.Now()}, resps)
	if err != nil {
		t.Fatal(err)
	}
	miscounted := strings.Replace(string(out), "SE*35*0001", "SE*34*0001", 1)
	longTrace := strings.Replace(string(out), "TRN*2*T2*9877281234", "TRN*2*T2*98772812345", 1)
	reports := x12test.Parse(t, []byte(miscounted), []byte(longTrace))
	if reports[0].Accepted() || reports[0].NodeX12.Error == "" {
		t.Fatalf("node-x12 accepted a miscounted SE01: %+v", reports[0].NodeX12)
	}
	if reports[1].Accepted() || len(reports[1].NodeX12.RuleErrors) == 0 {
		t.Fatalf("node-x12's rules accepted an 11-character TRN03: %+v", reports[1].NodeX12)
	}
}

// TestStatementsRoundTrip: a decision's statement rides in MSG segments
// after its proof transaction's, and reads back as the JSON it was; a
// part missing or garbled is refused.
func TestStatementsRoundTrip(t *testing.T) {
	t.Parallel()
	inq, resps := answers(t)
	st := []byte(`{"digest":"1480","opening":{"circuit":"eligibility-v2","circuit_id":"7033","issuer_key_hash":"1706","revocation_nonce":7,"fields":[` +
		strings.Repeat(`{"name":"f","value":"21888242871839275222246405745257275088548364400416034343698204186575808495616"},`, 12) + `{"name":"salt","value":"9922"}]}}`)
	text, err := x12.EncodeStatement(st)
	if err != nil {
		t.Fatal(err)
	}
	b := &resps[0].Sources[0].Receivers[0].Subscribers[0].Benefits[0]
	b.Statement = text
	out, err := x12.Render271s(inq, x12.Reply{Control: 1, Time: time.Now()}, resps)
	if err != nil {
		t.Fatal(err)
	}
	got, err := x12.Statements(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || string(got[b.ProofTransaction]) != string(st) {
		t.Fatalf("read back %d statements: %s", len(got), got[b.ProofTransaction])
	}
	x12test.RequireAccepted(t, out)
	// A part removed, or its text changed.
	lines := strings.Split(string(out), "\n")
	var cut, garbled []string
	for _, l := range lines {
		if strings.HasPrefix(l, "MSG*DECISION STATEMENT 2/") {
			garbled = append(garbled, strings.Replace(l, " 2/", " 2/", 1)[:len(l)-5]+"!!!!~")
			continue
		}
		cut = append(cut, l)
		garbled = append(garbled, l)
	}
	for name, in := range map[string]string{"a part missing": strings.Join(cut, "\n"), "a part garbled": strings.Join(garbled, "\n")} {
		if _, err := x12.Statements([]byte(in)); !errors.Is(err, x12.ErrInvalid) {
			t.Errorf("%s: got %v", name, err)
		}
	}
	// A benefit's statement must be EncodeStatement's text.
	b.Statement = "not*base64"
	if _, err := x12.Render271s(inq, x12.Reply{Control: 1, Time: time.Now()}, resps); !errors.Is(err, x12.ErrInvalid) {
		t.Fatalf("got %v", err)
	}
}
