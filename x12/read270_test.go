package x12_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/healthagents/healthagents/x12"
)

// isa270 is a valid ISA of a request from CLEARINGHOUSE to HEALTHAGENTS.
const isa270 = "ISA*00*          *00*          *ZZ*CLEARINGHOUSE  *ZZ*HEALTHAGENTS   *261125*0900*^*00501*000000101*0*T*:~"

// guideExample is the shape of the implementation guide's first 270
// example (a subscriber asked about by a provider, service type 30), with
// our NPI in 2100B.
var guideExample = []string{
	"BHT*0022*13*10001234*20261125*0900",
	"HL*1**20*1",
	"NM1*PR*2*ABC COMPANY*****PI*842610001",
	"HL*2*1*21*1",
	"NM1*1P*2*BONE AND JOINT CLINIC*****XX*1234567893",
	"HL*3*2*22*0",
	"TRN*1*93175-012547*9877281234",
	"NM1*IL*1*SMITH*ROBERT****MI*11122333301",
	"DMG*D8*19430519",
	"DTP*291*D8*20261125",
	"EQ*30",
}

// interchange270 wraps transaction set bodies (without ST/SE) in ST/SE,
// GS/GE and ISA/IEA with the right counts and control numbers.
func interchange270(sets ...[]string) string {
	var b strings.Builder
	b.WriteString(isa270 + "\n")
	b.WriteString("GS*HS*CLEARINGHOUSE*HEALTHAGENTS*20261125*0900*101*X*005010X279A1~\n")
	for i, body := range sets {
		ctl := fmt.Sprintf("%04d", 1234+i)
		b.WriteString("ST*270*" + ctl + "*005010X279A1~\n")
		for _, s := range body {
			b.WriteString(s + "~\n")
		}
		fmt.Fprintf(&b, "SE*%d*%s~\n", len(body)+2, ctl)
	}
	fmt.Fprintf(&b, "GE*%d*101~\nIEA*1*000000101~\n", len(sets))
	return b.String()
}

