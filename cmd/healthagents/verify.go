package main

import (
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
	"github.com/healthagents/healthagents/zkp/statement"
)

const verifyUsage = `usage: healthagents verify-decision --rpc URL --tx HASH [--registry ADDRESS] [--statement FILE] [--confirmations N]

Checks a recorded decision as a third party would, from an Ethereum JSON-RPC
endpoint alone (no call to the service): the receipt, that the transaction
called the registry, the StatementRecorded event, the call's public inputs,
the verifier bound to the circuit id, the Groth16 proof re-run with eth_call,
the issuer's registration at that block and, given the statement the service
returned, the digest recomputed from its opening and the credential nonce's
revocation. Prints one line per check; exits 1 if any fails.
docs/verify.md shows the same checks with cast or ethers and iden3's Poseidon.

Flags:`

// verifyDecision is `healthagents verify-decision`. It needs no service
// settings: a verifier's machine has only the chain's address.
func verifyDecision(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("verify-decision", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rpc := fs.String("rpc", "", "Ethereum JSON-RPC endpoint (required), e.g. http://127.0.0.1:8545 (the service's CHAIN_RPC_LISTEN)")
	txHex := fs.String("tx", "", "the decision's blockchain_tx (required)")
	registryHex := fs.String("registry", "", "the GovernedRegistry to pin (GET /status blockchain.registry); without it the transaction's recipient is checked and a note says so")
	statementFile := fs.String("statement", "", "JSON file holding the decision's statement (digest and opening) as the service returned it, or the whole decision response")
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
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("verify-decision: unexpected argument %q", fs.Arg(0))
	}
	if *rpc == "" || *txHex == "" {
		return errors.New("verify-decision: --rpc and --tx are required (healthagents verify-decision -h)")
	}
	if !isHash(*txHex) {
		return fmt.Errorf("verify-decision: --tx %q is not a 32-byte 0x-hex transaction hash", *txHex)
	}
	tx := common.HexToHash(*txHex)
	var claim *verify.Claim
	if *statementFile != "" {
		c, err := readStatementClaim(*statementFile)
		if err != nil {
			return fmt.Errorf("verify-decision: %w", err)
		}
		claim = c
	}

	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	c, err := ethclient.DialContext(ctx, *rpc)
	if err != nil {
		return fmt.Errorf("verify-decision: dial %s: %w", *rpc, err)
	}
	defer c.Close()

	var registry common.Address
	switch {
	case *registryHex != "":
		if !common.IsHexAddress(*registryHex) {
			return fmt.Errorf("verify-decision: --registry %q is not an address", *registryHex)
		}
		registry = common.HexToAddress(*registryHex)
	default:
		t, _, err := c.TransactionByHash(ctx, tx)
		if err != nil {
			return fmt.Errorf("verify-decision: transaction %s: %w", tx.Hex(), err)
		}
		if t.To() == nil {
			return fmt.Errorf("verify-decision: transaction %s creates a contract; it is not a decision", tx.Hex())
		}
		registry = *t.To()
		fmt.Fprintf(stdout, "note registry      not pinned: checking against the transaction's recipient %s; pass --registry (the service's GET /status blockchain.registry) to check it is the service's\n", registry.Hex())
	}

	rep, err := verify.Decision(ctx, c, tx, verify.Options{Registry: registry, Claim: claim, Confirmations: *confirmations})
	if err != nil {
		return fmt.Errorf("verify-decision: %w", err)
	}
	fmt.Fprint(stdout, rep.String())
	if !rep.OK() {
		n := 0
		for _, ch := range rep.Checks {
			if !ch.OK {
				n++
			}
		}
		return fmt.Errorf("verify-decision: %d of %d checks failed", n, len(rep.Checks))
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

// readStatementClaim reads a statement file (docs/statement.md), or a
// decision response holding one under "statement", and recomputes its
// digest from the opening: the digest the file states is not trusted, the
// recomputed one is compared with the chain's. The revocation nonce checked
// is the one the digest commits to (the opening's "revocation_nonce"
// field); the opening's plain copy must agree with it, so an altered copy
// (or one a JSON tool rounded to a float: it is above 2^53) cannot point
// the revocation check at another nonce.
func readStatementClaim(path string) (*verify.Claim, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("statement: %w", err)
	}
	var wrapped struct {
		Statement json.RawMessage `json:"statement"`
	}
	if json.Unmarshal(b, &wrapped) == nil && len(wrapped.Statement) > 0 && wrapped.Statement[0] == '{' {
		b = wrapped.Statement // a decision response, as the service returned it
	}
	var st statement.Statement
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("statement %s: not a statement JSON document: %w", path, err)
	}
	if len(st.Opening.Fields) == 0 {
		return nil, fmt.Errorf("statement %s: the opening has no fields", path)
	}
	d, err := st.Opening.Recompute()
	if err != nil {
		return nil, fmt.Errorf("statement %s: %w", path, err)
	}
	nonce := st.Opening.RevocationNonce
	for _, f := range st.Opening.Fields {
		if f.Name != "revocation_nonce" {
			continue
		}
		if !f.Value.IsUint64() || f.Value.Uint64() != nonce {
			return nil, fmt.Errorf("statement %s: opening.revocation_nonce %d is not the committed revocation_nonce field %s (was the file rewritten by a tool that rounds large numbers?)", path, nonce, f.Value)
		}
	}
	return &verify.Claim{Digest: d, IssuerKeyHash: st.Opening.IssuerKeyHash, CircuitID: st.Opening.CircuitID, RevocationNonce: &nonce}, nil
}
