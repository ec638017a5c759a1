// Package iden3 holds gnark gadgets that compute exactly what iden3's
// libraries compute natively, so a circuit can check values a payer made
// with go-iden3-crypto or @iden3/js-crypto:
//
//   - Poseidon: iden3's Poseidon (the circomlib parameters: x⁵ S-box, 8 full
//     rounds, the partial rounds of NROUNDSP, widths of 1 to 16 inputs) in
//     the optimised form poseidon.Hash evaluates (sparse matrices S and the
//     pre-matrix P); the constants are generated from go-iden3-crypto's
//     own source (go generate, gen/main.go).
//   - EdDSA-Poseidon on Baby Jubjub (a = 168700, d = 168696), the check of
//     babyjub.PublicKey.VerifyPoseidon: S·B8 = R8 + 8·H(R8, A, msg)·A, with
//     keys of small order refused. S·B8 is a fixed-base multiplication
//     (precomputed 2-bit windows), H·8A a signed-digit one, both in the
//     Montgomery form with offset points (montgomery.go says why its
//     incomplete additions are sound): 3 155 constraints.
//
// The tests compare both with go-iden3-crypto on random inputs, and the
// signature check with @iden3/js-crypto's signatures when
// HEALTHAGENTS_TEST_VERIFYJS is set (.ci/verifyjs.sh).
package iden3
