// Package verify checks a recorded decision the way a third party would:
// from a JSON-RPC endpoint, a transaction hash and the registry's address
// alone, with no call to our service. It is what `healthagents
// verify-decision` runs; docs/verify.md shows the same checks with web3.py.
//
// Every check reads the chain as of the decision's block: the receipt and its
// StatementRecorded event, the record call's proof and public inputs, the
// verifier bound to the circuit id (re-run with an eth_call), the issuer's
// registration, and then the statement the caller was handed, part by part
// (statement.go): its stated digest against its values, that digest against
// the recorded one, its circuit name and id, its field names and order
// against the recorded circuit's schema (zkp.Schemas), every text against
// its value, its issuer key hash and revocation nonce, and that nonce's
// revocation. A part that cannot be checked fails; so does a report made
// without a statement.
//
// A decision anchored in a batch (a recordBatch transaction, batch.go) is
// checked from its BatchRecorded event instead: the statement's batch root
// and size are the event's, the statement's leaf with its Merkle path leads
// to the recorded root, the leaf's circuit is among the batch's and bound
// to a verifier at that block, the proof the answer carried (Options.Proof)
// verifies for the leaf by eth_call there, the issuer was active; then the
// same statement checks against the leaf's values.
package verify

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/zkp/statement"
)

// Chain is the read-only part of an Ethereum JSON-RPC client the checks use;
// *ethclient.Client is one.
type Chain interface {
	chain.Caller
	TransactionReceipt(ctx context.Context, hash common.Hash) (*types.Receipt, error)
	TransactionByHash(ctx context.Context, hash common.Hash) (*types.Transaction, bool, error)
	HeaderByNumber(ctx context.Context, number *big.Int) (*types.Header, error)
	CodeAt(ctx context.Context, account common.Address, block *big.Int) ([]byte, error)
}

// Options says what to check the transaction against.
type Options struct {
	// Registry is the GovernedRegistry the decision must come from (required).
	Registry common.Address
	// Statement is the statement the decision's holder was given (the
	// response's "statement"). Every part of it must be bound to what the
	// chain recorded (docs/statement.md). Without it the report ends with a
	// failed "statement" check that says what was not checked: a recorded
	// transaction alone says nothing about what was decided.
	Statement *statement.Statement
	// Confirmations is how many blocks (the decision's own included) must be
	// on top of the chain; 0 or 1 only asks that it is mined.
	Confirmations uint64
	// Proof is the decision's Groth16 proof as its answer carries it
	// (proof_data, public_inputs; ParseProof). A decision anchored in a
	// batch needs it: the batch's transaction records a Merkle root, not
	// the proof, so the proof is re-verified from the answer by eth_call to
	// the verifier bound at that block. Without it a batched decision's
	// report holds a failed "proof" check that says what was not checked.
	// A single-record decision's proof is in its own transaction: this one
	// is not used.
	Proof *Proof
}

// Check is one line of the report.
type Check struct {
	Name   string
	OK     bool
	Detail string
	// Unchecked marks a check that could not be made (no statement was
	// given): it is not OK, and says what was not checked.
	Unchecked bool
}

func (c Check) String() string {
	mark := "ok  "
	if !c.OK {
		mark = "FAIL"
	}
	return fmt.Sprintf("%s %-13s %s", mark, c.Name, c.Detail)
}

// Report is the outcome of Decision: every check run, in order, and the
// recorded statement (a single-record transaction) or batch (a batch's
// transaction) when it could be decoded.
type Report struct {
	Checks   []Check
	Recorded *chain.Recorded
	Batch    *chain.BatchRecorded
}

// OK reports whether every check passed (and at least one ran). A check
// that could not be made is not a pass.
func (r Report) OK() bool {
	return len(r.Checks) > 0 && len(r.Failed()) == 0
}

// Failed names the checks that did not pass, in order (a name once).
func (r Report) Failed() []string {
	var names []string
	for _, c := range r.Checks {
		if !c.OK && !slices.Contains(names, c.Name) {
			names = append(names, c.Name)
		}
	}
	return names
}

// Incomplete reports whether the only checks not passed are ones that
// could not be made: the chain's record holds, but what it records was
// not compared with any statement.
func (r Report) Incomplete() bool {
	unchecked := false
	for _, c := range r.Checks {
		if !c.OK && !c.Unchecked {
			return false
		}
		unchecked = unchecked || c.Unchecked
	}
	return unchecked
}

