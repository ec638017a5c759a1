package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/fhir"
	"github.com/healthagents/healthagents/prescription"
	"github.com/healthagents/healthagents/record"
)

// seal reads a plaintext record (FILE, or - for stdin), checks it, and prints
// the PatientData envelope sealed with the service's key. The plaintext is
// our record JSON or a FHIR R4 Bundle (told apart by its resourceType);
// --fhir insists on a Bundle.
func seal(cfg app.Config, logger *slog.Logger, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	onlyFHIR := len(args) == 2 && args[0] == "--fhir"
	if onlyFHIR {
		args = args[1:]
	}
	if len(args) != 1 {
		return fmt.Errorf("usage: healthagents seal [--fhir] FILE (or - for standard input)")
	}
	var plaintext []byte
	var err error
	if args[0] == "-" {
		plaintext, err = io.ReadAll(io.LimitReader(stdin, fhir.MaxSize+1))
	} else {
		plaintext, err = os.ReadFile(args[0])
	}
	if err != nil {
		return err
	}
	drugs, err := prescription.New()
	if err != nil {
		return err
	}
	var rec *record.Record
	var src *fhir.Sources
	if onlyFHIR || fhir.IsFHIR(plaintext) {
		// The Bundle is read as the service reads it: medications with the
		// drug catalogue.
		r, s, err := fhir.Map(plaintext, fhir.Options{Drugs: drugs})
		if err != nil {
			return err
		}
		rec, src = r, &s
	} else if rec, err = record.Parse(plaintext); err != nil {
		return err
	}
	for _, n := range sealNotes(plaintext, rec, src, time.Now(), drugs) {
		fmt.Fprintln(stderr, "note:", n)
	}
	kr, err := app.LoadKeyring(cfg, logger)
	if err != nil {
		return err
	}
	env, err := cipher.Seal(rec.PatientID, plaintext, kr)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(env)
}
