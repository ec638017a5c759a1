package zkp_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/healthagents/healthagents/credential"
	"github.com/healthagents/healthagents/zkp"
)

// A program proves an eligibility decision from a payer's credential and
// checks the proof off-chain; the statement's opening recomputes the digest
// the proof commits to. (Compiled, not run by go test: the first start runs
// the Groth16 set-up.)
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
	payer, _ := credential.GenerateKey()
	cred, err := credential.Sign(payer, credential.Terms{
		MemberID: "W123456789", Salt: "42", PayerID: "60054", PlanID: "PPO-GOLD", Status: "active",
		Start: "2026-01-01", End: "2026-12-31", Expires: "2026-12-31", Nonce: 7,
		Excluded: []string{"PROC005"}, Overrides: map[string]int{"PROC002": 70},
	})
	if err != nil {
		log.Fatal(err)
	}
	proof, st, err := prover.ProveEligibilityV3(ctx, zkp.EligibilityV3Input{
		Credential: cred, ProcedureCode: "71046", ServiceDate: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC),
		CoveragePct: 70, Eligible: true,
	})
	if err != nil {
		log.Fatal(err) // errors.Is(err, zkp.ErrTimeout), zkp.ErrUnsatisfied, ...
	}
	if err := verifier.Verify(ctx, proof); err != nil {
		log.Fatal(err)
	}
	_, digest, _, _ := proof.Statement()
	fmt.Println(st.Check() == nil, digest.Cmp(st.Digest) == 0, len(proof.PublicInputs()))
}

func ExampleDayNumber() {
	d, _ := zkp.DayNumber(time.Date(2026, 11, 21, 23, 59, 0, 0, time.UTC))
	fmt.Println(d)
	// Output: 20778
}
