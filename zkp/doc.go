// Package zkp proves eligibility and prescription decisions with Groth16
// zero-knowledge proofs over BN254 (gnark), so that a verifier — off-chain
// with Verifier, or EVM code through the chain package — learns that a
// decision follows from coverage terms a registered payer signed, without
// seeing them.
//
// # Statements
//
// Both circuits (eligibility-v3, prescription-v4) have exactly three public
// inputs, the GovernedRegistry's shape: the issuer key hash Poseidon(Ax, Ay)
// of the payer's Baby Jubjub key, the statement digest, and the circuit id
// (CircuitID: keccak256(name) mod r). Inside, each verifies the payer's
// EdDSA-Poseidon signature over the credential's signed field list
// (package credential, docs/credentials.md) with gadgets equal to iden3's
// (internal/iden3), applies the rules to the signed terms and the public
// catalogue compiled into the circuit (procedure codes and classes; the
// drug formulary), and asserts that the digest is iden3's Poseidon over the
// subject commitment, the request's codes, the service day, every output and
// a fresh salt (package statement, docs/statement.md). No code, day or
// outcome is a public input. A proof of an ineligible or uncovered outcome
// is as valid as one of an eligible outcome: the outputs are in the
// statement's opening.
//
// prescription-v4 also proves each drug's interaction and contraindication
// findings (clinical.go): the public rule table of package prescription is
// compiled into the circuit, and the patient's facts — catalogue current
// medications, matched allergy/condition triggers, drug allergies, at most
// MaxMedications, MaxTriggers and MaxAllergyDrugs — are private witnesses
// committed in the digest, so the findings equal prescription.Agent.Check's
// for the facts the opening shows.
//
// Neither circuit uses a Pedersen (BSB22) commitment or a lookup argument
// (public tables are polynomials, table.go), so the plain Groth16 verifier
// on the EVM precompiles 0x06-0x08 suffices.
//
// # Keys
//
// LoadOrSetup runs groth16.Setup once per circuit and keeps the keys under a
// directory (DATA_DIR), reusing and checking them on restart; LoadCeremony
// loads keys produced by an mpcsetup ceremony. See docs/decisions/zkp.md.
// A process compiles each circuit once, and a key pair whose files match
// one it already decoded and self-checked (same circuit, same bytes, same
// origin) is shared with its prover tables (memo.go): the tests open the
// service dozens of times per process.
//
// # Proving
//
// Proofs are gnark Groth16 proofs from gnark's solver and proving key; the
// multi-scalar multiplications use precomputed fixed-base tables of the key
// (msm.go), built in the background after a circuit's first proof in the
// process (~0.6 CPU-seconds, ~17 MB per circuit). Until they are ready,
// gnark's own prover is used.
//
// # Logging
//
// gnark logs through a process-wide zerolog logger to stdout. The first
// LoadOrSetup or LoadCeremony call disables it once per process unless
// WithGnarkLogging is given. This package itself never logs.
package zkp
