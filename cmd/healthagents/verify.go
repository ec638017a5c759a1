package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/healthagents/healthagents/verify"
	"github.com/healthagents/healthagents/x12"
	"github.com/healthagents/healthagents/zkp/statement"
)

const verifyUsage = `usage: healthagents verify-decision --rpc URL --tx HASH [--registry ADDRESS] --statement FILE [--confirmations N]

Checks a recorded decision as a third party would, from an Ethereum JSON-RPC
endpoint alone (no call to the service): the receipt, that the transaction
called the registry, the StatementRecorded event, the call's public inputs,
the verifier bound to the circuit id, the Groth16 proof re-run with eth_call,
the issuer's registration at that block; then every part of the statement
the service returned: its stated digest against its values, that digest
against the recorded one, its circuit name and id, its field names against
the recorded circuit's schema, every text against its value, its issuer key
hash and revocation nonce, and the nonce's revocation. Prints one line per
check. docs/verify.md shows the same checks with ethers and iden3's Poseidon.

Exit status: 0 every check passed, the statement's included; 1 a check
failed (or the statement file is not a statement): do not rely on the
decision; 2 the check could not be run (bad arguments, the node did not
answer); 3 the transaction is a recorded decision but no --statement was
given, so nothing it states was checked.

Flags:`

// Exit statuses of verify-decision (docs/verify.md).
const (
	exitRefused    = 1
	exitCannotRun  = 2
	exitUnverified = 3
)

// exitError is an error that asks main for a given exit status.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// ExitCode is the process's exit status.
func (e *exitError) ExitCode() int { return e.code }

func exitWith(code int, format string, args ...any) error {
	return &exitError{code: code, err: fmt.Errorf(format, args...)}
}

// verifyDecision is `healthagents verify-decision`. It needs no service
// settings: a verifier's machine has only the chain's address.
func verifyDecision(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("verify-decision", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rpc := fs.String("rpc", "", "Ethereum JSON-RPC endpoint (required), e.g. http://127.0.0.1:8545 (the service's CHAIN_RPC_LISTEN)")
	txHex := fs.String("tx", "", "the decision's blockchain_tx (required)")
	registryHex := fs.String("registry", "", "the GovernedRegistry to pin (GET /status blockchain.registry); without it the transaction's recipient is checked and a note says so")
	statementFile := fs.String("statement", "", "JSON file holding the decision's statement (digest and opening) as the service returned it, or the whole decision response; without it the decision is not verified (exit status 3)")
	confirmations := fs.Uint64("confirmations", 1, "blocks (the decision's included) that must be on the chain")
	timeout := fs.Duration("timeout", 30*time.Second, "deadline for every call to the node")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), verifyUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return &exitError{code: exitCannotRun, err: err}
	}
	if fs.NArg() > 0 {
		return exitWith(exitCannotRun, "verify-decision: unexpected argument %q", fs.Arg(0))
	}
	if *rpc == "" || *txHex == "" {
		return exitWith(exitCannotRun, "verify-decision: --rpc and --tx are required (healthagents verify-decision -h)")
	}
	if !isHash(*txHex) {
		return exitWith(exitCannotRun, "verify-decision: --tx %q is not a 32-byte 0x-hex transaction hash", *txHex)
	}
	tx := common.HexToHash(*txHex)
	var st *statement.Statement
	if *statementFile != "" {
		s, fromResponse, err := readStatement(*statementFile, tx)
		if errors.Is(err, errStatementUnreadable) {
			return exitWith(exitCannotRun, "verify-decision: %w", err)
		}
		if err != nil {
			fmt.Fprintf(stdout, "FAIL %-13s %v\n", "statement", err)
			return exitWith(exitRefused, "verify-decision: the statement is refused: %w", err)
		}
		switch fromResponse {
		case fromJSON:
			fmt.Fprintf(stdout, "note statement     read from a decision response: only its \"statement\" is checked; the response's other fields are the service's words, bound to nothing on chain — read the decision from the statement\n")
		case from271:
			fmt.Fprintf(stdout, "note statement     read from an X12 271 (the MSG*DECISION STATEMENT segments after this transaction's): only the statement is checked; the EB segments are the service's words, bound to nothing on chain — read the decision from the statement\n")
		}
		st = &s
	}

	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	c, err := ethclient.DialContext(ctx, *rpc)
	if err != nil {
		return exitWith(exitCannotRun, "verify-decision: dial %s: %w", *rpc, err)
	}
	defer c.Close()

	var registry common.Address
	switch {
	case *registryHex != "":
		if !common.IsHexAddress(*registryHex) {
			return exitWith(exitCannotRun, "verify-decision: --registry %q is not an address", *registryHex)
		}
		registry = common.HexToAddress(*registryHex)
	default:
		t, _, err := c.TransactionByHash(ctx, tx)
		if err != nil {
			return exitWith(exitCannotRun, "verify-decision: transaction %s: %w", tx.Hex(), err)
		}
		if t.To() == nil {
			return exitWith(exitRefused, "verify-decision: transaction %s creates a contract; it is not a decision", tx.Hex())
		}
		registry = *t.To()
		fmt.Fprintf(stdout, "note registry      not pinned: checking against the transaction's recipient %s; pass --registry (the service's GET /status blockchain.registry) to check it is the service's\n", registry.Hex())
	}

	rep, err := verify.Decision(ctx, c, tx, verify.Options{Registry: registry, Statement: st, Confirmations: *confirmations})
	if err != nil {
		return exitWith(exitCannotRun, "verify-decision: %w", err)
	}
	fmt.Fprint(stdout, rep.String())
	switch {
	case rep.Incomplete():
		return exitWith(exitUnverified, "verify-decision: NOT VERIFIED: the transaction is a recorded decision, but no statement was given, so nothing it states was checked (pass --statement)")
	case !rep.OK():
		failed := rep.Failed()
		return exitWith(exitRefused, "verify-decision: REFUSED: %d of %d checks failed (%s)", len(failed), len(rep.Checks), strings.Join(failed, ", "))
	}
	fmt.Fprintf(stdout, "verified: all %d checks passed\n", len(rep.Checks))
	return nil
}

