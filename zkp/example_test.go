package zkp_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/healthagents/healthagents/record"
	"github.com/healthagents/healthagents/zkp"
)

// A program proves an eligibility decision and checks the proof off-chain.
// (Compiled, not run by go test: the first start runs the Groth16 set-up.)
func Example() {
	ctx := context.Background()
	sys, err := zkp.LoadOrSetup(ctx, filepath.Join(os.Getenv("DATA_DIR"), "zkp"))
	if err != nil {
		log.Fatal(err)
	}
	prover, err := zkp.NewProver(sys) // 5 s deadline by default
	if err != nil {
		log.Fatal(err)
	}
	verifier, err := zkp.NewVerifier(sys)
	if err != nil {
		log.Fatal(err)
	}
	cov := &record.Coverage{
		MemberID: "W123456789", Status: record.StatusActive, Start: "2026-01-01", End: "2026-12-31",
		ExcludedProcedures: []string{"PROC005"}, CoverageOverrides: map[string]int{"PROC002": 70},
	}
	proof, err := prover.ProveEligibility(ctx, zkp.EligibilityInput{
		Coverage: cov, ClassIndex: 2, ClassCode: "PROC002", ProcedureCode: "72148",
		ServiceDate: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC),
		CoveragePct: 70, PreAuth: false, Eligible: true,
	})
	if err != nil {
		log.Fatal(err) // errors.Is(err, zkp.ErrTimeout), zkp.ErrUnsatisfied, ...
	}
	if err := verifier.Verify(ctx, proof); err != nil {
		log.Fatal(err)
	}
	out, _ := proof.Eligibility()
	fmt.Println(out.Eligible, out.CoveragePct, len(proof.ProofData()), len(proof.PublicInputs()))
}

// Codes enter the circuits as small field elements: the length above the
// zero-padded bytes. Exclusions compare case-folded codes.
func ExampleEncodeCode() {
	exact, _ := zkp.EncodeCode("proc005")
	folded, _ := zkp.EncodeCodeFolded("proc005")
	same, _ := zkp.EncodeCodeFolded("PROC005")
	fmt.Println(exact.Text(16))
	fmt.Println(folded.Text(16), folded.Equal(&same))
	_, err := zkp.EncodeCode("123456789")
	fmt.Println(err)
	// Output:
	// 770726f6330303500
	// 750524f4330303500 true
	// record exceeds the bounds of the ZK circuit: a code must have 1..8 bytes
}

func ExampleDayNumber() {
	d, _ := zkp.DayNumber(time.Date(2026, 11, 21, 23, 59, 0, 0, time.UTC))
	fmt.Println(d)
	// Output: 20778
}
