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
		fmt.Printf("%s (RxCUI %s): valid=%t\n", d.Drug.Name, d.Drug.RxCUI, d.Valid)
		if !d.Valid {
			fmt.Println("  reason:", d.Reason)
		}
		if d.Blocking != nil {
			fmt.Printf("  %s; management: %s\n", d.Blocking.Severity, d.Blocking.Management)
		}
	}
	// Output:
	// warfarin (RxCUI 11289): valid=false
	//   reason: Drug interaction detected with ibuprofen
	//   major; management: Avoid; prefer acetaminophen for pain. If an NSAID is essential, use the lowest dose for the shortest time, add gastroprotection and check INR and signs of bleeding.
	// amoxicillin (RxCUI 723): valid=false
	//   reason: Contraindication detected for amoxicillin
	// atorvastatin (RxCUI 83367): valid=true
}

func ExampleNormalizeNDC() {
	for _, s := range []string{"0003-0894-21", "50458-580-30", "12345-6789-1", "0003089421"} {
		ndc, err := prescription.NormalizeNDC(s)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(ndc)
	}
	// Output:
	// 00003089421
	// 50458058030
	// 12345678901
	// error: invalid NDC: a 10-digit NDC without hyphens is ambiguous; write it with hyphens (4-4-2, 5-3-2 or 5-4-1)
}

func ExampleAgent_Check() {
	agent, err := prescription.New()
	if err != nil {
		panic(err)
	}
	rec := &record.Record{PatientID: "PT-000123", Medications: []string{"36567"}} // simvastatin
	// Three new medications at once, e.g. from /api/v1/prescriptions/validate.
	batch, err := agent.Check(context.Background(), nil, []string{"clarithromycin", "00003-0894-21", "sertraline"}, rec)
	if err != nil {
		panic(err)
	}
	fmt.Println("all valid:", batch.Valid)
	for _, d := range batch.Decisions {
		fmt.Printf("%s: valid=%t\n", d.Drug.Name, d.Valid)
		for _, ia := range d.Interactions {
			fmt.Printf("  %s with %s (between new drugs: %t)\n", ia.Severity, ia.With.Name, ia.BetweenCandidates)
		}
	}
	// Output:
	// all valid: false
	// clarithromycin: valid=false
	//   contraindicated with simvastatin (between new drugs: false)
	// apixaban: valid=true
	//   moderate with sertraline (between new drugs: true)
	// sertraline: valid=true
	//   moderate with apixaban (between new drugs: true)
}

// What EHRs send resolves to catalogue ingredients; what cannot be
// identified makes the decision not valid.
func ExampleAgent_Identify() {
	agent, err := prescription.New()
	if err != nil {
		panic(err)
	}
	for _, names := range [][]string{
		{"855332"}, // an SCD code the data lists
		{"99999999", "warfarin sodium 10 MG Oral Tablet"}, // an unlisted code with its display
		{"Coumadin 5 mg tablet"},                          // free text with a brand
		{"Tylenol PM"},                                    // acetaminophen and diphenhydramine: not identified
	} {
		rxcuis, ok := agent.Identify(names...)
		fmt.Println(rxcuis, ok)
	}
	rec := &record.Record{PatientID: "PT-000123", Medications: []string{"Tylenol PM"}}
	d, err := agent.Validate(context.Background(), rec, "metformin")
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Valid, d.Unidentified)
	// Output:
	// [11289] true
	// [11289] true
	// [11289] true
	// [] false
	// false [medication "Tylenol PM"]
}
