package zkp

//go:generate go run ./internal/ifmagen -o msm_ifma_amd64.s

// Fused batched affine additions (AVX-512 IFMA).
//
// addBatchG1's vector steps (msm_batch.go) each call one fp.Vector
// operation, and gnark-crypto's IFMA multiplication converts both operands
// from radix 2^64 to radix 2^52 (a transpose and shifts), multiplies, then
// reduces fully (a Barrett step) and converts back, eight elements at a
// time; its subtraction is element by element. After the batch inversion,
// the rest of an addition — λ = (y2 − y1)·inv, x3 = λ² − x1 − x2,
// y3 = λ·(x1 − x3) − y1: three multiplications and five subtractions —
// runs here as one kernel (msm_ifma_amd64.s, written by internal/ifmagen)
// that converts each input once, keeps every intermediate in radix 2^52,
// unreduced but bounded (the generator proves the bounds), subtracts
// eight lanes at a time, and reduces and converts back only x3 and y3.
// haveIFMA is false on other CPUs and with the noavx or purego build tags
// (gnark-crypto's cpu.SupportAVX512IFMA); the vector path is used there.
