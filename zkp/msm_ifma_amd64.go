//go:build amd64 && !purego

package zkp

import (
	"github.com/consensys/gnark-crypto/ecc/bn254/fp"
	"github.com/consensys/gnark-crypto/utils/cpu"
)

// haveIFMA reports whether the IFMA kernels of msm_ifma_amd64.s run here.
var haveIFMA = cpu.SupportAVX512IFMA

// addAffineG1IFMA sets, for i < 8·n, λ = (qy[i] − by[i])·inv[i],
// x3[i] = λ² − bx[i] − qx[i] and y3[i] = λ·(bx[i] − x3[i]) − by[i]. Inputs
// must be canonical (below q); outputs are. Each block of eight inputs is
// read before its outputs are written, so x3 and y3 may be inputs.
//
//go:noescape
func addAffineG1IFMA(bx, by, qx, qy, inv, x3, y3 *fp.Element, n uint64)

// addAffineG2IFMA is addAffineG1IFMA over E2, coordinates split into their
// real (0) and imaginary (1) parts: with d = qx − bx and e = qy − by,
// ninv[i] = 1/(d₀² + d₁²) and λ = e·conj(d)·ninv, it sets x3 = λ² − bx − qx
// and y3 = λ·(bx − x3) − by for i < 8·n.
//
//go:noescape
func addAffineG2IFMA(bx0, bx1, by0, by1, qx0, qx1, qy0, qy1, ninv, x30, x31, y30, y31 *fp.Element, n uint64)

// invPrefixIFMA is the forward half of batchInvertIFMA: for every lane j
// (element j of each block of eight), the running product of den over the
// n blocks, the product before block b saved to pre[40·b:40·b+40] (radix
// 2^52), the full product written to total[j].
//
//go:noescape
func invPrefixIFMA(den *fp.Element, pre *uint64, total *fp.Element, n uint64)

// invBackIFMA is the backward half: given tinv[j] = 1/total[j], it sets
// inv[i] = 1/den[i] for the n blocks, last block first.
//
//go:noescape
func invBackIFMA(den *fp.Element, pre *uint64, tinv, inv *fp.Element, n uint64)
