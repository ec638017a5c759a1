// Package secagg implements secure aggregation of integer vectors: the
// protocol of Bonawitz et al., "Practical Secure Aggregation for
// Privacy-Preserving Machine Learning" (CCS 2017), in its semi-honest form
// with dropout recovery, as used by SecAgg+ (Bell et al., CCS 2020) over a
// complete communication graph.
//
// Each participant u holds two X25519 key pairs: (c_u) to seal the secret
// shares it sends to its peers through the coordinator (HKDF-SHA256 then
// XChaCha20-Poly1305) and (s_u) for pairwise masks. For every pair {u, v} the
// seed s_{u,v} = HKDF-SHA256(X25519(s_u, s_v), session, ids) is expanded by
// ChaCha20 with its full 256-bit key into a mask over Z_2^64; the smaller id
// adds it, the larger subtracts it, so pairwise masks cancel in the sum. A
// fresh self mask PRG(b_u) hides the input even from peers. b_u and s_u's
// private key are Shamir-shared t-of-n over GF(2^521 - 1); after the masked
// inputs are in, survivors reveal b-shares of survivors and s-shares of
// participants that dropped, never both for one participant, and [Unmask]
// recovers exactly the sum of the survivors' inputs.
//
// Inputs are fixed-point vectors produced by [Quantizer], whose constructor
// proves the sum cannot overflow. [Client] is the participant's side; the
// coordinator needs only [Unmask] over a [Transcript], which by construction
// holds no plaintext input.
//
// Not implemented: the consistency-check round and signatures that protect
// against an actively malicious coordinator, and the sparse (Harary) graph of
// SecAgg+. See docs/decisions/federated.md.
package secagg
