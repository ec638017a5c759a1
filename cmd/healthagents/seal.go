package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/record"
)

// seal reads a plaintext record (FILE, or - for stdin), checks it, and prints
// the PatientData envelope sealed with the service's key.
func seal(cfg app.Config, logger *slog.Logger, args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: healthagents seal FILE (or - for standard input)")
	}
	var plaintext []byte
	var err error
	if args[0] == "-" {
		plaintext, err = io.ReadAll(io.LimitReader(stdin, record.MaxSize+1))
	} else {
		plaintext, err = os.ReadFile(args[0])
	}
	if err != nil {
		return err
	}
	rec, err := record.Parse(plaintext)
	if err != nil {
		return err
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
