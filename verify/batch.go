package verify

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fp"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/healthagents/healthagents/chain"
)

// A decision anchored in a batch (docs/verify.md, "Batches") was recorded by
// a recordBatch transaction: its BatchRecorded event holds the Merkle root
// of the batch's leaves, its size and its circuit ids, and nothing else. The
// statement's batch (root, size, leaf index, path) places the statement's
// leaf, Poseidon(issuer_key_hash, digest, circuit_id), under that root; the
// proof comes from the answer and is re-verified here. The checks, in order:
// receipt, registry, batch, path, verifier, proof, issuer, the statement
// checks (statementChecks, against the leaf's values), confirmations.

// The batched decision's checks that the single-record one does not have.
const (
	checkBatch = "batch" // the transaction's BatchRecorded is the statement's batch
	checkPath  = "path"  // the statement's leaf with its path leads to the recorded root
	checkProof = "proof" // the answer's proof verifies for the statement's leaf
)

// ErrProof means an answer's proof_data or public_inputs cannot be read.
var ErrProof = errors.New("verify: not a proof")

// Proof is a decision's Groth16 proof as its answer carries it.
type Proof struct {
	// Words is proof_data: eight uint256 words in the Solidity verifier's
	// order, A.x A.y B.x.im B.x.re B.y.im B.y.re C.x C.y.
	Words [8]*big.Int
	// Inputs is public_inputs, nil when the answer gave none. Given, they
	// must be the statement's [issuer_key_hash, digest, circuit_id].
	Inputs []*big.Int
}

// ParseProof reads an answer's proof_data ("0x" and 512 hex digits: 256
// bytes, eight 32-byte big-endian words) and public_inputs (each "0x" and 64
// hex digits, a field element; none is allowed). It does not verify the
// proof: Decision does, by eth_call.
func ParseProof(proofData string, publicInputs []string) (*Proof, error) {
	raw, err := hexBytes(proofData, 256)
	if err != nil {
		return nil, fmt.Errorf("%w: proof_data: %w", ErrProof, err)
	}
	p := &Proof{}
	for i := range p.Words {
		p.Words[i] = new(big.Int).SetBytes(raw[32*i : 32*(i+1)])
	}
	for i, s := range publicInputs {
		b, err := hexBytes(s, 32)
		if err != nil {
			return nil, fmt.Errorf("%w: public_inputs[%d]: %w", ErrProof, i, err)
		}
		v := new(big.Int).SetBytes(b)
		if v.Cmp(fr.Modulus()) >= 0 {
			return nil, fmt.Errorf("%w: public_inputs[%d] is not a field element", ErrProof, i)
		}
		p.Inputs = append(p.Inputs, v)
	}
	return p, nil
}

// ParseCompressedProof reads a proof as an X12 271 carries it
// (x12.EncodeProof): A, B and C in gnark-crypto's compressed point
// encoding, 32, 64 and 32 bytes. Each point is decompressed — its x a
// canonical coordinate, its y a square root that exists, the point in its
// prime-order subgroup — or the proof is refused; the words are the
// Solidity verifier's, as ParseProof returns them. Inputs is nil: a 271
// carries none, the statement's are used.
func ParseCompressedProof(b []byte) (*Proof, error) {
	if len(b) != 128 {
		return nil, fmt.Errorf("%w: a compressed proof is 128 bytes, not %d", ErrProof, len(b))
	}
	var a, c bn254.G1Affine
	var g2 bn254.G2Affine
	// SetBytes reads a point compressed or not, by the flag bits: only
	// the compressed are taken, so every proof has one accepted text.
	for _, p := range []struct {
		name string
		set  func([]byte) (int, error)
		buf  []byte
	}{{"A", a.SetBytes, b[:32]}, {"B", g2.SetBytes, b[32:96]}, {"C", c.SetBytes, b[96:]}} {
		if p.buf[0]>>6 == 0 {
			return nil, fmt.Errorf("%w: point %s is not compressed (the top two bits of its first byte are 00)", ErrProof, p.name)
		}
		if n, err := p.set(p.buf); err != nil || n != len(p.buf) {
			if err == nil {
				err = errors.New("not its compressed encoding")
			}
			return nil, fmt.Errorf("%w: point %s: %w", ErrProof, p.name, err)
		}
	}
	el := func(e fp.Element) *big.Int { return e.BigInt(new(big.Int)) }
	return &Proof{Words: [8]*big.Int{el(a.X), el(a.Y), el(g2.X.A1), el(g2.X.A0), el(g2.Y.A1), el(g2.Y.A0), el(c.X), el(c.Y)}}, nil
}

