package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/internal/testcache/zkkeys"
	"github.com/healthagents/healthagents/record"
)

// The agents embedded in a Go program with proofs, in a few lines: every
// decision is proven with Groth16 and its statement recorded on the
// embedded chain kept in the directory, with no HTTP server, database or
// API keys. The decision's blockchain_tx reads back from the chain with the
// digest of the statement the caller was handed.
func ExampleOpenEmbedded() {
	ctx := context.Background()
	dir, err := exampleDir() // a new directory; OpenEmbedded creates what it needs there
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	agents, err := app.OpenEmbedded(ctx, dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer agents.Close()

	// A provider's system seals the record with the directory's Fernet key.
	year := time.Now().Year()
	rec := record.Record{Schema: record.Schema, PatientID: "PT-000123", Coverage: &record.Coverage{
		PayerID: "60054", PlanID: "PPO-GOLD", MemberID: "W123456789", Status: "active",
		Start: fmt.Sprintf("%d-01-01", year), End: fmt.Sprintf("%d-12-31", year+1),
		Deductible: 1500, DeductibleMet: 1500, Copay: 25,
	}}
	plaintext, _ := json.Marshal(rec)
	env, err := cipher.Seal(rec.PatientID, plaintext, agents.Keyring)
	if err != nil {
		fmt.Println(err)
		return
	}

	// CPT 70551 (MRI brain).
	res, err := agents.VerifyEligibility(ctx, &env, "70551")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("eligible:", res.Eligible, "coverage:", res.CoveragePct)
	fmt.Println("proof verified on chain:", res.ZKProofVerified, "issuer:", res.Issuer)

	// The chain's record of the decision: the statement's digest.
	recorded, err := agents.Ledger.Statement(ctx, common.HexToHash(res.BlockchainTx))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("recorded digest matches:", recorded.Inputs[1].String() == res.Statement.Digest)
	// Output:
	// eligible: true coverage: 80
	// proof verified on chain: true issuer: self
	// recorded digest matches: true
}

// exampleDir is a new temporary directory for ExampleOpenEmbedded, holding
// the development ZK keys from the shared test cache (internal/testcache)
// so that the Example's first open loads them instead of running the
// set-up; a program passes its own directory, and its first open sets the
// keys up there.
func exampleDir() (string, error) {
	dir, err := os.MkdirTemp("", "agents")
	if err != nil {
		return "", err
	}
	if err := zkkeys.Write(filepath.Join(dir, "zkp")); err != nil {
		return "", errors.Join(err, os.RemoveAll(dir))
	}
	return dir, nil
}
