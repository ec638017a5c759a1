package healthagents_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/record"
)

// exampleEnvelope seals a record the way a provider's system would, with
// coverage running through next year.
func exampleEnvelope(kr *cipher.Keyring, medications ...string) *healthagents.PatientData {
	year := time.Now().Year()
	rec := record.Record{
		Schema:    record.Schema,
		PatientID: "PT-000123",
		Coverage: &record.Coverage{
			PayerID: "60054", PlanID: "PPO-GOLD", MemberID: "W123456789", Status: "active",
			Start: fmt.Sprintf("%d-01-01", year), End: fmt.Sprintf("%d-12-31", year+1),
			Deductible: 1500, DeductibleMet: 1500, Copay: 25,
		},
		Conditions:  []string{"E11.9"},
		Medications: medications,
	}
	plaintext, err := json.Marshal(rec)
	if err != nil {
		panic(err)
	}
	env, err := cipher.Seal(rec.PatientID, plaintext, kr)
	if err != nil {
		panic(err)
	}
	return &env
}

// The agents in-process: a Service opens envelopes with the keyring it is
// given and decides. Without an Attestor (package attest, as app.Open wires
// it) nothing is proven, so zk_proof_verified is false; the server and the
// binary always run with one.
func ExampleService_VerifyEligibility() {
	key, _ := cipher.GenerateKey()
	kr, _ := cipher.ParseKeyring(key)
	svc, err := healthagents.New(kr)
	if err != nil {
		fmt.Println(err)
		return
	}
	// CPT 70551 (MRI brain) is in the catalogue's MRI class, PROC001.
	res, err := svc.VerifyEligibility(context.Background(), exampleEnvelope(kr), "70551")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("eligible:", res.Eligible, "coverage:", res.CoveragePct, "prior authorization:", res.RequiresAuthorization)
	fmt.Println("proven:", res.ZKProofVerified)
	// Output:
	// eligible: true coverage: 80 prior authorization: true
	// proven: false
}

// A drug that interacts with a current medication is refused with an
// error whose code the HTTP server maps to 422. RxNorm 11289 is warfarin,
// 5640 ibuprofen, 6809 metformin.
func ExampleService_ValidatePrescription() {
	key, _ := cipher.GenerateKey()
	kr, _ := cipher.ParseKeyring(key)
	svc, err := healthagents.New(kr)
	if err != nil {
		fmt.Println(err)
		return
	}
	env := exampleEnvelope(kr, "11289")
	if res, err := svc.ValidatePrescription(context.Background(), env, "6809"); err == nil {
		fmt.Println("metformin valid:", res.Valid)
	}
	_, err = svc.ValidatePrescription(context.Background(), env, "5640")
	var e *healthagents.Error
	if errors.As(err, &e) {
		fmt.Println("ibuprofen:", e.Code)
		fmt.Println(e.Detail)
	}
	// Output:
	// metformin valid: true
	// ibuprofen: unprocessable
	// Prescription validation failed: Drug interaction detected with warfarin
}
