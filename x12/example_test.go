package x12_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/healthagents/healthagents/x12"
)

// An eligible answer as a 271; the EB segments carry the decision.
func ExampleRender271() {
	at := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	out, err := x12.Render271(
		x12.Interchange{SenderID: "HEALTHAGENTS", ReceiverID: "CLEARINGHOUSE", Control: 1, Time: at},
		x12.Eligibility{SourceName: "HEALTHAGENTS", SourceID: "HEALTHAGENTS", ProviderNPI: "1234567893", MemberID: "W123456789",
			Reference: "PT-000123-70551", ProcedureCode: "70551", ServiceDate: at,
			Eligible: true, CoveragePercentage: 80, RequiresAuthorization: true, DeductibleMet: true, CopayAmount: 25},
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	segs, _ := x12.Split(out)
	for _, s := range segs[11:] {
		fmt.Println(strings.Join(s, "*"))
	}
	// Output:
	// EB*1*IND*30
	// EB*1*IND*********Y**HC:70551
	// EB*A*IND******0.2*****HC:70551
	// EB*B*IND****27*25******HC:70551
	// EB*C*IND*30***29*0
	// SE*15*0001
	// GE*1*1
	// IEA*1*000000001
}
