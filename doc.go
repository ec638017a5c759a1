// Package healthagents composes the healthcare agents into one pipeline:
// open the encrypted envelope, decide, prove, verify on chain, and return a
// result that carries no raw medical data.
//
// A program embedding the agents in-process uses [Service] exactly as the HTTP
// server does, and gets the same guarantees. The request and result types here
// are the wire format of the root family of the HTTP API; the client SDK shares
// them.
//
// The package imports no HTTP, SQL, gnark or go-ethereum code: proofs and the
// chain are plugged in through the [Attestor] interface (see package attest for
// the real one), so the client SDK can import these types without pulling in
// heavy dependencies.
package healthagents
