// Command ifmagen writes zkp/msm_ifma_amd64.s, the AVX-512 IFMA kernels of
// the batched affine additions (zkp/msm_ifma.go explains them). Run it with
// go generate in package zkp.
//
// The kernels keep eight field elements per ZMM register set in radix 2^52
// (five limbs, one per register, one element per lane), as gnark-crypto's
// fp.Vector multiplication does, but convert only the inputs and outputs of
// a whole addition instead of every operand and result of every
// multiplication. Values stay in the 2^256 Montgomery domain of fp.Element:
// a radix-2^52 Montgomery product divides by 2^260, so one operand of every
// product is first multiplied by 16 (a shift). Values between operations
// are kept normalised (every limb below 2^52) but not reduced: the
// generator tracks an upper bound of each value, in multiples of q, and
// refuses to emit code whose bounds it cannot prove (a product's operands
// must stay below 2^260, a subtraction adds a multiple of q at least the
// subtrahend's bound, outputs are reduced below q by conditional
// subtractions that the bound says are enough).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"math/big"
	"os"
)

type fe [5]string // the five radix-2^52 limbs, low first

var (
	regA = fe{"Z0", "Z1", "Z2", "Z3", "Z4"}
	regB = fe{"Z5", "Z6", "Z7", "Z8", "Z9"}
	regC = fe{"Z10", "Z11", "Z12", "Z13", "Z14"} // products land here
	regQ = fe{"Z25", "Z26", "Z27", "Z28", "Z29"}
	tmp  = [8]string{"Z16", "Z17", "Z18", "Z19", "Z20", "Z21", "Z22", "Z23"}
)

const (
	acc5  = "Z15" // the product's sixth accumulator
	qInv  = "Z30" // -q⁻¹ mod 2^52, broadcast
	mask  = "Z31" // 2^52 − 1, broadcast
	slotB = 320   // bytes of one spilled value (five ZMM registers)
)

var (
	q, _  = new(big.Int).SetString("21888242871839275222246405745257275088696311157297823662689037894645226208583", 10)
	ratio float64 // q / 2^260
	limit float64 // 2^260 / q: a value must stay below limit·q
)

func init() {
	f, _ := new(big.Float).Quo(new(big.Float).SetInt(q), new(big.Float).SetMantExp(big.NewFloat(1), 260)).Float64()
	ratio, limit = f, 1/f
}

type gen struct{ b bytes.Buffer }

func (g *gen) p(format string, args ...any) { fmt.Fprintf(&g.b, "\t"+format+"\n", args...) }
func (g *gen) c(s string)                   { fmt.Fprintf(&g.b, "\n\t// %s\n", s) }

// value is an emitted value's registers and bound (in multiples of q).
type value struct {
	r     fe
	bound float64
}

func check(ok bool, format string, args ...any) {
	if !ok {
		log.Fatalf("ifmagen: "+format, args...)
	}
}

// constants loads q in radix 2^52, −q⁻¹ mod 2^52 and the limb mask.
func (g *gen) constants() {
	m := new(big.Int).Lsh(big.NewInt(1), 52)
	inv := new(big.Int).ModInverse(q, m)
	inv.Sub(m, inv)
	g.p("MOVQ $0x%x, AX", uint64(1)<<52-1)
	g.p("VPBROADCASTQ AX, %s", mask)
	g.p("MOVQ $0x%x, AX", inv.Uint64())
	g.p("VPBROADCASTQ AX, %s", qInv)
	t := new(big.Int).Set(q)
	for i := range 5 {
		l := new(big.Int).And(t, new(big.Int).Sub(m, big.NewInt(1)))
		t.Rsh(t, 52)
		g.p("MOVQ $0x%x, AX", l.Uint64())
		g.p("VPBROADCASTQ AX, %s", regQ[i])
	}
}

// load reads eight fp.Elements (canonical, 2^256 Montgomery form) at ptr
// into d, transposed to one element per lane and converted to radix 2^52.
// The lanes are in gnark-crypto's order (e0, e2, e1, e3, e4, e6, e5, e7),
// which store undoes.
func (g *gen) load(ptr string, d fe) value {
	t := tmp
	for i := range 4 {
		g.p("VMOVDQU64 %d(%s), %s", 64*i, ptr, t[i])
	}
	return g.convertIn(d)
}