func (r Report) String() string {
	var b strings.Builder
	for _, c := range r.Checks {
		b.WriteString(c.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// add appends a check and returns ok.
func (r *Report) add(name string, ok bool, format string, args ...any) bool {
	r.Checks = append(r.Checks, Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)})
	return ok
}

// ErrRegistryRequired means Options.Registry is the zero address.
var ErrRegistryRequired = errors.New("verify: the registry address is required")

// Decision runs every check on the transaction tx. A check that fails is
// reported in the Report and stops the checks that depend on it; the error is
// only for a call that could not be made at all (bad options, the node not
// answering).
func Decision(ctx context.Context, c Chain, tx common.Hash, o Options) (Report, error) {
	var rep Report
	if o.Registry == (common.Address{}) {
		return rep, ErrRegistryRequired
	}

	r, err := c.TransactionReceipt(ctx, tx)
	if errors.Is(err, ethereum.NotFound) {
		rep.add("receipt", false, "transaction %s not found on this chain", tx.Hex())
		return rep, nil
	}
	if err != nil {
		return rep, fmt.Errorf("verify: receipt: %w", err)
	}
	if !rep.add("receipt", r.Status == types.ReceiptStatusSuccessful, "mined in block %d, status %d", r.BlockNumber, r.Status) {
		return rep, nil
	}
	block := r.BlockNumber

	t, _, err := c.TransactionByHash(ctx, tx)
	if err != nil {
		return rep, fmt.Errorf("verify: transaction: %w", err)
	}
	if !rep.add("registry", t.To() != nil && *t.To() == o.Registry, "transaction sent to %s, expected registry %s", addrOf(t.To()), o.Registry.Hex()) {
		return rep, nil
	}

	gov := chain.NewGoverned(nil, o.Registry)
	if isBatch(gov, r, t.Data()) {
		return batchDecision(ctx, c, gov, r, t.Data(), o, rep)
	}
	ev, err := gov.DecodeRecorded(r)
	if !rep.add("event", err == nil, "%s", eventDetail(ev, err)) {
		return rep, nil
	}
	rep.Recorded = &ev
	if o.Statement != nil && o.Statement.Batch != nil {
		rep.add(checkBatch, false, "the statement places its leaf in batch %s (leaf %d of %d), but this transaction records one statement "+
			"(StatementRecorded), not a batch: it is not the transaction that anchored this statement", short(o.Statement.Batch.Root),
			o.Statement.Batch.Index, o.Statement.Batch.Size)
	}

	call, err := chain.DecodeRecordCall(t.Data())
	matches := err == nil && len(call.Inputs) == 3 && call.CircuitID.Cmp(ev.CircuitID) == 0 &&
		call.Inputs[0].Cmp(ev.IssuerKeyHash) == 0 && call.Inputs[1].Cmp(ev.Digest) == 0 && call.Inputs[2].Cmp(ev.CircuitID) == 0
	if !rep.add("inputs", matches, "public inputs [issuerKeyHash, digest, circuitId] of the call equal the event's") {
		return rep, nil
	}

	view := chain.NewRegistryView(c, o.Registry)
	verifier, err := view.VerifierAt(ctx, ev.CircuitID, block)
	if err != nil {
		return rep, err
	}
	code, err := c.CodeAt(ctx, verifier, block)
	if err != nil {
		return rep, fmt.Errorf("verify: verifier code: %w", err)
	}
	if !rep.add("verifier", verifier == ev.Verifier && len(code) > 0, "circuit %s is bound to %s at block %d (event names %s)",
		short(ev.CircuitID), verifier.Hex(), block, ev.Verifier.Hex()) {
		return rep, nil
	}
	ok, err := chain.VerifyProofAt(ctx, c, verifier, call.Proof, call.Inputs, block)
	if err != nil {
		return rep, err
	}
	rep.add("proof", ok, "Groth16 verification re-run by eth_call at block %d: %s", block, accepted(ok))

	iss, err := view.Issuer(ctx, ev.IssuerKeyHash)
	if err != nil {
		return rep, err
	}
	rep.add("issuer", iss.ActiveAt(block.Uint64()), "%s", issuerDetail(ev.IssuerKeyHash, iss, block.Uint64()))

	rec := anchor{Digest: ev.Digest, IssuerKeyHash: ev.IssuerKeyHash, CircuitID: ev.CircuitID, Block: block.Uint64()}
	if err := statementChecks(ctx, view, rec, o.Statement, &rep); err != nil {
		return rep, err
	}

	if err := confirmations(ctx, c, block, o.Confirmations, &rep); err != nil {
		return rep, err
	}
	return rep, nil
}

// confirmations adds the "confirmations" check when more than one is asked.
func confirmations(ctx context.Context, c Chain, block *big.Int, want uint64, rep *Report) error {
	if want <= 1 {
		return nil
	}
	h, err := c.HeaderByNumber(ctx, nil)
	if err != nil {
		return fmt.Errorf("verify: head: %w", err)
	}
	have := new(big.Int).Sub(h.Number, block).Uint64() + 1
	rep.add("confirmations", have >= want, "%d of %d", have, want)
	return nil
}

func issuerDetail(h *big.Int, s chain.IssuerState, block uint64) string {
	switch {
	case s.RegisteredAt == 0:
		return fmt.Sprintf("issuer %s was never registered", short(h))
	case !s.ActiveAt(block):
		return fmt.Sprintf("issuer %s was not active at block %d (registered %d, retired %d)", short(h), block, s.RegisteredAt, s.RetiredAt)
	case s.RetiredAt != 0:
		return fmt.Sprintf("issuer %s was active at block %d (registered in block %d, retired later in block %d)", short(h), block, s.RegisteredAt, s.RetiredAt)
	default:
		return fmt.Sprintf("issuer %s registered in block %d and active", short(h), s.RegisteredAt)
	}
}

func eventDetail(ev chain.Recorded, err error) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("StatementRecorded digest %s issuer %s circuit %s submitter %s",
		short(ev.Digest), short(ev.IssuerKeyHash), short(ev.CircuitID), ev.Submitter.Hex())
}

func accepted(ok bool) string {
	if ok {
		return "accepted"
	}
	return "REJECTED"
}

func equalWord(a, b *big.Int) string {
	if a != nil && b != nil && a.Cmp(b) == 0 {
		return "equals"
	}
	return "differs from"
}

func addrOf(a *common.Address) string {
	if a == nil {
		return "(contract creation)"
	}
	return a.Hex()
}

// short prints a field element as 32-byte 0x-hex, as explorers and cast do.
func short(x *big.Int) string {
	if x == nil {
		return "(none)"
	}
	return fmt.Sprintf("0x%064x", x)
}
