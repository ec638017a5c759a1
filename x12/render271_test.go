package x12_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/healthagents/healthagents/x12"
)

var at = time.Date(2026, 11, 25, 9, 5, 0, 0, time.UTC)

func sample(eligible bool) x12.Eligibility {
	e := x12.Eligibility{
		SourceName: "HEALTHAGENTS", SourceID: "HEALTHAGENTS", ProviderNPI: "1234567893", MemberID: "W123456789",
		Reference: "PT-000123-PROC001", ProcedureCode: "70551", ServiceDate: at,
		Eligible: eligible, CoveragePercentage: 80, RequiresAuthorization: true, DeductibleMet: true, CopayAmount: 25.5,
		ProofTransaction: "0x7a334bb7e76c61c8b792a0e504a0f1f77e09bb46c97cb94c0fdd36b118616a5b",
	}
	if !eligible {
		e.Reason = "Procedure excluded by the plan: see ~the* contract"
	}
	return e
}

// TestRender271Structure parses the 271 and checks the envelope, the
// loops, the EB segments, the counts and the control numbers.
func TestRender271Structure(t *testing.T) {
	ic := x12.Interchange{SenderID: "HEALTHAGENTS", ReceiverID: "CLEARINGHOUSE", Control: 4711, Time: at}
	out, err := x12.Render271(ic, sample(true))
	if err != nil {
		t.Fatal(err)
	}
	segs, err := x12.Split(out)
	if err != nil {
		t.Fatal(err)
	}
	isa := strings.SplitN(string(out), "~", 2)[0]
	if len(isa) != 105 { // 106 with its terminator
		t.Fatalf("ISA is %d characters, want 105 before the terminator: %q", len(isa), isa)
	}
	var ids []string
	for _, s := range segs {
		ids = append(ids, s[0])
	}
	want := "ISA GS ST BHT HL NM1 HL NM1 HL NM1 DTP EB EB EB EB EB MSG SE GE IEA"
	if got := strings.Join(ids, " "); got != want {
		t.Fatalf("segments\n got %s\nwant %s\n%s", got, want, out)
	}
	el := func(i, j int) string {
		if j >= len(segs[i]) {
			return ""
		}
		return segs[i][j]
	}
	// Envelope and control numbers.
	if el(0, 13) != "000004711" || el(0, 12) != "00501" || el(0, 15) != "T" || el(0, 16) != ":" || el(0, 11) != "^" || el(0, 9) != "261125" || el(0, 10) != "0905" {
		t.Fatalf("ISA %q", segs[0])
	}
	if el(1, 1) != "HB" || el(1, 6) != "4711" || el(1, 8) != x12.Version {
		t.Fatalf("GS %q", segs[1])
	}
	if el(2, 1) != "271" || el(2, 2) != "4711" || el(2, 3) != x12.Version {
		t.Fatalf("ST %q", segs[2])
	}
	if el(3, 1) != "0022" || el(3, 2) != "11" || el(3, 3) != "PT-000123-PROC001" || el(3, 4) != "20261125" {
		t.Fatalf("BHT %q", segs[3])
	}
	n := len(segs)
	se, ge, iea := segs[n-3], segs[n-2], segs[n-1]
	st := 2
	if se[1] != strconv.Itoa(n-3-st+1) || se[2] != el(2, 2) {
		t.Fatalf("SE %q: %d segments from ST to SE", se, n-3-st+1)
	}
	if ge[1] != "1" || ge[2] != el(1, 6) || iea[1] != "1" || iea[2] != el(0, 13) {
		t.Fatalf("GE %q IEA %q", ge, iea)
	}
	// HL hierarchy: 1 source (20), 2 receiver (21) under 1, 3 subscriber (22) under 2.
	hl := [][]string{segs[4], segs[6], segs[8]}
	for i, w := range [][]string{{"HL", "1", "", "20", "1"}, {"HL", "2", "1", "21", "1"}, {"HL", "3", "2", "22", "0"}} {
		if strings.Join(hl[i], "*") != strings.Join(w, "*") {
			t.Fatalf("HL %d: %q, want %q", i+1, hl[i], w)
		}
	}
	if el(5, 1) != "PR" || el(5, 8) != "PI" || el(7, 1) != "1P" || el(7, 8) != "XX" || el(7, 9) != "1234567893" || el(9, 1) != "IL" || el(9, 8) != "MI" || el(9, 9) != "W123456789" {
		t.Fatalf("NM1s %q %q %q", segs[5], segs[7], segs[9])
	}
	if strings.Join(segs[10], "*") != "DTP*307*D8*20261125" {
		t.Fatalf("DTP %q", segs[10])
	}
	// EB: plan active; procedure covered with authorization Y (EB11) and
	// HC:70551 (EB13); co-insurance 0.2 (EB08); copay 25.5 (EB07); deductible
	// remaining 0.
	ebs := map[string][]string{}
	for _, s := range segs[11:16] {
		ebs[s[1]+fmt.Sprint(len(ebs))] = s
	}
	checks := []struct {
		seg  []string
		want map[int]string
	}{
		{segs[11], map[int]string{1: "1", 2: "IND", 3: "30"}},
		{segs[12], map[int]string{1: "1", 11: "Y", 13: "HC:70551"}},
		{segs[13], map[int]string{1: "A", 8: "0.2", 13: "HC:70551"}},
		{segs[14], map[int]string{1: "B", 6: "27", 7: "25.5", 13: "HC:70551"}},
		{segs[15], map[int]string{1: "C", 3: "30", 6: "29", 7: "0"}},
	}
	for _, c := range checks {
		for j, v := range c.want {
			if j >= len(c.seg) || c.seg[j] != v {
				t.Fatalf("%q: element %d, want %q", c.seg, j, v)
			}
		}
	}
	if el(16, 1) != "DECISION PROOF TRANSACTION 0x7a334bb7e76c61c8b792a0e504a0f1f77e09bb46c97cb94c0fdd36b118616a5b" {
		t.Fatalf("MSG %q", segs[16])
	}
}

