// Command healthagents runs the healthcare agents service and its tools.
//
//	healthagents [serve]            run the HTTP service (settings from the environment)
//	healthagents seal [--fhir] FILE print a PatientData envelope for a plaintext record or FHIR R4 Bundle
//	healthagents x12 271 [flags]    render an eligibility answer (JSON on stdin) as an X12 271 (docs/x12.md)
//	healthagents x12 270 --server URL   send an X12 270 (stdin) to a running service, print its 271 (docs/x12.md)
//	healthagents keys create|list|revoke   manage API keys offline, on the service's database
//	healthagents chain deploy       deploy the governed registry and verifiers on CHAIN_ENDPOINT
//	healthagents chain register-issuer|retire-issuer|set-submitter|revoke-nonce|add-circuit
//	                                the registry owner's actions: unsigned for a cold wallet, or sent with --owner-key
//	healthagents bench [flags]      drive a running server and print latency percentiles
//	healthagents issuer keygen|sign a payer's coverage credentials (docs/credentials.md)
//	healthagents ceremony init|contribute|init-phase2|verify|finalize
//	                                a multi-party setup of the ZK keys (docs/ceremony.md)
//	healthagents verify-decision --rpc URL --tx HASH [--registry ADDRESS] [--statement FILE]
//	                                check a recorded decision from the chain alone (docs/verify.md)
//	healthagents model export --server URL --api-key KEY [--format onnx|json]
//	                                the latest federated model, as ONNX or its JSON answer
//	healthagents version            print the version
//
// Settings are environment variables, listed by `healthagents serve -h` and
// docs/decisions.md#settings, both from app.Settings. A variable with one of
// our prefixes that is not a setting (FEDERATED_EPSILLON) stops every
// subcommand that reads settings, naming the nearest one (app.CheckEnviron).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/healthagents/healthagents"
	"github.com/redis/go-redis/v9"

	"github.com/healthagents/healthagents/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := start(ctx, os.Args[1:], os.Environ(), os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "healthagents:", err)
		code := 1
		var ec interface{ ExitCode() int }
		if errors.As(err, &ec) {
			code = ec.ExitCode() // verify-decision's statuses (docs/verify.md)
		}
		os.Exit(code)
	}
}

func isHelp(a string) bool { return a == "-h" || a == "--help" || a == "-help" }

// plainUsage is what -h prints for the subcommands without a flag set.
var plainUsage = map[string]string{
	"seal":  "usage: healthagents seal [--fhir] FILE\n\nPrints the PatientData envelope of the plaintext record in FILE (- for standard input), sealed\nwith the service's Fernet key (FERNET_KEY, or DATA_DIR/fernet.key), ready to POST. The record is\nour record JSON (docs/record.schema.json) or a FHIR R4 Bundle (docs/decisions/fhir.md); --fhir\ninsists on a Bundle. A malformed record is refused, naming the field; notes on standard error say\nwhat a well-formed one still lacks for decisions (coverage, catalogue drugs, misspelt fields).",
	"chain": chainUsage,
	"keys":  errKeysUsage.Error(),
}

// serveUsage is what `healthagents serve --help` prints.
func serveUsage() string {
	return `usage: healthagents serve

Runs the HTTP service on HOST:PORT (default 0.0.0.0:8000). It takes no flags:
every setting is an environment variable (docs/decisions.md#settings; federated
training: docs/federated-privacy.md). A variable with one of our prefixes that is
not one of these refuses the start, naming the nearest setting.

` + app.SettingsUsage()
}

// errUsage marks a command-line mistake.
var errUsage = errors.New("usage: healthagents [serve | seal [--fhir] FILE | x12 271|270 | keys create|list|revoke | chain deploy|register-issuer|retire-issuer|set-submitter|revoke-nonce|add-circuit | bench [flags] | participant [init] --server URL --api-key KEY --data FILE.csv [--fhir-label SYSTEM|CODE] [--task ID] | model export --server URL --api-key KEY [--format onnx|json] [--out FILE] | issuer keygen|sign | ceremony init|contribute|init-phase2|verify|finalize | verify-decision --rpc URL --tx HASH [--registry ADDRESS] [--statement FILE] | version]")

