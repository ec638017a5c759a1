// Package normproof lets a secure-aggregation participant prove, in zero
// knowledge, that its masked vector hides an update whose L2 norm is within
// the clip bound, so that a coordinator can refuse an oversized (or NaN, or
// otherwise mis-encoded) update before it joins the sum, without seeing it.
//
// Arithmetic is in the BN254 scalar field Fr. A participant u with quantized
// update x (signed integers, |x_j| < 2^Bits), pairwise seeds s_uv shared
// with each peer v and a self-mask seed b_u sends
//
//	y_j = x_j + PRG(b_u, j) + Σ_v sign(u, v) · PRG(s_uv, j)   (mod r)
//
// where PRG(s, j) is the Poseidon2 (width 2) compression of (s, j+1) and
// sign(u, v) is +1 when u sorts before v, -1 otherwise, so the pairwise
// masks cancel in the sum. Every seed is committed as the compression of
// (s, 0); both peers of a pair publish the commitment of their common seed,
// so the coordinator can check that both used the same one.
//
// The Groth16 circuit (gnark, BN254, no commitment gadgets: range checks
// are plain bit decompositions) proves, for public y, seed commitments,
// signs, norm bound N and evaluation bound E:
//
//   - the seeds open the commitments and y is x masked as above;
//   - every weight word satisfies |x_j| < 2^Bits and Σ x_j^2 <= N;
//   - the evaluation words (correct, total, ...) are small non-negative
//     integers with correct <= total <= E.
//
// The design follows the input-validation line of ACORN (USENIX Security
// 2023) and RoFL (S&P 2023); see docs/federated-privacy.md for what it does
// and does not cover, and docs/decisions/federated.md for the choices.
package normproof
