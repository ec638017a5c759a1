package x12_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/healthagents/healthagents/x12"
)

// The service's error answers become a 271 a clearinghouse reads: an AAA
// at the level the request failed, or EB*6 for no coverage in force, and
// never the problem's text.
func TestRender271ErrorAnswers(t *testing.T) {
	ic := x12.Interchange{SenderID: "HEALTHAGENTS", ReceiverID: "CLEARINGHOUSE", Control: 12, Time: at}
	for name, tc := range map[string]struct {
		status int
		detail string
		segs   string // from HL*1 to SE
		aaa    string
	}{
		"patient not found": {404, "PATIENT_NOT_FOUND: no record registered under this id",
			"HL NM1 HL NM1 HL NM1 AAA DTP SE", "AAA*Y**75*C"},
		"member id": {422, "NO_INSURANCE: member_id does not match the patient's coverage",
			"HL NM1 HL NM1 HL NM1 AAA DTP SE", "AAA*Y**72*C"},
		"no coverage on the date": {422, "NO_INSURANCE: no active coverage on 2026-11-25",
			"HL NM1 HL NM1 HL NM1 DTP EB SE", ""},
		// A revoked, expired or unregistered payer credential: not
		// "inactive coverage" (no one said so), a request to correct.
		"untrusted credential": {422, "UNTRUSTED_CREDENTIAL: the payer revoked this coverage credential (its revocation nonce is revoked on chain)",
			"HL NM1 HL NM1 HL NM1 AAA DTP SE", "AAA*N**15*C"},
		"NPI": {400, "Validation error: field 'provider_npi' is not a valid NPI: check digit",
			"HL NM1 HL NM1 AAA HL NM1 DTP SE", "AAA*N**43*C"},
		"unknown procedure": {404, "Procedure code PROC999 not found",
			"HL NM1 HL NM1 HL NM1 AAA DTP SE", "AAA*N**15*C"},
		"chain down": {503, "NETWORK_ERROR: Service temporarily unavailable",
			"HL NM1 AAA HL NM1 HL NM1 DTP SE", "AAA*Y**42*R"},
		"rate limited": {429, "Too many requests",
			"HL NM1 AAA HL NM1 HL NM1 DTP SE", "AAA*Y**04*R"},
		"bad key": {401, "Unauthorized: Invalid API key",
			"HL NM1 AAA HL NM1 HL NM1 DTP SE", "AAA*N**41*C"},
	} {
		t.Run(name, func(t *testing.T) {
			e := sample(true)
			e.Rejection, e.Inactive = x12.ForProblem(tc.status, tc.detail)
			out, err := x12.Render271(ic, e)
			if err != nil {
				t.Fatal(err)
			}
			segs, err := x12.Split(out)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, s := range segs[4:] { // after ISA GS ST BHT
				ids = append(ids, s[0])
				if s[0] == "SE" {
					break
				}
			}
			if got := strings.Join(ids, " "); got != tc.segs {
				t.Fatalf("segments\n got %s\nwant %s\n%s", got, tc.segs, out)
			}
			for _, s := range segs {
				switch s[0] {
				case "AAA":
					if got := strings.Join(s, "*"); got != tc.aaa {
						t.Errorf("got %s, want %s", got, tc.aaa)
					}
				case "EB":
					if got := strings.Join(s, "*"); got != "EB*6*IND*30" {
						t.Errorf("an error answer holds %s", got)
					}
				case "SE":
					if s[1] != "11" { // ST to SE
						t.Errorf("SE01 %s", s[1])
					}
				}
			}
			if strings.Contains(string(out), "MSG") || strings.Contains(string(out), "2026-11-25") || strings.Contains(string(out), "PROC999") {
				t.Errorf("the problem's text or the answer's messages leaked into the 271:\n%s", out)
			}
		})
	}
}

func TestRender271RefusesBadRejections(t *testing.T) {
	ic := x12.Interchange{SenderID: "S", ReceiverID: "R", Control: 1, Time: at}
	for name, r := range map[string]x12.Rejection{
		"level":              {Level: "2000C", Reason: "75", FollowUp: "C"},
		"reason":             {Level: x12.SubscriberLevel, Reason: "04", FollowUp: "C"},
		"level not rendered": {Level: x12.DependentLevel, Reason: "67", FollowUp: "C"},
		"follow-up":          {Level: x12.SourceLevel, Reason: "42", FollowUp: "Q"},
		"follow-up too long": {Level: x12.SourceLevel, Reason: "42", FollowUp: "RC"},
	} {
		t.Run(name, func(t *testing.T) {
			e := sample(true)
			e.Rejection = &r
			if _, err := x12.Render271(ic, e); !errors.Is(err, x12.ErrInvalid) {
				t.Fatalf("got %v", err)
			}
		})
	}
	e := sample(true)
	e.Rejection, e.Inactive = &x12.Rejection{Level: x12.SourceLevel, Reason: "42", FollowUp: "R"}, true
	if _, err := x12.Render271(ic, e); !errors.Is(err, x12.ErrInvalid) {
		t.Fatalf("rejected and inactive: got %v", err)
	}
}

// Whatever error answer and member id arrive, Render271 refuses them with
// ErrInvalid or writes an interchange that reads back with SE01 counting
// its segments and no AAA outside the three levels.
func FuzzRender271ErrorAnswer(f *testing.F) {
	f.Add(404, "PATIENT_NOT_FOUND: no record", "W123456789")
	f.Add(422, "NO_INSURANCE: member_id does not match", "W1~AAA*Y")
	f.Add(503, "NETWORK_ERROR: x", "")
	f.Fuzz(func(t *testing.T, status int, detail, member string) {
		ic := x12.Interchange{SenderID: "S", ReceiverID: "R", Control: 7, Time: at}
		e := sample(true)
		e.MemberID = member
		e.Rejection, e.Inactive = x12.ForProblem(status, detail)
		out, err := x12.Render271(ic, e)
		if err != nil {
			if !errors.Is(err, x12.ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			return
		}
		segs, err := x12.Split(out)
		if err != nil {
			t.Fatalf("cannot read back: %v\n%s", err, out)
		}
		n, aaa := 0, 0
		for i, s := range segs {
			if s[0] == "ST" {
				n = i
			}
			if s[0] == "AAA" {
				aaa++
			}
			if s[0] == "SE" && s[1] != strconv.Itoa(i-n+1) {
				t.Fatalf("SE01 %s, %d segments", s[1], i-n+1)
			}
		}
		if aaa != 1 && e.Rejection != nil || aaa != 0 && e.Rejection == nil {
			t.Fatalf("%d AAA segments for %+v", aaa, e.Rejection)
		}
	})
}