func TestRender271NotEligible(t *testing.T) {
	ic := x12.Interchange{SenderID: "HA", ReceiverID: "CH", Control: 1, Time: at, Production: true}
	e := sample(false)
	e.ProcedureCode, e.DeductibleMet = "PROC005", false
	out, err := x12.Render271(ic, e)
	if err != nil {
		t.Fatal(err)
	}
	segs, _ := x12.Split(out)
	var lines []string
	for _, s := range segs[11:] {
		lines = append(lines, strings.Join(s, "*"))
	}
	want := []string{
		"EB*1*IND*30",
		"EB*I*IND*********Y**ZZ:PROC005",
		"MSG*Procedure excluded by the plan  see  the  contract",
		"EB*C*IND*30",
		"MSG*DEDUCTIBLE NOT MET",
		"MSG*DECISION PROOF TRANSACTION 0x7a334bb7e76c61c8b792a0e504a0f1f77e09bb46c97cb94c0fdd36b118616a5b",
		"SE*16*0001", // ST, BHT, 3 × (HL, NM1), DTP, 3 EB, 3 MSG, SE
		"GE*1*1",
		"IEA*1*000000001",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if segs[0][15] != "P" {
		t.Fatal("production flag")
	}
}

func TestRender271RefusesBadValues(t *testing.T) {
	ic := x12.Interchange{SenderID: "HA", ReceiverID: "CH", Control: 1, Time: at}
	for name, mut := range map[string]func(*x12.Interchange, *x12.Eligibility){
		"separator in member id": func(_ *x12.Interchange, e *x12.Eligibility) { e.MemberID = "W1*23" },
		"short NPI":              func(_ *x12.Interchange, e *x12.Eligibility) { e.ProviderNPI = "123" },
		"control 0":              func(i *x12.Interchange, _ *x12.Eligibility) { i.Control = 0 },
		"long sender":            func(i *x12.Interchange, _ *x12.Eligibility) { i.SenderID = strings.Repeat("S", 16) },
		"percent":                func(_ *x12.Interchange, e *x12.Eligibility) { e.CoveragePercentage = 101 },
	} {
		i, e := ic, sample(true)
		mut(&i, &e)
		if _, err := x12.Render271(i, e); !errors.Is(err, x12.ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := x12.Split([]byte("GS*HB~")); !errors.Is(err, x12.ErrInvalid) {
		t.Error("Split without ISA")
	}
}