// convertIn transposes and converts the four words in tmp[0:4] into d.
func (g *gen) convertIn(d fe) value {
	t := tmp
	g.p("VPUNPCKLQDQ %s, %s, %s", t[1], t[0], t[4])
	g.p("VPUNPCKHQDQ %s, %s, %s", t[1], t[0], t[5])
	g.p("VPUNPCKLQDQ %s, %s, %s", t[3], t[2], t[6])
	g.p("VPUNPCKHQDQ %s, %s, %s", t[3], t[2], t[7])
	g.p("VSHUFI64X2 $0x88, %s, %s, %s", t[6], t[4], t[0])
	g.p("VSHUFI64X2 $0xDD, %s, %s, %s", t[6], t[4], t[2])
	g.p("VSHUFI64X2 $0x88, %s, %s, %s", t[7], t[5], t[1])
	g.p("VSHUFI64X2 $0xDD, %s, %s, %s", t[7], t[5], t[3])
	g.p("VPANDQ %s, %s, %s", mask, t[0], d[0])
	for i := 1; i < 4; i++ {
		g.p("VPSRLQ $%d, %s, %s", 64-12*(i-1)-12, t[i-1], t[4])
		g.p("VPSLLQ $%d, %s, %s", 12*i, t[i], t[5])
		g.p("VPORQ %s, %s, %s", t[4], t[5], t[4])
		g.p("VPANDQ %s, %s, %s", mask, t[4], d[i])
	}
	g.p("VPSRLQ $16, %s, %s", t[3], d[4])
	return value{d, 1}
}

// store writes v, which must be below q, as eight fp.Elements at ptr.
func (g *gen) store(v value, ptr string) {
	check(v.bound <= 1, "store of a value bounded by %.3fq", v.bound)
	s, t := v.r, tmp
	g.p("VPSLLQ $52, %s, %s", s[1], t[4])
	g.p("VPORQ %s, %s, %s", t[4], s[0], t[0])
	for i := 1; i < 4; i++ {
		g.p("VPSRLQ $%d, %s, %s", 12*i, s[i], t[4])
		g.p("VPSLLQ $%d, %s, %s", 52-12*i, s[i+1], t[5])
		g.p("VPORQ %s, %s, %s", t[5], t[4], t[i])
	}
	g.p("VPUNPCKLQDQ %s, %s, %s", t[1], t[0], t[4])
	g.p("VPUNPCKHQDQ %s, %s, %s", t[1], t[0], t[5])
	g.p("VPUNPCKLQDQ %s, %s, %s", t[3], t[2], t[6])
	g.p("VPUNPCKHQDQ %s, %s, %s", t[3], t[2], t[7])
	g.p("VSHUFI64X2 $0x44, %s, %s, %s", t[6], t[4], t[0])
	g.p("VSHUFI64X2 $0x44, %s, %s, %s", t[7], t[5], t[1])
	g.p("VSHUFI64X2 $0xEE, %s, %s, %s", t[6], t[4], t[2])
	g.p("VSHUFI64X2 $0xEE, %s, %s, %s", t[7], t[5], t[3])
	for i := range 4 {
		g.p("VSHUFI64X2 $0xD8, %s, %s, %s", t[i], t[i], t[i])
	}
	for i := range 4 {
		g.p("VMOVDQU64 %s, %d(%s)", t[i], 64*i, ptr)
	}
}

// spill and unspill move a value to and from the stack frame's slot.
func (g *gen) spill(v value, slot int) {
	for i := range 5 {
		g.p("VMOVDQU64 %s, %d(SP)", v.r[i], slot*slotB+64*i)
	}
}

func (g *gen) unspill(slot int, bound float64, d fe) value {
	for i := range 5 {
		g.p("VMOVDQU64 %d(SP), %s", slot*slotB+64*i, d[i])
	}
	return value{d, bound}
}

func (g *gen) move(v value, d fe) value {
	for i := range 5 {
		if v.r[i] != d[i] {
			g.p("VMOVDQA64 %s, %s", v.r[i], d[i])
		}
	}
	return value{d, v.bound}
}

// norm propagates the carries of r's limbs (signed: a limb may be
// negative as long as the whole value is not).
func (g *gen) norm(r fe, t string) {
	for i := range 4 {
		g.p("VPSRAQ $52, %s, %s", r[i], t)
		g.p("VPANDQ %s, %s, %s", mask, r[i], r[i])
		g.p("VPADDQ %s, %s, %s", t, r[i+1], r[i+1])
	}
}

// shl4 sets d = 16·v.
func (g *gen) shl4(v value, d fe, t string) value {
	b := 16 * v.bound
	check(b < limit, "16 times a value bounded by %.3fq overflows 260 bits", v.bound)
	s := v.r
	g.p("VPSLLQ $4, %s, %s", s[0], d[0])
	g.p("VPANDQ %s, %s, %s", mask, d[0], d[0])
	for i := 1; i < 5; i++ {
		g.p("VPSLLQ $4, %s, %s", s[i], d[i])
		g.p("VPSRLQ $48, %s, %s", s[i-1], t)
		g.p("VPORQ %s, %s, %s", t, d[i], d[i])
		if i < 4 {
			g.p("VPANDQ %s, %s, %s", mask, d[i], d[i])
		}
	}
	return value{d, b}
}

// multiple returns the smallest power of two k >= b and log2 k.
func multiple(b float64) (float64, int) {
	j := 0
	for float64(int(1)<<j) < b {
		j++
	}
	return float64(int(1) << j), j
}