func isHash(s string) bool {
	s, ok := strings.CutPrefix(s, "0x")
	if !ok || len(s) != 64 {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}

// errStatementUnreadable marks a statement file that could not be read at all.
var errStatementUnreadable = errors.New("cannot read the statement file")

// Where readStatement found the statement.
const (
	fromFile = iota // a statement file
	fromJSON        // a decision response's "statement"
	from271         // an X12 271's MSG*DECISION STATEMENT segments
)

// readStatement reads a statement file (docs/statement.md), a decision
// response holding one under "statement", or an X12 271 holding the
// statement of transaction tx (docs/x12.md); fromResponse says which. The
// statement is read strictly — a key it does not have, or a value not in
// plain decimal, refuses it — and nothing in it is trusted: package verify
// checks every part against the chain.
func readStatement(path string, tx common.Hash) (st statement.Statement, fromResponse int, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return st, fromFile, fmt.Errorf("%w %s: %w", errStatementUnreadable, path, err)
	}
	var wrapped struct {
		Statement json.RawMessage `json:"statement"`
	}
	if bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte("ISA")) {
		fromResponse = from271
		sts, err := x12.Statements(b)
		if err != nil {
			return st, fromResponse, fmt.Errorf("%s: %w", path, err)
		}
		for txText, js := range sts {
			if isHash(txText) && common.HexToHash(txText) == tx {
				b = js
			}
		}
		if !bytes.HasPrefix(b, []byte("{")) {
			return st, fromResponse, fmt.Errorf("%s: the 271 carries no statement of transaction %s", path, tx.Hex())
		}
	} else if json.Unmarshal(b, &wrapped) == nil && len(wrapped.Statement) > 0 && wrapped.Statement[0] == '{' {
		b, fromResponse = wrapped.Statement, fromJSON // a decision response, as the service returned it
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fromResponse, fmt.Errorf("%s: not a statement JSON document: %w", path, err)
	}
	return st, fromResponse, nil
}
