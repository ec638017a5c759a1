// Package contracts holds the compiled Groth16Verifier and GovernedRegistry
// contracts (ABI, bytecode) and their go-ethereum v2 bindings, all generated
// from contracts/*.sol by `go generate ./chain/...`. Do not edit by hand.
package contracts
