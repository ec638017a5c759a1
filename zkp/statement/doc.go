// Package statement is what a verified decision states and how its holder
// shows it to a third party.
//
// A decision's proof has three public inputs: the issuer key hash, the
// statement digest and the circuit id. The digest is iden3's Poseidon over an
// ordered list of field elements — the subject commitment, the request's
// codes, the service day, every output and a fresh salt — hashed in chunks of
// at most 16 (docs/statement.md). A Statement carries the digest and its
// Opening: the list itself, each value named and, where it encodes text (a
// code, a date), that text. Whoever holds the opening can recompute the
// digest with iden3's Poseidon alone and find it in the registry's
// StatementRecorded event.
//
// The digest binds the values only. A Schema (one per circuit, built by
// package zkp from the circuit's own field list) binds the rest of what a
// person reads: the field names and their order, and each text, which must
// be the rendering of its value (Schema.Text). Checkers refuse a statement
// that does not follow the schema of the circuit the chain recorded
// (package verify); the service checks its own statements the same way
// before it answers. Statements are read strictly: a key they do not have,
// or a value not written in plain decimal, is refused.
//
// The opening is clinical: it names codes and a day. It is returned to the
// caller in the API response and nowhere else. String, GoString and LogValue
// of Statement and Opening print the digest and the circuit only, so a
// statement passed to fmt or log/slog by mistake does not leak it.
package statement