func TestRead270GuideExample(t *testing.T) {
	t.Parallel()
	inq, err := x12.Read270([]byte(interchange270(guideExample)))
	if err != nil {
		t.Fatal(err)
	}
	if inq.Envelope.SenderID != "CLEARINGHOUSE" || inq.Envelope.ReceiverID != "HEALTHAGENTS" || inq.Envelope.Control != "000000101" || inq.Envelope.Production {
		t.Fatalf("envelope %+v", inq.Envelope)
	}
	if len(inq.Transactions) != 1 {
		t.Fatalf("%d transactions", len(inq.Transactions))
	}
	tx := inq.Transactions[0]
	if tx.Control != "1234" || tx.Reference != "10001234" {
		t.Fatalf("transaction %+v", tx)
	}
	src := tx.Sources[0]
	if src.Entity != "PR" || src.IDQualifier != "PI" || src.ID != "842610001" || src.LastName != "ABC COMPANY" {
		t.Fatalf("source %+v", src.Party)
	}
	rcv := src.Receivers[0]
	if rcv.IDQualifier != "XX" || rcv.ID != "1234567893" {
		t.Fatalf("receiver %+v", rcv.Party)
	}
	sub := rcv.Subscribers[0]
	if sub.ID != "11122333301" || sub.LastName != "SMITH" || sub.FirstName != "ROBERT" || sub.IDQualifier != "MI" {
		t.Fatalf("subscriber %+v", sub.Party)
	}
	if !sub.BirthDate.Equal(time.Date(1943, 5, 19, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("birth date %v", sub.BirthDate)
	}
	if sub.ServiceDate == nil || !sub.ServiceDate.From.Equal(time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("service date %v", sub.ServiceDate)
	}
	if len(sub.Traces) != 1 || sub.Traces[0] != (x12.Trace{Number: "93175-012547", Originator: "9877281234"}) {
		t.Fatalf("traces %+v", sub.Traces)
	}
	if len(sub.Inquiries) != 1 || strings.Join(sub.Inquiries[0].ServiceTypes, ",") != "30" {
		t.Fatalf("inquiries %+v", sub.Inquiries)
	}
}

// TestRead270Hierarchy: two subscribers, one with a dependent, several
// EQs (repeated service types, a procedure), and other separators.
func TestRead270Hierarchy(t *testing.T) {
	t.Parallel()
	body := []string{
		"BHT*0022*13*REF-2*20261125*090000",
		"HL*1**20*1", "NM1*PR*2*ACME HEALTH*****PI*60054",
		"HL*2*1*21*1", "NM1*1P*1*DOE*JOHN****XX*1234567893", "REF*TJ*123456789", "N3*1 MAIN ST", "N4*SPRINGFIELD*IL*62701", "PRV*PE*PXC*207Q00000X",
		"HL*3*2*22*0", "TRN*1*TR-1*9CLEARHOUS", "TRN*1*TR-1B*9OTHERCLRH*DEPT", "NM1*IL*1*ROE*JANE****MI*W123456789", "DMG*D8*19680402*F",
		"EQ*4^5", "EQ**HC:70551", "DTP*291*D8*20261125", "EQ*88",
		"HL*4*2*22*1", "TRN*1*TR-2*9CLEARHOUS", "NM1*IL*1*ROE*RICHARD****MI*W123456789",
		"HL*5*4*23*0", "TRN*1*TR-3*9CLEARHOUS", "NM1*03*1*ROE*ANN", "DMG*D8*20100101", "EQ*30",
	}
	raw := interchange270(body)
	// The same interchange with | ! > as separators reads the same.
	other := strings.NewReplacer("*", "|", "^", "!", ":", ">").Replace(raw)
	for _, in := range []string{raw, other} {
		inq, err := x12.Read270([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		subs := inq.Transactions[0].Subscribers()
		if len(subs) != 2 {
			t.Fatalf("%d subscribers", len(subs))
		}
		a, b := subs[0], subs[1]
		if len(a.Traces) != 2 || a.Traces[1].Additional != "DEPT" {
			t.Fatalf("traces %+v", a.Traces)
		}
		if len(a.Inquiries) != 3 || strings.Join(a.Inquiries[0].ServiceTypes, ",") != "4,5" ||
			a.Inquiries[1].ProcedureQualifier != "HC" || a.Inquiries[1].ProcedureCode != "70551" || a.Inquiries[1].ServiceDate == nil {
			t.Fatalf("inquiries %+v %+v", a.Inquiries[0], a.Inquiries[1])
		}
		if len(b.Inquiries) != 0 || len(b.Dependents) != 1 {
			t.Fatalf("second subscriber %+v", b)
		}
		d := b.Dependents[0]
		if d.LastName != "ROE" || d.FirstName != "ANN" || d.BirthDate.Year() != 2010 || len(d.Inquiries) != 1 || d.Traces[0].Number != "TR-3" {
			t.Fatalf("dependent %+v", d)
		}
	}
}

// broken270 is one interchange the reader must refuse, and the TA1 note
// or the 999 lines that must name the fault.
type broken270 struct {
	name string
	in   string
	ta1  string   // TA105, or "" for a 999
	want []string // lines of the 999 (AK9, IK3, IK4, IK5 ...) that must appear
}

// brokenCases are the table of TestRead270Broken and of the server's
// table (the same interchanges over HTTP record nothing on chain).
func brokenCases() []broken270 {
	good := interchange270(guideExample)
	rep := func(old, new string) string {
		if !strings.Contains(good, old) {
			panic("no " + old)
		}
		return strings.Replace(good, old, new, 1)
	}
	without := func(seg string) []string {
		var out []string
		for _, s := range guideExample {
			if s != seg {
				out = append(out, s)
			}
		}
		return out
	}
	with := func(i int, seg string) []string {
		out := append([]string(nil), guideExample[:i]...)
		return append(append(out, seg), guideExample[i:]...)
	}
	return []broken270{
		{name: "bad ISA length (sender 14 characters)", in: rep("*CLEARINGHOUSE  *", "*CLEARINGHOUSE *"), ta1: "006"},
		{name: "ISA receiver qualifier", in: rep("*ZZ*HEALTHAGENTS", "*QQ*HEALTHAGENTS"), ta1: "007"},
		{name: "ISA version 00401", in: rep("*00501*", "*00401*"), ta1: "017"},
		{name: "wrong separators: component equals element", in: rep("*T*:~", "*T***~"), ta1: "027"},
		{name: "wrong separators: GS written with another element separator", in: rep("GS*HS*CLEARINGHOUSE*HEALTHAGENTS*20261125*0900*101*X*005010X279A1", "GS|HS|CLEARINGHOUSE|HEALTHAGENTS|20261125|0900|101|X|005010X279A1"), ta1: "024"},
		{name: "not X12", in: `{"patient_id": "PT-1"}`, ta1: "024"},
		{name: "IEA control mismatch", in: rep("IEA*1*000000101", "IEA*1*000000102"), ta1: "001"},
		{name: "IEA group count", in: rep("IEA*1*", "IEA*2*"), ta1: "021"},
		{name: "no IEA", in: strings.Replace(good, "IEA*1*000000101~\n", "", 1), ta1: "023"},
		{name: "GE control mismatch", in: rep("GE*1*101", "GE*1*102"), want: []string{"AK9*R*1*1*1*4"}},
		{name: "GE set count", in: rep("GE*1*101", "GE*2*101"), want: []string{"AK9*R*2*1*1*5"}},
		{name: "GS version", in: rep("*X*005010X279A1~\nST", "*X*004010X092A1~\nST"), want: []string{"AK9*R*1*1*1*2"}},
		{name: "SE01 count", in: rep("SE*13*1234", "SE*12*1234"), want: []string{"IK5*R*4", "AK9*R*1*1*0"}},
		{name: "SE02 control mismatch", in: rep("SE*13*1234", "SE*13*1235"), want: []string{"IK5*R*3"}},
		{name: "ST03 another guide", in: rep("ST*270*1234*005010X279A1", "ST*270*1234*005010X092A1"), want: []string{"IK5*R*I6"}},
		{name: "missing NM1 of the subscriber", in: interchange270(without("NM1*IL*1*SMITH*ROBERT****MI*11122333301")), want: []string{"IK3*NM1*9*2100C*3", "IK5*R*5"}},
		{name: "missing EQ", in: interchange270(without("EQ*30")), want: []string{"IK3*EQ*12*2110C*3"}},
		{name: "bad date of service", in: rep("DTP*291*D8*20261125", "DTP*291*D8*20261340"), want: []string{"IK3*DTP*11*2100C*8", "IK4*3*1251*8"}},
		{name: "bad birth date", in: rep("DMG*D8*19430519", "DMG*D8*19430230"), want: []string{"IK3*DMG*10*2100C*8", "IK4*2*1251*8"}},
		{name: "BHT02 cancellation", in: rep("BHT*0022*13*", "BHT*0022*01*"), want: []string{"IK3*BHT*2**8", "IK4*2*353*I6"}},
		{name: "bad BHT time", in: rep("*20261125*0900~\nHL", "*20261125*2500~\nHL"), want: []string{"IK3*BHT*2**8", "IK4*5*337*9"}},
		{name: "unknown service type", in: rep("EQ*30", "EQ*ZZ"), want: []string{"IK3*EQ*12*2110C*8", "IK4*1::1*1365*7"}},
		{name: "EQ without service type or procedure", in: rep("EQ*30", "EQ**"), want: []string{"IK4*1*1365*2"}},
		{name: "procedure qualifier", in: rep("EQ*30", "EQ**XY:70551"), want: []string{"IK4*2:1*235*7"}},
		{name: "segment out of order (DMG after DTP)", in: interchange270(append(without("DMG*D8*19430519")[:9], "DMG*D8*19430519", "EQ*30")), want: []string{"IK3*DMG*11*2100C*7"}},
		{name: "segment not in a 270", in: interchange270(with(8, "CLM*1*100")), want: []string{"IK3*CLM*10*2000C*6"}},
		{name: "HL parent", in: rep("HL*3*2*22*0", "HL*3*1*22*0"), want: []string{"IK3*HL*7*2000C*8", "IK4*2*734*7"}},
		{name: "subscriber NM1 entity", in: rep("NM1*IL*1*SMITH", "NM1*QC*1*SMITH"), want: []string{"IK3*NM1*9*2100C*8", "IK4*1*98*7"}},
		{name: "member id without qualifier", in: rep("****MI*11122333301", "*****11122333301"), want: []string{"IK4*8*66*2"}},
		{name: "too many TRN", in: interchange270(append(with(6, "TRN*1*X1*9877281234")[:7:7], append([]string{"TRN*1*X2*9877281234"}, guideExample[6:]...)...)), want: []string{"IK3*TRN*10*2000C*5"}},
		{name: "trace originator too short", in: rep("*9877281234", "*98772"), want: []string{"IK4*3*509*4"}},
	}
}

func TestRead270Broken(t *testing.T) {
	t.Parallel()
	reply := x12.Reply{Control: 7, Time: time.Date(2026, 11, 25, 9, 5, 0, 0, time.UTC)}
	for _, tc := range brokenCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			inq, err := x12.Read270([]byte(tc.in))
			if err == nil {
				t.Fatalf("read: %+v", inq)
			}
			if !errors.Is(err, x12.ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			out, kind, rerr := x12.RenderAck(err, reply)
			if rerr != nil {
				t.Fatal(rerr)
			}
			segs, serr := x12.Split(out)
			if serr != nil {
				t.Fatalf("%v\n%s", serr, out)
			}
			if tc.ta1 != "" {
				if kind != x12.KindTA1 {
					t.Fatalf("kind %s, want TA1:\n%s", kind, out)
				}
				ta1 := strings.Join(segs[1], "*")
				if segs[1][0] != "TA1" || segs[1][4] != "R" || segs[1][5] != tc.ta1 {
					t.Fatalf("TA1 %s, want note %s", ta1, tc.ta1)
				}
				return
			}
			if kind != x12.Kind999 {
				t.Fatalf("kind %s, want 999:\n%s", kind, out)
			}
			lines := map[string]bool{}
			for _, s := range segs {
				lines[strings.Join(s, "*")] = true
			}
			for _, w := range tc.want {
				if !lines[w] {
					t.Errorf("no %s in\n%s", w, out)
				}
			}
			checkCounts(t, segs)
		})
	}
}

// checkCounts checks SE01 against the segments of each set, GE01 and
// IEA01, and the control numbers of the envelope.
func checkCounts(t *testing.T, segs [][]string) {
	t.Helper()
	inSet, sets, groups := 0, 0, 0
	for _, s := range segs {
		switch s[0] {
		case "ST":
			inSet = 1
			sets++
		case "SE":
			inSet++
			if fmt.Sprint(inSet) != s[1] {
				t.Errorf("SE01 %s, counted %d", s[1], inSet)
			}
			inSet = 0
		case "GS":
			groups++
		case "GE":
			if fmt.Sprint(sets) != s[1] {
				t.Errorf("GE01 %s, counted %d", s[1], sets)
			}
			sets = 0
		case "IEA":
			if fmt.Sprint(groups) != s[1] || s[2] != segs[0][13] {
				t.Errorf("IEA %v, %d groups, ISA13 %s", s, groups, segs[0][13])
			}
		default:
			if inSet > 0 {
				inSet++
			}
		}
	}
}

func TestFoldName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Müller-Lüdenscheidt": "MULLERLUDENSCHEIDT", "MULLER LUDENSCHEIDT": "MULLERLUDENSCHEIDT",
		"O'Brien": "OBRIEN", "Zoë": "ZOE", "  smith jr. ": "SMITHJR", "": "", "---": "",
	} {
		if got := x12.FoldName(in); got != want {
			t.Errorf("FoldName(%q) = %q, want %q", in, got, want)
		}
	}
}
