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
// Settings: HOST, PORT, LOG_LEVEL, DATABASE_URL, CHAIN_ENDPOINT,
// CHAIN_PRIVATE_KEY, CHAIN_REGISTRY, CHAIN_ID, CHAIN_RPC_LISTEN, CHAIN_OWNER,
// CHAIN_OWNER_KEY_FILE, CHAIN_LEGACY_REGISTRY, CHAIN_CONFIRMATIONS, COVERAGE_TRUST,
// PHARMACY_ORACLE, IPFS_ENDPOINT, FERNET_KEY, DATA_DIR, ADMIN_TOKEN, REDIS_URL,
// HEALTHAGENTS_ENV, TLS_CERT_FILE, TLS_KEY_FILE, CORS_ORIGINS, TRUSTED_PROXIES, REPLICA_URL,
// MAX_IN_FLIGHT, ADMISSION_QUEUE, ADMISSION_WAIT, MAX_CONNECTIONS, ZK_KEYS_DIR,
// OTEL_EXPORTER_OTLP_ENDPOINT, ENVELOPE_TTL, and the federated run:
// FEDERATED_TASK, FEDERATED_DP, FEDERATED_EPSILON, FEDERATED_DELTA,
// FEDERATED_CLIP_NORM, FEDERATED_ROUNDS, FEDERATED_MIN_PARTICIPANTS,
// FEDERATED_TARGET_PARTICIPANTS, FEDERATED_ROUND_TIMEOUT, FEDERATED_PROOFS. See docs/decisions.md#settings. CHAIN_REPLACE_VERIFIERS
// is gone and refused: verifiers are immutable per circuit id (docs/decisions/governance.md).
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
	"syscall"
	"time"

	"github.com/healthagents/healthagents"
	"github.com/redis/go-redis/v9"

	"github.com/healthagents/healthagents/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
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
const serveUsage = `usage: healthagents serve

Runs the HTTP service on HOST:PORT (default 0.0.0.0:8000). It takes no flags:
every setting is an environment variable (docs/decisions.md#settings):
HOST, PORT, LOG_LEVEL, DATABASE_URL, CHAIN_ENDPOINT, CHAIN_PRIVATE_KEY,
CHAIN_REGISTRY, CHAIN_ID, CHAIN_RPC_LISTEN, CHAIN_OWNER, CHAIN_OWNER_KEY_FILE,
CHAIN_LEGACY_REGISTRY, CHAIN_CONFIRMATIONS, COVERAGE_TRUST,
PHARMACY_ORACLE, IPFS_ENDPOINT, FERNET_KEY, DATA_DIR, ADMIN_TOKEN, REDIS_URL,
HEALTHAGENTS_ENV, TLS_CERT_FILE, TLS_KEY_FILE, CORS_ORIGINS, TRUSTED_PROXIES,
REPLICA_URL, MAX_IN_FLIGHT, ADMISSION_QUEUE, ADMISSION_WAIT, MAX_CONNECTIONS, ZK_KEYS_DIR,
OTEL_EXPORTER_OTLP_ENDPOINT, ENVELOPE_TTL; federated training (see
docs/federated-privacy.md): FEDERATED_TASK, FEDERATED_DP, FEDERATED_EPSILON,
FEDERATED_DELTA, FEDERATED_CLIP_NORM, FEDERATED_ROUNDS,
FEDERATED_MIN_PARTICIPANTS, FEDERATED_TARGET_PARTICIPANTS,
FEDERATED_ROUND_TIMEOUT, FEDERATED_PROOFS.`

// errUsage marks a command-line mistake.
var errUsage = errors.New("usage: healthagents [serve | seal [--fhir] FILE | x12 271|270 | keys create|list|revoke | chain deploy|register-issuer|retire-issuer|set-submitter|revoke-nonce|add-circuit | bench [flags] | participant [init] --server URL --api-key KEY --data FILE.csv [--fhir-label SYSTEM|CODE] [--task ID] | model export --server URL --api-key KEY [--format onnx|json] [--out FILE] | issuer keygen|sign | ceremony init|contribute|init-phase2|verify|finalize | verify-decision --rpc URL --tx HASH [--registry ADDRESS] [--statement FILE] | version]")

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
			_, err := fmt.Fprintln(stdout, serveUsage)
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
