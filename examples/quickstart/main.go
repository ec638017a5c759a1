// Command quickstart calls a running healthagents server with the Go SDK: it
// seals a patient record with the server's Fernet key and asks whether the
// patient is covered for a procedure. It starts nothing itself.
//
// Start a server (`go run ./cmd/healthagents serve`), then, from the same
// directory:
//
//	go run ./examples/quickstart
//	go run ./examples/quickstart -procedure PROC003
//
// HEALTHAGENTS_URL names the server (default http://localhost:8000).
// FERNET_KEY is the server's key; without it the key the server generated
// under data/fernet.key is read (-key-file). HEALTHAGENTS_API_KEY, if set,
// is sent as the bearer key.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/record"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("quickstart", flag.ContinueOnError)
	fs.SetOutput(stdout)
	baseURL := fs.String("url", or(getenv("HEALTHAGENTS_URL"), "http://localhost:8000"), "server base URL")
	keyFile := fs.String("key-file", "data/fernet.key", "file holding the server's Fernet key, read when FERNET_KEY is unset")
	procedure := fs.String("procedure", "PROC001", "procedure code to check")
	if err := fs.Parse(args); err != nil {
		return err
	}

	key, err := fernetKey(getenv, *keyFile)
	if err != nil {
		return err
	}
	var opts []client.Option
	if k := getenv("HEALTHAGENTS_API_KEY"); k != "" {
		opts = append(opts, client.WithAPIKey(k))
	}
	c, err := client.New(*baseURL, opts...)
	if err != nil {
		return err
	}

	h, err := c.Health(ctx)
	if err != nil {
		return fmt.Errorf("is the server running at %s? %w", c.BaseURL(), err)
	}
	fmt.Fprintf(stdout, "server %s: %s (version %s)\n", c.BaseURL(), h.Status, h.Version)

	// The plaintext record never leaves this process unencrypted.
	env, err := client.SealRecord(sampleRecord(time.Now()), key)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "sealed record of %s: data_hash %s…, ipfs_cid %s\n", env.PatientID, env.DataHash[:12], env.IPFSCID)

	res, err := c.VerifyEligibility(ctx, env, *procedure)
	switch {
	case client.IsNotFound(err):
		return fmt.Errorf("unknown procedure %q: %w", *procedure, err)
	case client.IsInvalid(err):
		return fmt.Errorf("the server refused the envelope (is FERNET_KEY the server's key?): %w", err)
	case err != nil:
		return err
	}
	fmt.Fprintf(stdout, "procedure %s: eligible=%t coverage=%g%% prior_authorization=%t zk_proof_verified=%t\n",
		res.ProcedureCode, res.Eligible, res.CoveragePct, res.RequiresAuthorization, res.ZKProofVerified)
	if res.Reason != nil {
		fmt.Fprintf(stdout, "reason: %s\n", *res.Reason)
	}
	return nil
}

// fernetKey returns FERNET_KEY, or the key kept in path.
func fernetKey(getenv func(string) string, path string) (string, error) {
	if k := getenv("FERNET_KEY"); k != "" {
		return k, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("set FERNET_KEY to the server's key, or run from the directory where the server keeps %s: %w", path, err)
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// sampleRecord is a patient with active coverage for the whole current year.
func sampleRecord(now time.Time) *record.Record {
	year := now.Year()
	return &record.Record{
		Schema:    record.Schema,
		PatientID: "PT-000123",
		BirthDate: "1968-04-02",
		Sex:       "female",
		Coverage: &record.Coverage{
			PayerID: "60054", PlanID: "PPO-GOLD", MemberID: "W123456789",
			Status: record.StatusActive,
			Start:  fmt.Sprintf("%d-01-01", year), End: fmt.Sprintf("%d-12-31", year),
			Deductible: 1500, DeductibleMet: 1500, Copay: 25,
		},
		Conditions:   []string{"E11.9"},
		Observations: map[string]float64{"glucose": 148, "bmi": 33.6},
	}
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
