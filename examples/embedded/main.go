// Command embedded runs the healthcare agents in-process, with no HTTP: it
// seals a patient record, checks eligibility and validates two
// prescriptions through healthagents.Service, the same pipeline the server
// runs. A program that later moves to a remote server swaps the Service for
// a client.Client; both satisfy client.Agents.
//
//	go run ./examples/embedded
//
// FERNET_KEY, if set, is the key (a fresh one is generated otherwise). This
// example runs without proofs; the server adds them with
// healthagents.WithAttestor.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/record"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "embedded:", err)
		os.Exit(1)
	}
}

// agents is what this program uses of the service; *healthagents.Service and
// *client.Client both have these methods.
type agents interface {
	VerifyEligibility(ctx context.Context, env *healthagents.PatientData, procedureCode string) (*healthagents.EligibilityResult, error)
	ValidatePrescription(ctx context.Context, env *healthagents.PatientData, drugCode string) (*healthagents.PrescriptionResult, error)
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) > 0 {
		return fmt.Errorf("unexpected arguments %q", args)
	}
	key := getenv("FERNET_KEY")
	if key == "" {
		var err error
		if key, err = cipher.GenerateKey(); err != nil {
			return err
		}
	}
	kr, err := cipher.ParseKeyring(key)
	if err != nil {
		return fmt.Errorf("FERNET_KEY: %w", err)
	}
	svc, err := healthagents.New(kr)
	if err != nil {
		return err
	}
	return check(ctx, svc, kr, stdout)
}

func check(ctx context.Context, a agents, kr *cipher.Keyring, stdout io.Writer) error {
	rec := sampleRecord(time.Now())
	plaintext, err := rec.Marshal()
	if err != nil {
		return err
	}
	env, err := cipher.Seal(rec.PatientID, plaintext, kr)
	clear(plaintext)
	if err != nil {
		return err
	}

	res, err := a.VerifyEligibility(ctx, &env, "PROC003")
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "eligibility %s: eligible=%t coverage=%g%% prior_authorization=%t\n",
		res.ProcedureCode, res.Eligible, res.CoveragePct, res.RequiresAuthorization)

	rx, err := a.ValidatePrescription(ctx, &env, "6809") // metformin
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "prescription %s: valid=%t interactions_checked=%t\n", rx.DrugCode, rx.Valid, rx.InteractionsChecked)

	// Warfarin with the ibuprofen the patient takes: refused, with the same
	// error code the HTTP API answers (422).
	_, err = a.ValidatePrescription(ctx, &env, "11289")
	var he *healthagents.Error
	if !errors.As(err, &he) {
		return fmt.Errorf("warfarin: want a refusal, got %v", err)
	}
	fmt.Fprintf(stdout, "prescription 11289: refused (%s): %s\n", he.Code, he.Detail)

	_, err = a.VerifyEligibility(ctx, &env, "PROC999")
	fmt.Fprintf(stdout, "eligibility PROC999: %s: %v\n", healthagents.ErrorCode(err), err)
	return nil
}

// sampleRecord is a patient with active coverage for the whole current year
// who takes ibuprofen.
func sampleRecord(now time.Time) *record.Record {
	year := now.Year()
	return &record.Record{
		Schema:    record.Schema,
		PatientID: "PT-000456",
		BirthDate: "1975-09-14",
		Sex:       "male",
		Coverage: &record.Coverage{
			PayerID: "60054", PlanID: "HMO-SILVER", MemberID: "H987654321",
			Status: record.StatusActive,
			Start:  fmt.Sprintf("%d-01-01", year), End: fmt.Sprintf("%d-12-31", year),
			Deductible: 2000, DeductibleMet: 2000, Copay: 40,
		},
		Conditions:  []string{"E11.9"},
		Medications: []string{"5640"}, // ibuprofen
	}
}
