// Package attest proves each decision of the agents in zero knowledge and has
// the proof verified by EVM code on a chain, recording the verification in a
// mined transaction. [Attestor] is the real [healthagents.Attestor]: package
// zkp proves, package chain verifies and records.
//
// A decision counts as verified only when the registry contract's
// verifyAndRecord transaction is mined with status 1 and emits
// StatementVerified for this proof; anything else is an error wrapping
// healthagents.ErrProofTimeout, ErrProofRejected or ErrChainUnavailable.
package attest
