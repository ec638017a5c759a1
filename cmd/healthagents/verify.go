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

const verifyUsage = `usage: healthagents verify-decision --rpc URL --tx HASH [--registry ADDRESS] --statement FILE [--proof FILE] [--confirmations N]

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

A decision anchored in a batch (its transaction a recordBatch, its
statement carrying "batch") is checked from the BatchRecorded event: the
statement's batch root and size, its leaf's Merkle path to the recorded
root, the verifier bound to the leaf's circuit, the answer's proof
(proof_data, public_inputs: read from the decision response given as
--statement, from the MSG*DECISION PROOF DATA of the X12 271 given as
--statement, or from --proof) re-run with eth_call for the leaf, the
issuer, then the statement as above.

Exit status: 0 every check passed, the statement's included; 1 a check
failed (or the statement file is not a statement): do not rely on the
decision; 2 the check could not be run (bad arguments, the node did not
answer); 3 the transaction is a recorded decision but no --statement was
given (or, for a batched decision, no proof), so not everything it states
was checked.

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
	proofFile := fs.String("proof", "", "JSON file holding the decision's proof_data and public_inputs (or the whole decision response, or its X12 271), for a decision anchored in a batch when --statement does not hold them")
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
	// A batched decision's proof is the answer's (a single-record one's is
	// in its transaction): read only when the statement names a batch or
	// --proof is given.
	var proof *verify.Proof
	if *proofFile != "" || (st != nil && st.Batch != nil) {
		p, from, err := readProofs(*statementFile, *proofFile, tx)
		if errors.Is(err, errStatementUnreadable) {
			return exitWith(exitCannotRun, "verify-decision: %w", err)
		}
		if err != nil {
			fmt.Fprintf(stdout, "FAIL %-13s %v\n", "proof", err)
			return exitWith(exitRefused, "verify-decision: the proof is refused: %w", err)
		}
		if p != nil {
			fmt.Fprintf(stdout, "note proof         read from %s; it is re-verified for the statement's leaf by eth_call\n", from)
		}
		proof = p
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

	rep, err := verify.Decision(ctx, c, tx, verify.Options{Registry: registry, Statement: st, Proof: proof, Confirmations: *confirmations})
	if err != nil {
		return exitWith(exitCannotRun, "verify-decision: %w", err)
	}
	fmt.Fprint(stdout, rep.String())
	if err := verdict(rep, st != nil); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "verified: all %d checks passed\n", len(rep.Checks))
	return nil
}

// verdict is verify-decision's reading of a report: nil when every check
// passed, else an *exitError with its exit status — exitUnverified when
// the chain's record holds but not everything it states was checked (no
// statement, or a batched leaf's proof missing), exitRefused when a check
// failed. Its message names only checks, never their details.
func verdict(rep verify.Report, withStatement bool) error {
	switch {
	case rep.Incomplete() && withStatement:
		return exitWith(exitUnverified, "verify-decision: NOT VERIFIED: the statement's leaf is in the recorded batch, but no proof was given, so nothing shows it was proven (pass the whole decision response, or a 271 that carries its MSG*DECISION PROOF DATA, as --statement, or --proof)")
	case rep.Incomplete():
		return exitWith(exitUnverified, "verify-decision: NOT VERIFIED: the transaction is a recorded decision, but no statement was given, so nothing it states was checked (pass --statement)")
	case !rep.OK():
		failed := rep.Failed()
		return exitWith(exitRefused, "verify-decision: REFUSED: %d of %d checks failed (%s)", len(failed), len(rep.Checks), strings.Join(failed, ", "))
	}
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
	return parseStatement(b, path, tx)
}

// parseStatement is readStatement of a document already in memory (bench
// -verify: a decision answer); name says where it came from in errors.
func parseStatement(b []byte, name string, tx common.Hash) (st statement.Statement, fromResponse int, err error) {
	var wrapped struct {
		Statement json.RawMessage `json:"statement"`
	}
	if is271(b) {
		fromResponse = from271
		sts, err := x12.Statements(b)
		if err != nil {
			return st, fromResponse, fmt.Errorf("%s: %w", name, err)
		}
		for txText, js := range sts {
			if isHash(txText) && common.HexToHash(txText) == tx {
				b = js
			}
		}
		if !bytes.HasPrefix(b, []byte("{")) {
			return st, fromResponse, fmt.Errorf("%s: the 271 carries no statement of transaction %s", name, tx.Hex())
		}
	} else if json.Unmarshal(b, &wrapped) == nil && len(wrapped.Statement) > 0 && wrapped.Statement[0] == '{' {
		b, fromResponse = wrapped.Statement, fromJSON // a decision response, as the service returned it
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fromResponse, fmt.Errorf("%s: not a statement JSON document: %w", name, err)
	}
	return st, fromResponse, nil
}

// readProofs finds the decision's proof: in --proof's file when given, else
// in the decision response or X12 271 given as --statement (none in a bare
// statement). from says where it was found. A proof_data (or a 271's
// MSG*DECISION PROOF DATA) that is not one is an error; none found is a nil
// proof.
func readProofs(statementFile, proofFile string, tx common.Hash) (p *verify.Proof, from string, err error) {
	path := proofFile
	if path == "" {
		path = statementFile
	}
	if path == "" {
		return nil, "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("%w %s: %w", errStatementUnreadable, path, err)
	}
	return parseProofs(b, path, proofFile != "", tx)
}

// parseProofs is readProofs of a document already in memory (bench
// -verify: a decision answer); name says where it came from. required
// (a --proof file) makes a document holding no proof an error.
func parseProofs(b []byte, name string, required bool, tx common.Hash) (p *verify.Proof, from string, err error) {
	if is271(b) {
		p, err := proofOf271(b, tx)
		switch {
		case err != nil:
			return nil, "", fmt.Errorf("%s: %w", name, err)
		case p == nil && required:
			return nil, "", fmt.Errorf("%s holds no MSG*DECISION PROOF DATA of transaction %s", name, tx.Hex())
		case p == nil:
			return nil, "", nil
		}
		return p, name + " (its MSG*DECISION PROOF DATA)", nil
	}
	var doc map[string]json.RawMessage
	if json.Unmarshal(b, &doc) != nil {
		if required {
			return nil, "", fmt.Errorf("%s: not a JSON object holding proof_data, nor an X12 271", name)
		}
		return nil, "", nil
	}
	p, where, err := findProof(b, doc, tx)
	switch {
	case err != nil:
		return nil, "", fmt.Errorf("%s: %s: %w", name, where, err)
	case p == nil && required:
		return nil, "", fmt.Errorf("%s holds no proof_data of transaction %s", name, tx.Hex())
	case p == nil:
		return nil, "", nil
	}
	return p, fmt.Sprintf("%s (%s)", name, where), nil
}

// is271 reports whether a document is an X12 interchange (a 271, for
// verify-decision) rather than JSON.
func is271(b []byte) bool { return bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte("ISA")) }

// proofOf271 is the proof a 271 carries for transaction tx (a batched
// decision's MSG*DECISION PROOF DATA), nil when it carries none.
func proofOf271(b []byte, tx common.Hash) (*verify.Proof, error) {
	ds, err := x12.Decisions(b)
	if err != nil {
		return nil, err
	}
	for txText, d := range ds {
		if !d.HasProof || !isHash(txText) || common.HexToHash(txText) != tx {
			continue
		}
		raw, err := x12.DecodeProof(d.Proof)
		if err != nil {
			return nil, fmt.Errorf("the MSG*DECISION PROOF DATA of %s: %w", tx.Hex(), err)
		}
		p, err := verify.ParseCompressedProof(raw)
		if err != nil {
			return nil, fmt.Errorf("the MSG*DECISION PROOF DATA of %s: %w", tx.Hex(), err)
		}
		return p, nil
	}
	return nil, nil
}

// findProof looks for proof_data (and public_inputs) at the top of a
// decision response and in the objects the API carries a proof in
// (verification_proof, zk_proof, proof, each of zk_proofs), skipping one
// that names another blockchain_tx. where names the one found.
func findProof(top []byte, doc map[string]json.RawMessage, tx common.Hash) (p *verify.Proof, where string, err error) {
	type candidate struct {
		where string
		raw   json.RawMessage
	}
	cands := []candidate{{"proof_data", top}}
	for _, k := range []string{"verification_proof", "zk_proof", "proof"} {
		if raw, ok := doc[k]; ok {
			cands = append(cands, candidate{k + ".proof_data", raw})
		}
	}
	var list []json.RawMessage
	if raw, ok := doc["zk_proofs"]; ok && json.Unmarshal(raw, &list) == nil {
		for i, raw := range list {
			cands = append(cands, candidate{fmt.Sprintf("zk_proofs[%d].proof_data", i), raw})
		}
	}
	for _, c := range cands {
		var obj struct {
			ProofData    *string  `json:"proof_data"`
			PublicInputs []string `json:"public_inputs"`
			Tx           string   `json:"blockchain_tx"`
		}
		if json.Unmarshal(c.raw, &obj) != nil || obj.ProofData == nil {
			continue
		}
		if obj.Tx != "" && (!isHash(obj.Tx) || common.HexToHash(obj.Tx) != tx) {
			continue
		}
		p, err := verify.ParseProof(*obj.ProofData, obj.PublicInputs)
		return p, c.where, err
	}
	return nil, "", nil
}
