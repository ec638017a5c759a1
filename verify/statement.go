package verify

import (
	"context"
	"fmt"
	"math/big"
	"strings"

	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/zkp"
	"github.com/healthagents/healthagents/zkp/statement"
)

// anchor is what the chain recorded for a statement, as of the decision's
// block: what every part of the statement is checked against. Decision
// reads it from the StatementRecorded event of the decision's own
// transaction. Anchoring in batches (one Merkle root per transaction) will
// derive it from the root, the leaf's path and the leaf, and hand it to
// the same statementChecks.
type anchor struct {
	Digest, IssuerKeyHash, CircuitID *big.Int
	Block                            uint64
}

// The statement checks, in the order they are reported. Each names the part
// of the statement it binds (docs/statement.md, "What binds each part").
const (
	checkDigest     = "digest"     // the stated digest is the one recomputed from the values
	checkStatement  = "statement"  // that digest is the recorded one
	checkCircuit    = "circuit"    // opening.circuit names the recorded circuit id
	checkCircuitID  = "circuit id" // opening.circuit_id is the recorded one
	checkSchema     = "schema"     // the field names and order are the recorded circuit's
	checkText       = "text"       // every text is its value's rendering
	checkIssuerKey  = "issuer key" // opening.issuer_key_hash is the recorded one
	checkNonce      = "nonce"      // opening.revocation_nonce is the committed field
	checkRevocation = "revocation" // that nonce was not revoked by the decision's block
)

// statementChecks checks every part of st against what the chain recorded
// (a), and the committed nonce's revocation. A part it cannot check is a
// failure. Without a statement it adds one failed "statement" check saying
// what was not checked. The error is for a call to the node that failed.
func statementChecks(ctx context.Context, view *chain.RegistryView, a anchor, st *statement.Statement, rep *Report) error {
	if st == nil {
		rep.Checks = append(rep.Checks, Check{Name: checkStatement, Unchecked: true, Detail: "not checked: no statement was given, " +
			"so nothing this decision states is verified — not the payer, plan, codes, day or outcome, not the circuit's " +
			"schema or texts, not the credential's revocation; only that the transaction recorded some statement"})
		return nil
	}
	o := st.Opening

	recomputed, err := o.Recompute()
	switch {
	case err != nil:
		rep.add(checkDigest, false, "the opening's values cannot be hashed: %v", err)
	case st.Digest == nil:
		rep.add(checkDigest, false, "the statement states no digest")
	default:
		rep.add(checkDigest, st.Digest.Cmp(recomputed) == 0, "the stated digest %s %s the digest recomputed from the opening's values %s",
			short(st.Digest), equalWord(st.Digest, recomputed), short(recomputed))
	}
	rep.add(checkStatement, recomputed != nil && recomputed.Cmp(a.Digest) == 0,
		"the digest recomputed from the opening %s the recorded digest %s", equalWord(recomputed, a.Digest), short(a.Digest))

	schemas, err := zkp.Schemas()
	if err != nil {
		return fmt.Errorf("verify: statement schemas: %w", err)
	}
	var sc *statement.Schema
	for i := range schemas {
		if schemas[i].CircuitID.Cmp(a.CircuitID) == 0 {
			sc = &schemas[i]
		}
	}
	recordedName := "an unknown circuit"
	if sc != nil {
		recordedName = sc.Circuit
	}
	named := chain.CircuitID(chain.Kind(o.Circuit))
	rep.add(checkCircuit, named.Cmp(a.CircuitID) == 0, "opening.circuit %q (id %s) %s the recorded circuit %s (%s)",
		o.Circuit, short(named), isWord(named, a.CircuitID), short(a.CircuitID), recordedName)
	rep.add(checkCircuitID, o.CircuitID != nil && o.CircuitID.Cmp(a.CircuitID) == 0, "opening.circuit_id %s %s the recorded circuit id",
		short(o.CircuitID), isWord(o.CircuitID, a.CircuitID))

	if sc == nil {
		known := make([]string, len(schemas))
		for i, s := range schemas {
			known[i] = fmt.Sprintf("%s (%s)", s.Circuit, short(s.CircuitID))
		}
		why := fmt.Sprintf("no statement schema for the recorded circuit %s: this verifier knows %s", short(a.CircuitID), strings.Join(known, ", "))
		rep.add(checkSchema, false, "%s", why)
		rep.add(checkText, false, "not checked: %s", why)
	} else {
		schemaChecks(*sc, o, rep)
	}

	rep.add(checkIssuerKey, o.IssuerKeyHash != nil && o.IssuerKeyHash.Cmp(a.IssuerKeyHash) == 0,
		"opening.issuer_key_hash %s %s the recorded issuer key hash", short(o.IssuerKeyHash), isWord(o.IssuerKeyHash, a.IssuerKeyHash))

	nonce, err := o.CommittedNonce()
	if err != nil {
		rep.add(checkNonce, false, "%s", strings.TrimPrefix(err.Error(), statement.ErrNonce.Error()+": "))
		rep.add(checkRevocation, false, "not checked: the opening commits to no revocation nonce")
		return nil
	}
	rep.add(checkNonce, o.RevocationNonce == nonce, "opening.revocation_nonce %d %s the committed revocation_nonce field %d",
		o.RevocationNonce, isWord(new(big.Int).SetUint64(o.RevocationNonce), new(big.Int).SetUint64(nonce)), nonce)
	at, err := view.RevokedIn(ctx, a.IssuerKeyHash, nonce)
	switch {
	case err != nil:
		rep.add(checkRevocation, false, "could not read the revocation of nonce %d: %v", nonce, err)
	case at != 0 && at <= a.Block:
		rep.add(checkRevocation, false, "credential nonce %d was revoked in block %d, at or before the decision's block %d", nonce, at, a.Block)
	case at != 0:
		rep.add(checkRevocation, true, "credential nonce %d was valid at block %d (revoked later, in block %d)", nonce, a.Block, at)
	default:
		rep.add(checkRevocation, true, "credential nonce %d is not revoked", nonce)
	}
	return nil
}

// schemaChecks checks the opening's field names and texts against sc, the
// schema of the recorded circuit: one "schema" line, then one "text" line
// when every text is its value's rendering, else one per field that is not.
func schemaChecks(sc statement.Schema, o statement.Opening, rep *Report) {
	if err := sc.CheckNames(o); err != nil {
		rep.add(checkSchema, false, "%s", strings.TrimPrefix(err.Error(), statement.ErrSchema.Error()+": "))
	} else {
		rep.add(checkSchema, true, "the %d field names, in order, are %s's", len(sc.Fields), sc.Circuit)
	}
	errs := sc.CheckTexts(o)
	for _, err := range errs {
		msg := err.Error()
		for _, prefix := range []string{statement.ErrText.Error() + ": ", statement.ErrSchema.Error() + ": "} {
			msg = strings.TrimPrefix(msg, prefix)
		}
		rep.add(checkText, false, "%s", msg)
	}
	if len(errs) == 0 {
		rep.add(checkText, true, "every text is the rendering of its value (%s's renderings)", sc.Circuit)
	}
}

// isWord is "is" or "is not", for the comparison of a part with the
// recorded value.
func isWord(a, b *big.Int) string {
	if a != nil && b != nil && a.Cmp(b) == 0 {
		return "is"
	}
	return "is not"
}
