//go:build !amd64 || purego

package zkp

import "github.com/consensys/gnark-crypto/ecc/bn254/fp"

const haveIFMA = false

func addAffineG1IFMA(bx, by, qx, qy, inv, x3, y3 *fp.Element, n uint64) {
	panic("zkp: no IFMA kernel in this build")
}

func addAffineG2IFMA(bx0, bx1, by0, by1, qx0, qx1, qy0, qy1, ninv, x30, x31, y30, y31 *fp.Element, n uint64) {
	panic("zkp: no IFMA kernel in this build")
}

func invPrefixIFMA(den *fp.Element, pre *uint64, total *fp.Element, n uint64) {
	panic("zkp: no IFMA kernel in this build")
}

func invBackIFMA(den *fp.Element, pre *uint64, tinv, inv *fp.Element, n uint64) {
	panic("zkp: no IFMA kernel in this build")
}
