// Package credential is the payer's side of a verifiable decision: coverage
// terms signed by the payer with EdDSA on Baby Jubjub over a Poseidon hash,
// exactly as iden3's libraries sign (go-iden3-crypto's babyjub
// SignPoseidon, @iden3/js-crypto), so a payer can issue with tools it
// already trusts.
//
// The terms are encoded as a fixed, versioned list of BN254 field elements
// (Fields); the signed message is the Poseidon hash of that list (Message).
// docs/credentials.md documents every field's encoding with a worked
// example, so a payer can implement issuing from that page alone.
package credential
