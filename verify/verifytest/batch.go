package verifytest

import (
	"encoding/json"
	"fmt"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/zkp/statement"
)

// Answer is what a batching service hands the holder of a decision
// anchored in a batch: the statement (with its batch: root, size, leaf
// index, path) and the proof, which the batch's transaction does not
// carry.
type Answer struct {
	Tx           common.Hash
	Statement    statement.Statement
	ProofData    string   // "0x" and 512 hex digits
	PublicInputs []string // each "0x" and 64 hex digits; nil for none
}

// Response is the answer as the v1 API shapes a decision response:
// {"statement": …, "verification_proof": {"proof_data", "public_inputs",
// "blockchain_tx"}}, which verify-decision and verify.mjs read whole.
func (a Answer) Response() map[string]any {
	proof := map[string]any{"proof_data": a.ProofData, "blockchain_tx": a.Tx.Hex()}
	if a.PublicInputs != nil {
		proof["public_inputs"] = a.PublicInputs
	}
	return map[string]any{"eligible": true, "statement": a.Statement, "verification_proof": proof}
}

// JSON is Response encoded.
func (a Answer) JSON(t testing.TB) []byte {
	t.Helper()
	b, err := json.Marshal(a.Response())
	must(t, err, "answer JSON")
	return b
}

// ProofData is a proof's proof_data: eight 32-byte big-endian words, hex.
func ProofData(proof [8]*big.Int) string {
	s := "0x"
	for _, w := range proof {
		s += fmt.Sprintf("%064x", w)
	}
	return s
}

// PublicInputs is public_inputs: each input as 32 bytes big-endian, hex.
func PublicInputs(inputs []*big.Int) []string {
	out := make([]string, len(inputs))
	for i, v := range inputs {
		out[i] = fmt.Sprintf("0x%064x", v)
	}
	return out
}

// RecordBatch anchors sts as a batching service would: it proves each
// statement with the fixture's circuit (bound to the service's circuit
// ids), registers their issuers, builds the Poseidon Merkle tree of their
// leaves in this order, has the Ledger send Governed.RecordBatch for its
// root, size and circuit ids, and returns each decision's answer.
func (f *Fixture) RecordBatch(t testing.TB, sts []statement.Statement) []Answer {
	t.Helper()
	return f.recordBatch(t, sts, nil)
}

// recordBatch is RecordBatch recording circuitIDs as the batch's circuit
// ids (nil: the statements'), as a submitter that lies about them would.
func (f *Fixture) recordBatch(t testing.TB, sts []statement.Statement, circuitIDs []*big.Int) []Answer {
	t.Helper()
	leaves := make([]*big.Int, len(sts))
	var ids []*big.Int
	for i, st := range sts {
		f.RegisterIssuer(t, st.Opening.IssuerKeyHash)
		leaf, err := st.LeafOf()
		must(t, err, "leaf")
		leaves[i] = leaf
		ids = append(ids, st.Opening.CircuitID)
	}
	tree, err := statement.NewTree(leaves)
	must(t, err, "tree")
	if circuitIDs != nil {
		ids = circuitIDs
	}
	data, err := f.Gov.RecordBatch(tree.Root(), tree.Size(), ids)
	must(t, err, "recordBatch call")
	rc, err := f.Gov.Apply(t.Context(), f.Ledger, chain.OwnerAction{Data: data, Summary: "recordBatch"})
	must(t, err, "recordBatch")
	answers := make([]Answer, len(sts))
	for i, st := range sts {
		b, err := tree.Batch(i)
		must(t, err, "batch path")
		st.Batch = &b
		proof, inputs := Prove(t, st.Opening.IssuerKeyHash, st.Digest, st.Opening.CircuitID)
		answers[i] = Answer{Tx: rc.TxHash, Statement: st, ProofData: ProofData(proof), PublicInputs: PublicInputs(inputs)}
	}
	return answers
}

// RegisterIssuer registers issuer on the registry unless it is.
func (f *Fixture) RegisterIssuer(t testing.TB, issuer *big.Int) {
	t.Helper()
	state, err := chain.NewRegistryView(f.RPC, f.Gov.Address()).Issuer(t.Context(), issuer)
	must(t, err, "issuer")
	if state.RegisteredAt == 0 {
		f.Own(t, f.Gov.RegisterIssuer(issuer, common.Address{}))
	}
}

// BatchIndex is the leaf index of the decision every BatchCase doctors, in
// a batch of BatchSize.
const (
	BatchSize  = 5
	BatchIndex = 2
)

// BatchCase is one way to doctor a decision anchored in a batch, made
// ready to check, and what a checker must say about it (as Tamper).
type BatchCase struct {
	Name     string
	Answer   Answer // Answer.Tx is the transaction to check
	Registry common.Address
	Failed   []string
	Lines    []string
}

// Batch records the batched decisions the BatchCases doctor: a batch of
// BatchSize real statements (eligibility and prescription, issuer nonces
// TamperNonce and 12) and returns the answer of leaf BatchIndex, an
// eligibility statement, with the whole batch.
func (f *Fixture) Batch(t testing.TB) (Answer, []Answer) {
	t.Helper()
	sts := make([]statement.Statement, BatchSize)
	for i := range sts {
		if i%2 == 1 {
			sts[i] = PrescriptionStatement(t, 12)
		} else {
			sts[i] = EligibilityStatement(t, TamperNonce)
		}
	}
	all := f.RecordBatch(t, sts)
	return all[BatchIndex], all
}

