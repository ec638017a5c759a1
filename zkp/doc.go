// Package zkp proves eligibility and prescription-coverage decisions with
// Groth16 zero-knowledge proofs over BN254 (gnark), so that a verifier —
// off-chain with Verifier, or EVM code through the chain package — learns
// that a decision follows from a committed patient record without seeing it.
//
// # Statements
//
// Both circuits share a hiding commitment to the coverage block of a record:
//
//	commitment = MiMC(memberID, packExcl, packOver, blinding)
//
// where memberID is SHA-256 mod r of coverage.member_id, packExcl packs the
// (case-folded, deduplicated, sorted) excluded codes with the status flag
// and the start/end day numbers, packOver packs the override codes with
// their percents, and blinding is a fresh uniformly random field element.
// Codes of up to MaxCodeLen bytes are encoded injectively (EncodeCode);
// the fixed bounds MaxExclusions and MaxOverrides keep the circuits small,
// and a record beyond them is refused with ErrRecordTooLarge.
//
// EligibilityCircuit proves that the commitment opens to a coverage for
// which, for the public procedure class, requested code and service day,
// the public eligible flag, coverage percent and pre-authorisation flag
// follow by the eligibility rules. PrescriptionCircuit proves that the
// public covered flag states whether the committed coverage is active on the
// service day and does not exclude the drug. A proof of an ineligible or
// uncovered outcome is as valid as one of an eligible outcome: consumers
// must read the outputs (Proof.Eligibility, Proof.Prescription).
//
// Neither circuit uses a Pedersen (BSB22) commitment or a lookup argument,
// so the plain Groth16 verifier on the EVM precompiles 0x06-0x08 suffices.
//
// # Keys
//
// LoadOrSetup runs groth16.Setup once per circuit and keeps the keys under a
// directory (DATA_DIR), reusing and checking them on restart; LoadCeremony
// loads keys produced by an mpcsetup ceremony. See docs/decisions/zkp.md.
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
