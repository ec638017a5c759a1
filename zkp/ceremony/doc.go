// Package ceremony runs a multi-party trusted setup for Groth16 circuits
// over BN254 on gnark's MPC setup (backend/groth16/bn254/mpcsetup, the
// protocol of Bowe, Gabizon and Miers 2017): the proving and verifying keys
// are sound as long as one participant of each phase generated its
// randomness honestly and destroyed it, instead of resting on whoever ran a
// single-party groth16.Setup.
//
// # Transcript
//
// Participants exchange files only. Phase 1 (powers of tau) starts with
// NewPhase1, sized for the largest circuit; each participant runs
// Contribute on the latest file and publishes the new file's hash
// (File.Hash, the SHA-256 of the whole file). SealPhase1 verifies the chain
// and seals it with a public random beacon into an srs file; NewPhase2
// starts phase 2 for every circuit over it (each circuit over the prefix of
// the powers its own domain needs); participants Contribute again; Finalize
// verifies phase 2, seals it with a second beacon and returns each
// circuit's keys. VerifyPhase1, VerifySRS and VerifyPhase2 check a chain
// from the recomputed initial state, one Step per file.
//
// Files are untrusted input: framing, lengths and encodings are checked
// before gnark decodes, and nothing panics on a malformed file.
//
// # The service's keys
//
// ZKPCircuits lists package zkp's circuits; Install writes a ceremony's keys
// in zkp's layout with a Manifest (ceremony.json); LoadKeys loads and checks
// such a directory, which is what the service does with ZK_KEYS_DIR. The
// command `healthagents ceremony` drives all of it; docs/ceremony.md is the
// guide.
package ceremony