// BatchCases doctors the batched decision honest (leaf BatchIndex of
// batch, from Fixture.Batch) every way issue 30 names, each failing its
// own line: a wrong path value or leaf index (path), a leaf of another
// batch or a changed size or a statement that names no batch (batch), a
// proof of another leaf (proof); and a batched statement against a
// single-record transaction (batch), and statement parts doctored as the
// Tampers do, checked against the leaf's values.
func (f *Fixture) BatchCases(t testing.TB, honest Answer, batch []Answer) []BatchCase {
	t.Helper()
	other := f.RecordBatch(t, []statement.Statement{EligibilityStatement(t, TamperNonce), EligibilityStatement(t, TamperNonce),
		EligibilityStatement(t, TamperNonce)})
	single := f.RecordStatement(t, honest.Statement)
	uncovered := f.recordBatch(t, []statement.Statement{EligibilityStatement(t, TamperNonce), EligibilityStatement(t, TamperNonce)},
		[]*big.Int{f.Circuit})[1] // the batch names the fixture's circuit only, not eligibility-v3
	neighbour := batch[BatchIndex+1] // a prescription's leaf

	edit := func(name string, fn func(*Answer), failed []string, lines ...string) BatchCase {
		a := copyAnswer(honest)
		fn(&a)
		return BatchCase{Name: name, Answer: a, Registry: f.Gov.Address(), Failed: failed, Lines: lines}
	}
	return []BatchCase{
		edit("batch: wrong path value", func(a *Answer) { a.Statement.Batch.Path[1].Add(a.Statement.Batch.Path[1], big.NewInt(1)) },
			[]string{"path"}, fail("path", "the statement's leaf 0x"), "with its path (leaf index 2, 3 values) leads to 0x", ", not to the recorded root 0x"),
		edit("batch: wrong leaf index", func(a *Answer) { a.Statement.Batch.Index = BatchIndex + 1 },
			[]string{"path"}, fail("path", "the statement's leaf 0x"), "with its path (leaf index 3, 3 values) leads to 0x"),
		edit("batch: leaf of another batch", func(a *Answer) { a.Tx = other[0].Tx; a.Statement.Batch.Root = honest.Statement.Batch.Root },
			[]string{"batch"}, fail("batch", "the statement's batch root 0x"), "is not the recorded root 0x", "the statement is of another batch"),
		edit("batch: another batch's statement and path", func(a *Answer) { *a = copyAnswer(other[1]); a.Tx = honest.Tx },
			[]string{"batch"}, fail("batch", "the statement's batch root 0x"), "the statement is of another batch"),
		edit("batch: proof of another leaf", func(a *Answer) { a.ProofData, a.PublicInputs = neighbour.ProofData, nil },
			[]string{"proof"}, fail("proof", "Groth16 verification of the answer's proof for the statement's [issuer_key_hash, digest, circuit_id] re-run by eth_call at block"), ": REJECTED"),
		edit("batch: proof and public inputs of another leaf", func(a *Answer) { a.ProofData, a.PublicInputs = neighbour.ProofData, neighbour.PublicInputs },
			[]string{"proof"}, fail("proof", "the answer's public_inputs [0x"), "are not the statement's [issuer_key_hash, digest, circuit_id] [0x", "the proof is of another statement"),
		edit("batch: size changed", func(a *Answer) { a.Statement.Batch.Size = BatchSize + 1 },
			[]string{"batch"}, fail("batch", "the statement's batch size 6 is not the recorded size 5")),
		edit("batch: statement without its batch", func(a *Answer) { a.Statement.Batch = nil },
			[]string{"batch"}, fail("batch", "the statement names no batch (no root, leaf index or path), but this transaction records batch 0x"), "of 5 statements"),
		edit("batch: batched statement on a single-record transaction", func(a *Answer) { a.Tx = single },
			[]string{"batch"}, fail("batch", "the statement places its leaf in batch 0x"), "(leaf 2 of 5), but this transaction records one statement (StatementRecorded), not a batch"),
		edit("batch: a leaf whose circuit the batch does not name", func(a *Answer) { *a = copyAnswer(uncovered) },
			[]string{"verifier"}, fail("verifier", "the leaf's circuit 0x"), "is not among the batch's circuit ids [0x"),
		edit("batch: value", func(a *Answer) { a.Statement.Opening.Fields[fieldEligible].Value = big.NewInt(0) },
			[]string{"digest", "statement", "text"}, fail("statement", "the digest recomputed from the opening differs from the recorded digest"),
			fail("text", `field 7 eligible: text "true" is not "false", the rendering of its value 0`)),
		edit("batch: digest", func(a *Answer) { a.Statement.Digest.Add(a.Statement.Digest, big.NewInt(1)) },
			[]string{"path"}, fail("path", "the statement's leaf 0x")),
		edit("batch: revocation nonce", func(a *Answer) { a.Statement.Opening.RevocationNonce++ },
			[]string{"nonce"}, fail("nonce", "opening.revocation_nonce 8 is not the committed revocation_nonce field 7")),
	}
}

// copyAnswer is a deep copy of a: its statement's parts and batch can be
// changed without touching a.
func copyAnswer(a Answer) Answer {
	c := a
	c.Statement = Copy(a.Statement)
	if b := a.Statement.Batch; b != nil {
		nb := *b
		nb.Root = new(big.Int).Set(b.Root)
		nb.Path = make([]*big.Int, len(b.Path))
		for i, p := range b.Path {
			nb.Path[i] = new(big.Int).Set(p)
		}
		c.Statement.Batch = &nb
	}
	return c
}
