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
//
// # Where to go next
//
//   - Package client (github.com/healthagents/healthagents/client) is the
//     typed, retrying SDK for the HTTP API; it imports none of the heavy
//     parts either.
//   - Package server turns a Service into the whole HTTP API as an
//     http.Handler ([server.New]), to mount in a program's own mux, under
//     any prefix.
//   - [app.OpenEmbedded] gives a Go program the agents with proofs in one
//     call: a [Service] whose every decision is proven with Groth16 and
//     recorded on an embedded chain kept in a directory, with none of the
//     HTTP side (its Example prints a decision read back from the chain).
//   - Package app assembles everything `healthagents serve` runs from
//     environment settings: database, API keys and rate limits, ZK proofs
//     verified on a chain, webhooks, the v1 patient registry, federated
//     learning ([app.Open]; its App.Handler is the API).
//   - The examples directory holds runnable programs, each exercised by a
//     test: examples/quickstart (the SDK against a running server),
//     examples/embedded (the agents in-process), examples/mount (the full
//     service through app, inside a program's own mux under a prefix),
//     examples/federated and examples/webhook-receiver.
//   - The README walks from the first command to a decision with its proof
//     and transaction, and to checking it with `healthagents
//     verify-decision`; docs/architecture.md maps the packages.
//
// [server.New]: https://pkg.go.dev/github.com/healthagents/healthagents/server#New
// [app.Open]: https://pkg.go.dev/github.com/healthagents/healthagents/app#Open
// [app.OpenEmbedded]: https://pkg.go.dev/github.com/healthagents/healthagents/app#OpenEmbedded
package healthagents
