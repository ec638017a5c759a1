package healthagents

import "log/slog"

// Statement is what a decision's proof states, in the wire form
// (docs/statement.md): the digest recorded on chain and its opening, the
// field values it is Poseidon over. The caller may show it to a third party,
// who recomputes the digest with iden3's Poseidon and finds it in the
// registry's StatementRecorded event (healthagents verify-decision
// --statement). The opening names codes and a day: it is returned to the
// caller only, never logged or put in an event.
type Statement struct {
	Digest  string           `json:"digest" doc:"The statement digest, a decimal field element: the proof's second public input and the StatementRecorded event's digest." example:"1234567890"`
	Opening StatementOpening `json:"opening"`
	// Batch is set when the decision was anchored in a batch
	// (CHAIN_ANCHOR=batch): blockchain_tx recorded the batch's Merkle root,
	// and this is where the statement's leaf sits under it.
	Batch *StatementBatch `json:"batch,omitempty"`
}

// StatementBatch is where a statement's leaf, Poseidon(issuer_key_hash,
// digest, circuit_id), sits in the batch whose Merkle root the registry's
// BatchRecorded event records (docs/statement.md, "Batches").
type StatementBatch struct {
	Root      string   `json:"root" doc:"The batch's Merkle root, a decimal field element: BatchRecorded's root."`
	Size      int      `json:"size" doc:"How many statements the batch anchors: BatchRecorded's size." example:"128"`
	LeafIndex int      `json:"leaf_index" doc:"The leaf's index in the batch, 0-based; bit k says whether the node at height k is a right child." example:"5"`
	Path      []string `json:"path" doc:"The sibling values from the leaf up, decimal field elements; ceil(log2 size) of them."`
}

// StatementOpening is the list a statement's digest is computed over, with
// what the proof was made under.
type StatementOpening struct {
	Circuit         string           `json:"circuit" doc:"The circuit (chain kind) the proof was made with." example:"eligibility-v3"`
	CircuitID       string           `json:"circuit_id" doc:"keccak256(circuit) mod r, decimal: the proof's third public input."`
	IssuerKeyHash   string           `json:"issuer_key_hash" doc:"Poseidon(Ax, Ay) of the payer key that signed the coverage credential, decimal: the proof's first public input."`
	RevocationNonce uint64           `json:"revocation_nonce" doc:"The credential's revocation nonce (the registry's revokedIn tells whether the payer revoked it)."`
	Fields          []StatementField `json:"fields" doc:"The digest's field elements in order (docs/statement.md names them per circuit)."`
}

// StatementField is one element of an opening.
type StatementField struct {
	Name  string `json:"name" example:"service_day"`
	Value string `json:"value" doc:"Decimal field element." example:"20518"`
	Text  string `json:"text,omitempty" doc:"What the value encodes, when it encodes something readable." example:"2026-03-06"`
}

// String never prints the opening.
func (s *Statement) String() string {
	if s == nil {
		return "<nil>"
	}
	return "statement{digest " + s.Digest + ", circuit " + s.Opening.Circuit + ", opening redacted}"
}

// LogValue logs the digest and circuit only.
func (s *Statement) LogValue() slog.Value {
	if s == nil {
		return slog.StringValue("<nil>")
	}
	return slog.GroupValue(slog.String("digest", s.Digest), slog.String("circuit", s.Opening.Circuit))
}