// offline are the subcommands that read no settings: they run on
// machines (a ceremony participant's, a third party's) whose environment
// is none of ours, and check none.
func offline(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "ceremony", "verify-decision", "version", "-v", "--version", "help", "-h", "--help":
		return true
	case "x12":
		return len(args) < 2 || args[1] != "270"
	}
	return slices.ContainsFunc(args[1:], isHelp)
}

// start is main: it refuses an environment that sets a variable with one
// of our prefixes that is not a setting (app.CheckEnviron) before any
// subcommand that reads settings, then runs the command on environ.
func start(ctx context.Context, args, environ []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if !offline(args) {
		if err := app.CheckEnviron(environ); err != nil {
			return err
		}
	}
	vars := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			if _, dup := vars[k]; !dup { // the first wins, as with os.Getenv
				vars[k] = v
			}
		}
	}
	return run(ctx, args, func(k string) string { return vars[k] }, stdin, stdout, stderr)
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	// -h on a subcommand without flags of its own prints its usage and
	// starts nothing (the others print their flags).
	if u, ok := plainUsage[cmd]; ok && slices.ContainsFunc(args, isHelp) {
		_, err := fmt.Fprintln(stdout, u)
		return err
	}
	if cmd == "serve" && len(args) > 0 {
		// serve takes no flags: its settings are environment variables.
		if args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
			_, err := fmt.Fprintln(stdout, serveUsage())
			return err
		}
		return fmt.Errorf("serve takes no arguments (got %q); its settings are environment variables: healthagents serve --help", args[0])
	}
	if cmd == "ceremony" {
		// Offline: a participant's machine needs no service settings.
		return ceremonyCommand(ctx, zkpCeremony(), args, stdout, stderr)
	}
	if cmd == "x12" && len(args) > 0 && args[0] == "270" {
		// A client of a running service (x12_270.go).
		return x12Inquire(ctx, args[1:], getenv, stdin, stdout, stderr)
	}
	if cmd == "x12" {
		// Offline: renders an answer, needs no service settings.
		return x12Command(args, time.Now, stdin, stdout, stderr)
	}
	if cmd == "model" {
		// A client of a running coordinator (model.go).
		return modelCommand(ctx, args, getenv, stdout, stderr)
	}
	if cmd == "verify-decision" {
		// A third party's machine: only a chain endpoint, no service settings.
		return verifyDecision(ctx, args, stdout, stderr)
	}
	cfg, err := app.ConfigFromEnv(getenv)
	if err != nil {
		return err
	}
	logger := newLogger(stderr, cfg.LogLevel)
	redis.SetLogger(redisLogger{logger}) // its lines into the JSON log (redislog.go)
	if err := harnessed(&cfg, getenv, logger); err != nil {
		return err
	}
	switch cmd {
	case "serve":
		return serve(ctx, cfg, logger, nil)
	case "bench":
		return bench(ctx, cfg, logger, args, stdout)
	case "keys":
		return runKeys(ctx, cfg, args, stdout)
	case "chain":
		return chainCommand(ctx, getenv, logger, args, stdout)
	case "seal":
		return seal(cfg, logger, args, stdin, stdout, stderr)
	case "participant":
		return participate(ctx, args, getenv, logger, stdout, stderr)
	case "issuer":
		return issuerCommand(args, stdin, stdout, stderr)
	case "version", "-v", "--version":
		_, err := fmt.Fprintln(stdout, "healthagents", healthagents.Version)
		return err
	case "help", "-h", "--help":
		_, err := fmt.Fprintln(stdout, errUsage.Error())
		return err
	default:
		return fmt.Errorf("unknown command %q\n%w", cmd, errUsage)
	}
}

func newLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}