// addQ adds 2^j·q to the limbs of r (not normalised).
func (g *gen) addQ(r fe, j int, t string) {
	for i := range 5 {
		if j == 0 {
			g.p("VPADDQ %s, %s, %s", regQ[i], r[i], r[i])
		} else {
			g.p("VPSLLQ $%d, %s, %s", j, regQ[i], t)
			g.p("VPADDQ %s, %s, %s", t, r[i], r[i])
		}
	}
}

// sub sets d = a − Σ bs + k·q, k the smallest power of two covering the
// bs' bounds, normalised.
func (g *gen) sub(d fe, a value, bs ...value) value {
	var sb float64
	for _, b := range bs {
		sb += b.bound
	}
	k, j := multiple(sb)
	bound := a.bound + k
	check(bound < limit, "a difference bounded by %.3fq overflows 260 bits", bound)
	for n, b := range bs {
		check(n == 0 || b.r != d, "sub: a later subtrahend in the destination")
		src := a.r
		if n > 0 {
			src = d
		}
		for i := range 5 {
			g.p("VPSUBQ %s, %s, %s", b.r[i], src[i], d[i])
		}
	}
	g.addQ(d, j, tmp[7])
	g.norm(d, tmp[7])
	return value{d, bound}
}

// add sets d = a + b, normalised.
func (g *gen) add(d fe, a, b value) value {
	bound := a.bound + b.bound
	check(bound < limit, "a sum bounded by %.3fq overflows 260 bits", bound)
	for i := range 5 {
		g.p("VPADDQ %s, %s, %s", b.r[i], a.r[i], d[i])
	}
	g.norm(d, tmp[7])
	return value{d, bound}
}

// mul sets regC to the Montgomery product a·b/2^260 (CIOS, five rounds,
// as gnark-crypto's mulVec), normalised. a must be in regA and b in regB;
// neither is changed. With b = 16·x (shl4), the product is a·x/2^256,
// fp.Element's product.
func (g *gen) mul(a, b value) value {
	check(a.r == regA && b.r == regB, "mul operands in the wrong registers")
	check(a.bound < limit && b.bound < limit, "mul operands overflow 260 bits")
	// (ab + mq)/R < ab/R + q
	bound := a.bound*b.bound*ratio + 1
	c := [6]string{regC[0], regC[1], regC[2], regC[3], regC[4], acc5}
	t := tmp[0]
	for _, r := range c {
		g.p("VPXORQ %s, %s, %s", r, r, r)
	}
	for i := range 5 {
		bi := regB[i]
		for j := range 5 {
			g.p("VPMADD52LUQ %s, %s, %s", bi, regA[j], c[j])
			g.p("VPMADD52HUQ %s, %s, %s", bi, regA[j], c[j+1])
		}
		g.p("VPSRLQ $52, %s, %s", c[0], t)
		g.p("VPANDQ %s, %s, %s", mask, c[0], c[0])
		g.p("VPADDQ %s, %s, %s", t, c[1], c[1])
		g.p("VPXORQ %s, %s, %s", t, t, t)
		g.p("VPMADD52LUQ %s, %s, %s", qInv, c[0], t)
		g.p("VPANDQ %s, %s, %s", mask, t, t)
		for j := range 5 {
			g.p("VPMADD52LUQ %s, %s, %s", regQ[j], t, c[j])
			g.p("VPMADD52HUQ %s, %s, %s", regQ[j], t, c[j+1])
		}
		g.p("VPSRLQ $52, %s, %s", c[0], t)
		g.p("VPADDQ %s, %s, %s", t, c[1], c[0])
		for j := 1; j < 5; j++ {
			g.p("VMOVDQA64 %s, %s", c[j+1], c[j])
		}
		g.p("VPXORQ %s, %s, %s", c[5], c[5], c[5])
	}
	g.norm(regC, t)
	return value{regC, bound}
}

// reduce brings v below q by conditional subtractions of 2^j·q, largest
// first; t holds five scratch registers and s two more.
func (g *gen) reduce(v value, t fe, s [2]string) value {
	_, top := multiple(v.bound)
	for j := top - 1; j >= 0; j-- {
		for i := range 5 {
			if j == 0 {
				g.p("VPSUBQ %s, %s, %s", regQ[i], v.r[i], t[i])
			} else {
				g.p("VPSLLQ $%d, %s, %s", j, regQ[i], s[1])
				g.p("VPSUBQ %s, %s, %s", s[1], v.r[i], t[i])
			}
		}
		g.norm(t, s[1])
		g.p("VPSRAQ $63, %s, %s", t[4], s[0])
		for i := range 5 { // v = negative ? v : t
			g.p("VPTERNLOGQ $0xE2, %s, %s, %s", t[i], s[0], v.r[i])
		}
	}
	return value{v.r, 1}
}

func main() {
	out := flag.String("o", "msm_ifma_amd64.s", "output file")
	flag.Parse()
	g := &gen{}
	g.b.WriteString(`// Code generated by zkp/internal/ifmagen. DO NOT EDIT.

//go:build amd64 && !purego

#include "textflag.h"
`)
	g.addG1()
	g.addG2()
	g.invPrefix()
	g.invBack()
	if err := os.WriteFile(*out, g.b.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}
