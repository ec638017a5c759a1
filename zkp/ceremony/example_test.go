package ceremony_test

import (
	"context"
	"fmt"

	"github.com/consensys/gnark-crypto/ecc"
	csbn254 "github.com/consensys/gnark/constraint/bn254"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"

	"github.com/healthagents/healthagents/zkp/ceremony"
)

// A two-party ceremony for one small circuit: each participant adds
// randomness to the latest file; the coordinator seals each phase with a
// public beacon; the result is the circuit's key pair.
func Example() {
	ctx := context.Background()
	ccs, _ := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, &powerCircuit{Rounds: 2})
	circuits := []ceremony.Circuit{{Name: "cube", CCS: ccs.(*csbn254.R1CS)}}

	p1, _ := ceremony.NewPhase1(ceremony.PowerFor(circuits))
	phase1 := []*ceremony.File{p1}
	for range 2 {
		next, _ := ceremony.Contribute(ctx, phase1[len(phase1)-1])
		phase1 = append(phase1, next)
	}
	srs, steps, _ := ceremony.SealPhase1(ctx, phase1, []byte("announced beacon value, phase 1"))
	fmt.Println("phase 1:", len(steps), "files verified")

	p2, _ := ceremony.NewPhase2(ctx, srs, circuits)
	phase2 := []*ceremony.File{p2}
	for range 2 {
		next, _ := ceremony.Contribute(ctx, phase2[len(phase2)-1])
		phase2 = append(phase2, next)
	}
	keys, steps, err := ceremony.Finalize(ctx, srs, circuits, phase2, []byte("announced beacon value, phase 2"))
	fmt.Println("phase 2:", len(steps), "files verified; error:", err)
	fmt.Println(keys[0].Name, "domain", keys[0].PK.Domain.Cardinality)
	// Output:
	// phase 1: 3 files verified
	// phase 2: 3 files verified; error: <nil>
	// cube domain 4
}
