// Package chain verifies Groth16 proofs in EVM code and records each verified
// statement in a transaction.
//
// Two Solidity contracts, whose sources live in contracts/ at the repository
// root, do the work on chain:
//
//   - Groth16Verifier: one generic BN254 Groth16 verifier. Its verifying key
//     (alpha1, beta2, gamma2, delta2 and the IC points) is supplied at deploy
//     time, so one bytecode serves every circuit. It checks proofs with the
//     precompiles 0x06 (ecAdd), 0x07 (ecMul) and 0x08 (ecPairing) and returns
//     false, never reverts, for an invalid proof, an input outside the scalar
//     field or a malformed point.
//   - GovernedRegistry: owned by a cold wallet, it binds one immutable
//     verifier to each circuit id, registers issuers and submitters, and
//     records a statement [issuerKeyHash, digest, circuitId] whose proof its
//     verifier accepts, from an active issuer, by emitting StatementRecorded;
//     it reverts, recording nothing, otherwise.
//
// Their bytecode and go-ethereum bindings are generated with solc-js by
// `go generate ./chain/...` and committed; a test fails when the Solidity
// sources change without regenerating.
//
// A [Ledger] talks to the registry over one of two back-ends: an in-process
// go-ethereum simulated chain ([NewSimulated]), the embedded default, or any
// Ethereum JSON-RPC node ([Dial]). [Deploy] puts the contracts on a node.
// A proof the contract rejects yields [ErrRejected]; a chain that cannot be
// reached or does not confirm in time yields [ErrUnavailable].
package chain
