package x12_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/healthagents/healthagents/x12"
)

// FuzzRead270: any input is read or refused, never a panic; a refusal is
// an *InterchangeError or a *SyntaxError whose TA1 or 999 reads back with
// the right counts; a read inquiry's every member has a name or an id
// field set as the 270 gave it, and its answer renders.
func FuzzRead270(f *testing.F) {
	f.Add(interchange270(guideExample))
	for _, tc := range brokenCases() {
		f.Add(tc.in)
	}
	f.Add(strings.NewReplacer("*", "|", "^", "!", ":", ">").Replace(interchange270(guideExample)))
	f.Add("ISA")
	reply := x12.Reply{Control: 1, Time: time.Date(2026, 11, 25, 9, 5, 0, 0, time.UTC)}
	f.Fuzz(func(t *testing.T, in string) {
		inq, err := x12.Read270([]byte(in))
		if err != nil {
			if !errors.Is(err, x12.ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			out, _, rerr := x12.RenderAck(err, reply)
			if rerr != nil {
				t.Fatalf("no acknowledgment for %v: %v", err, rerr)
			}
			segs, serr := x12.Split(out)
			if serr != nil {
				t.Fatalf("acknowledgment does not read back: %v\n%s", serr, out)
			}
			checkCounts(t, segs)
			return
		}
		if len(inq.Transactions) == 0 {
			t.Fatal("read with no transaction set")
		}
		var resps []x12.Response
		for _, tx := range inq.Transactions {
			resp := x12.Response{Reference: tx.Reference}
			for _, s := range tx.Sources {
				sa := x12.SourceAnswer{Party: s.Party}
				for _, r := range s.Receivers {
					ra := x12.ReceiverAnswer{Party: r.Party}
					for _, sub := range r.Subscribers {
						ma := x12.MemberAnswer{Traces: sub.Traces, ServiceDate: reply.Time}
						if sub.IDQualifier == "MI" {
							ma.MemberID = sub.ID
						}
						sa := x12.SubscriberAnswer{MemberAnswer: ma}
						for _, d := range sub.Dependents {
							sa.Dependents = append(sa.Dependents, x12.MemberAnswer{Traces: d.Traces, ServiceDate: reply.Time, Coverage: x12.CoverageInactive})
						}
						ra.Subscribers = append(ra.Subscribers, sa)
					}
					sa.Receivers = append(sa.Receivers, ra)
				}
				resp.Sources = append(resp.Sources, sa)
			}
			resps = append(resps, resp)
		}
		out, err := x12.Render271s(inq, reply, resps)
		if err != nil {
			t.Fatalf("a read 270 cannot be answered: %v", err)
		}
		segs, err := x12.Split(out)
		if err != nil {
			t.Fatal(err)
		}
		checkCounts(t, segs)
	})
}
