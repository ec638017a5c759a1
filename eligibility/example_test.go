package eligibility_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/healthagents/healthagents/eligibility"
	"github.com/healthagents/healthagents/record"
)

func Example() {
	agent, err := eligibility.New()
	if err != nil {
		panic(err)
	}
	rec := &record.Record{
		PatientID: "PT-000123",
		Coverage: &record.Coverage{
			MemberID: "W123456789", Status: record.StatusActive,
			Start: "2026-01-01", End: "2026-12-31",
			ExcludedProcedures: []string{"PROC005"},
			CoverageOverrides:  map[string]int{"PROC002": 70},
		},
	}
	day := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	for _, code := range []string{"70551", "71046", "47562", "99999"} {
		d, err := agent.Check(context.Background(), rec, code, day)
		if errors.Is(err, eligibility.ErrUnknownProcedure) {
			fmt.Printf("Procedure code %s not found\n", code)
			continue
		}
		fmt.Printf("%s (%s, %s): eligible=%t coverage=%d%% pre-auth=%t\n",
			d.ProcedureCode, d.Procedure.Name, d.Procedure.Class.Code,
			d.Eligible, d.CoveragePct, d.RequiresAuthorization)
		if !d.Eligible {
			fmt.Println("  reason:", d.Reason)
		}
	}
	// Output:
	// 70551 (MRI of the brain, without contrast, PROC001): eligible=true coverage=80% pre-auth=true
	// 71046 (Chest X-ray, two views, PROC002): eligible=true coverage=70% pre-auth=false
	// 47562 (Laparoscopic cholecystectomy, PROC005): eligible=false coverage=0% pre-auth=true
	//   reason: procedure 47562 is excluded by the plan
	// Procedure code 99999 not found
}
