// Package verify checks a recorded decision the way a third party would:
// from a JSON-RPC endpoint, a transaction hash and the registry's address
// alone, with no call to our service. It is what `healthagents
// verify-decision` runs; docs/verify.md shows the same checks with web3.py.
//
// Every check reads the chain as of the decision's block: the receipt and its
// StatementRecorded event, the record call's proof and public inputs, the
// verifier bound to the circuit id (re-run with an eth_call), the issuer's
// registration, and — given the statement the caller was handed — the digest
// recomputed from its opening and the credential nonce's revocation.
package verify

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/healthagents/healthagents/chain"
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

// Claim is what the holder of a statement asserts about the decision: the
// digest recomputed from the statement's opening and, when the opening names
// them, the issuer key hash, circuit id and credential revocation nonce.
type Claim struct {
	Digest          *big.Int
	IssuerKeyHash   *big.Int // nil: not claimed
	CircuitID       *big.Int // nil: not claimed
	RevocationNonce *uint64  // nil: not claimed
}

// Options says what to check the transaction against.
type Options struct {
	// Registry is the GovernedRegistry the decision must come from (required).
	Registry common.Address
	// Claim, when set, must match the recorded statement.
	Claim *Claim
	// Confirmations is how many blocks (the decision's own included) must be
	// on top of the chain; 0 or 1 only asks that it is mined.
	Confirmations uint64
}

// Check is one line of the report.
type Check struct {
	Name   string
	OK     bool
	Detail string
}

func (c Check) String() string {
	mark := "ok  "
	if !c.OK {
		mark = "FAIL"
	}
	return fmt.Sprintf("%s %-13s %s", mark, c.Name, c.Detail)
}

// Report is the outcome of Decision: every check run, in order, and the
// recorded statement when it could be decoded.
type Report struct {
	Checks   []Check
	Recorded *chain.Recorded
}

// OK reports whether every check passed (and at least one ran).
func (r Report) OK() bool {
	for _, c := range r.Checks {
		if !c.OK {
			return false
		}
	}
	return len(r.Checks) > 0
}

func (r Report) String() string {
	var b strings.Builder
	for _, c := range r.Checks {
		b.WriteString(c.String())
		b.WriteByte('\n')
	}
	return b.String()
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
	add := func(name string, ok bool, format string, args ...any) bool {
		rep.Checks = append(rep.Checks, Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)})
		return ok
	}

	r, err := c.TransactionReceipt(ctx, tx)
	if errors.Is(err, ethereum.NotFound) {
		add("receipt", false, "transaction %s not found on this chain", tx.Hex())
		return rep, nil
	}
	if err != nil {
		return rep, fmt.Errorf("verify: receipt: %w", err)
	}
	if !add("receipt", r.Status == types.ReceiptStatusSuccessful, "mined in block %d, status %d", r.BlockNumber, r.Status) {
		return rep, nil
	}
	block := r.BlockNumber

	t, _, err := c.TransactionByHash(ctx, tx)
	if err != nil {
		return rep, fmt.Errorf("verify: transaction: %w", err)
	}
	if !add("registry", t.To() != nil && *t.To() == o.Registry, "transaction sent to %s, expected registry %s", addrOf(t.To()), o.Registry.Hex()) {
		return rep, nil
	}

	gov := chain.NewGoverned(nil, o.Registry)
	ev, err := gov.DecodeRecorded(r)
	if !add("event", err == nil, "%s", eventDetail(ev, err)) {
		return rep, nil
	}
	rep.Recorded = &ev

	call, err := chain.DecodeRecordCall(t.Data())
	matches := err == nil && len(call.Inputs) == 3 && call.CircuitID.Cmp(ev.CircuitID) == 0 &&
		call.Inputs[0].Cmp(ev.IssuerKeyHash) == 0 && call.Inputs[1].Cmp(ev.Digest) == 0 && call.Inputs[2].Cmp(ev.CircuitID) == 0
	if !add("inputs", matches, "public inputs [issuerKeyHash, digest, circuitId] of the call equal the event's") {
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
	if !add("verifier", verifier == ev.Verifier && len(code) > 0, "circuit %s is bound to %s at block %d (event names %s)",
		short(ev.CircuitID), verifier.Hex(), block, ev.Verifier.Hex()) {
		return rep, nil
	}
	ok, err := chain.VerifyProofAt(ctx, c, verifier, call.Proof, call.Inputs, block)
	if err != nil {
		return rep, err
	}
	add("proof", ok, "Groth16 verification re-run by eth_call at block %d: %s", block, accepted(ok))

	iss, err := view.Issuer(ctx, ev.IssuerKeyHash)
	if err != nil {
		return rep, err
	}
	add("issuer", iss.ActiveAt(block.Uint64()), "%s", issuerDetail(ev.IssuerKeyHash, iss, block.Uint64()))

	if o.Claim != nil {
		claimChecks(ctx, view, ev, *o.Claim, block.Uint64(), add)
	}

	if o.Confirmations > 1 {
		h, err := c.HeaderByNumber(ctx, nil)
		if err != nil {
			return rep, fmt.Errorf("verify: head: %w", err)
		}
		have := new(big.Int).Sub(h.Number, block).Uint64() + 1
		add("confirmations", have >= o.Confirmations, "%d of %d", have, o.Confirmations)
	}
	return rep, nil
}

func claimChecks(ctx context.Context, view *chain.RegistryView, ev chain.Recorded, cl Claim, block uint64,
	add func(string, bool, string, ...any) bool) {
	add("statement", cl.Digest != nil && cl.Digest.Cmp(ev.Digest) == 0,
		"digest recomputed from the opening %s the recorded digest %s", equalWord(cl.Digest, ev.Digest), short(ev.Digest))
	if cl.IssuerKeyHash != nil {
		add("statement", cl.IssuerKeyHash.Cmp(ev.IssuerKeyHash) == 0, "issuer key hash of the opening %s the recorded one",
			equalWord(cl.IssuerKeyHash, ev.IssuerKeyHash))
	}
	if cl.CircuitID != nil {
		add("statement", cl.CircuitID.Cmp(ev.CircuitID) == 0, "circuit id of the opening %s the recorded one",
			equalWord(cl.CircuitID, ev.CircuitID))
	}
	if cl.RevocationNonce != nil {
		at, err := view.RevokedIn(ctx, ev.IssuerKeyHash, *cl.RevocationNonce)
		switch {
		case err != nil:
			add("revocation", false, "could not read the revocation of nonce %d: %v", *cl.RevocationNonce, err)
		case at != 0 && at <= block:
			add("revocation", false, "credential nonce %d was revoked in block %d, at or before the decision's block %d", *cl.RevocationNonce, at, block)
		case at != 0:
			add("revocation", true, "credential nonce %d was valid at block %d (revoked later, in block %d)", *cl.RevocationNonce, block, at)
		default:
			add("revocation", true, "credential nonce %d is not revoked", *cl.RevocationNonce)
		}
	}
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
