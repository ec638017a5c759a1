package prescription_test

import (
	"context"
	"fmt"

	"github.com/healthagents/healthagents/prescription"
	"github.com/healthagents/healthagents/record"
)

func Example() {
	agent, err := prescription.New()
	if err != nil {
		panic(err)
	}
	rec := &record.Record{
		PatientID:   "PT-000123",
		Medications: []string{"5640"}, // ibuprofen
		Allergies:   []string{"penicillin"},
		Conditions:  []string{"E11.9"},
	}
	for _, code := range []string{"warfarin", "723", "0071-0155-23"} {
		d, err := agent.Validate(context.Background(), rec, code)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s (RxCUI %s): valid=%t %s\n", d.Drug.Name, d.Drug.RxCUI, d.Valid, d.Reason)
		if d.Blocking != nil {
			fmt.Printf("  %s; management: %s\n", d.Blocking.Severity, d.Blocking.Management)
		}
	}
	// Output:
	// warfarin (RxCUI 11289): valid=false Drug interaction detected with ibuprofen
	//   major; management: Avoid; prefer acetaminophen for pain. If an NSAID is essential, use the lowest dose for the shortest time, add gastroprotection and check INR and signs of bleeding.
	// amoxicillin (RxCUI 723): valid=false Contraindication detected for amoxicillin
	// atorvastatin (RxCUI 83367): valid=true
}

func ExampleNormalizeNDC() {
	for _, s := range []string{"0003-0894-21", "50458-580-30", "12345-6789-1", "0003089421"} {
		ndc, err := prescription.NormalizeNDC(s)
		fmt.Println(ndc, err)
	}
	// Output:
	// 00003089421 <nil>
	// 50458058030 <nil>
	// 12345678901 <nil>
	//  invalid NDC: a 10-digit NDC without hyphens is ambiguous; write it with hyphens (4-4-2, 5-3-2 or 5-4-1)
}