func hexBytes(s string, size int) ([]byte, error) {
	digits, ok := strings.CutPrefix(s, "0x")
	if !ok || len(digits) != 2*size {
		return nil, fmt.Errorf("want \"0x\" and %d hex digits, got %d characters", 2*size, len(s))
	}
	b, err := hex.DecodeString(digits)
	if err != nil {
		return nil, fmt.Errorf("not hex: %w", err)
	}
	return b, nil
}

// isBatch reports whether the transaction is a batch's: its receipt holds
// the registry's BatchRecorded, or its input is a recordBatch call.
func isBatch(gov *chain.Governed, r *types.Receipt, input []byte) bool {
	if _, err := chain.DecodeRecordBatchCall(input); err == nil {
		return true
	}
	_, err := gov.DecodeBatch(r)
	return err == nil
}

// batchDecision runs the batched checks after receipt and registry.
func batchDecision(ctx context.Context, c Chain, gov *chain.Governed, r *types.Receipt, input []byte, o Options, rep Report) (Report, error) {
	block := r.BlockNumber
	ev, err := gov.DecodeBatch(r)
	if err != nil {
		rep.add(checkBatch, false, "%v", err)
		return rep, nil
	}
	rep.Batch = &ev
	call, err := chain.DecodeRecordBatchCall(input)
	same := err == nil && call.Root.Cmp(ev.Root) == 0 && call.Size.IsUint64() && call.Size.Uint64() == ev.Size && sameWords(call.CircuitIDs, ev.CircuitIDs)
	callIs := "are the event's"
	if !same {
		callIs = "are not the event's"
	}
	if !rep.add(checkBatch, same, "BatchRecorded root %s size %d circuits %s submitter %s; the recordBatch call's root, size and circuit ids %s",
		short(ev.Root), ev.Size, words(ev.CircuitIDs), ev.Submitter.Hex(), callIs) {
		return rep, nil
	}

	st := o.Statement
	if st == nil {
		rep.Checks = append(rep.Checks, Check{Name: checkStatement, Unchecked: true, Detail: "not checked: no statement was given, " +
			"so nothing this decision states is verified — not which of the batch's statements it is, its proof, the payer, plan, codes, " +
			"day or outcome, the circuit's schema or texts, the credential's revocation; only that the transaction recorded some batch"})
		return rep, confirmations(ctx, c, block, o.Confirmations, &rep)
	}
	b := st.Batch
	switch {
	case b == nil:
		rep.add(checkBatch, false, "the statement names no batch (no root, leaf index or path), but this transaction records batch %s of %d "+
			"statements: the statement's leaf cannot be placed under its root", short(ev.Root), ev.Size)
		return rep, nil
	case b.Root == nil || b.Root.Cmp(ev.Root) != 0:
		rep.add(checkBatch, false, "the statement's batch root %s is not the recorded root %s: the statement is of another batch", short(b.Root), short(ev.Root))
		return rep, nil
	case uint64(b.Size) != ev.Size:
		rep.add(checkBatch, false, "the statement's batch size %d is not the recorded size %d", b.Size, ev.Size)
		return rep, nil
	}
	rep.add(checkBatch, true, "the statement's batch root and size equal the event's (leaf %d of %d)", b.Index, b.Size)

	leaf, err := st.LeafOf()
	if err != nil {
		rep.add(checkPath, false, "the statement's leaf Poseidon(issuer_key_hash, digest, circuit_id) cannot be computed: %v", err)
		return rep, nil
	}
	root, err := b.RootOf(leaf)
	switch {
	case err != nil:
		rep.add(checkPath, false, "the statement's leaf %s with its path: %v", short(leaf), err)
		return rep, nil
	case root.Cmp(ev.Root) != 0:
		rep.add(checkPath, false, "the statement's leaf %s with its path (leaf index %d, %d values) leads to %s, not to the recorded root %s",
			short(leaf), b.Index, len(b.Path), short(root), short(ev.Root))
		return rep, nil
	}
	rep.add(checkPath, true, "the statement's leaf %s with its path (leaf index %d, %d values) leads to the recorded root", short(leaf), b.Index, len(b.Path))

	// The leaf is anchored: what the chain recorded for this statement is
	// the leaf's three values, as of the batch's block.
	a := anchor{Digest: st.Digest, IssuerKeyHash: st.Opening.IssuerKeyHash, CircuitID: st.Opening.CircuitID, Block: block.Uint64()}
	view := chain.NewRegistryView(c, gov.Address())
	if !ev.Covers(a.CircuitID) {
		rep.add("verifier", false, "the leaf's circuit %s is not among the batch's circuit ids %s", short(a.CircuitID), words(ev.CircuitIDs))
		return rep, nil
	}
	verifier, err := view.VerifierAt(ctx, a.CircuitID, block)
	if err != nil {
		return rep, err
	}
	code, err := c.CodeAt(ctx, verifier, block)
	if err != nil {
		return rep, fmt.Errorf("verify: verifier code: %w", err)
	}
	if !rep.add("verifier", len(code) > 0, "the leaf's circuit %s is among the batch's circuit ids and bound to %s at block %d",
		short(a.CircuitID), verifier.Hex(), block) {
		return rep, nil
	}

	inputs := []*big.Int{a.IssuerKeyHash, a.Digest, a.CircuitID}
	switch {
	case o.Proof == nil:
		rep.Checks = append(rep.Checks, Check{Name: checkProof, Unchecked: true, Detail: "not checked: no proof was given (the answer's " +
			"proof_data): a batch's transaction records a Merkle root, not proofs, so nothing shows this statement was proven — pass the " +
			"whole decision response, or its proof"})
	case o.Proof.Inputs != nil && !sameWords(o.Proof.Inputs, inputs):
		rep.add(checkProof, false, "the answer's public_inputs %s are not the statement's [issuer_key_hash, digest, circuit_id] %s: the proof is of another statement",
			words(o.Proof.Inputs), words(inputs))
	default:
		ok, err := chain.VerifyProofAt(ctx, c, verifier, o.Proof.Words, inputs, block)
		if err != nil {
			return rep, err
		}
		rep.add(checkProof, ok, "Groth16 verification of the answer's proof for the statement's [issuer_key_hash, digest, circuit_id] re-run by eth_call at block %d: %s",
			block, accepted(ok))
	}

	iss, err := view.Issuer(ctx, a.IssuerKeyHash)
	if err != nil {
		return rep, err
	}
	rep.add("issuer", iss.ActiveAt(block.Uint64()), "%s", issuerDetail(a.IssuerKeyHash, iss, block.Uint64()))

	if err := statementChecks(ctx, view, a, st, &rep); err != nil {
		return rep, err
	}
	return rep, confirmations(ctx, c, block, o.Confirmations, &rep)
}

func sameWords(a, b []*big.Int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] == nil || b[i] == nil || a[i].Cmp(b[i]) != 0 {
			return false
		}
	}
	return true
}

func words(ws []*big.Int) string {
	s := make([]string, len(ws))
	for i, w := range ws {
		s[i] = short(w)
	}
	return "[" + strings.Join(s, ", ") + "]"
}
