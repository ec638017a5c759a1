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
	"math"
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
	_ = math.MaxInt
}

// addG1 emits addAffineG1IFMA: for i < 8·n, with λ = (qy−by)·inv,
// x3 = λ² − bx − qx and y3 = λ·(bx − x3) − by.
func (g *gen) addG1() {
	g.b.WriteString(`
// func addAffineG1IFMA(bx, by, qx, qy, inv, x3, y3 *fp.Element, n uint64)
TEXT ·addAffineG1IFMA(SB), $640-64
	MOVQ bx+0(FP), DI
	MOVQ by+8(FP), SI
	MOVQ qx+16(FP), R8
	MOVQ qy+24(FP), R9
	MOVQ inv+32(FP), R10
	MOVQ x3+40(FP), R11
	MOVQ y3+48(FP), R12
	MOVQ n+56(FP), CX
`)
	g.constants()
	g.b.WriteString("\nloopG1:\n")
	g.p("TESTQ CX, CX")
	g.p("JEQ doneG1")
	g.p("DECQ CX")
	g.c("λ = (qy − by)·inv")
	inv := g.load("R10", regA)
	inv16 := g.shl4(inv, regB, tmp[0])
	qy := g.load("R9", regA)
	by := g.load("SI", regC)
	g.spill(by, 1)
	e := g.sub(regA, qy, by)
	lam := g.move(g.mul(e, inv16), regA)
	g.c("λ²")
	lam16 := g.shl4(lam, regB, tmp[0])
	g.spill(lam16, 0)
	sq := g.mul(lam, lam16)
	g.c("x3 = λ² − bx − qx")
	bx := g.load("DI", regA)
	qx := g.load("R8", regB)
	x3 := g.reduce(g.sub(regC, sq, bx, qx), regB, [2]string{tmp[0], tmp[1]})
	g.store(x3, "R11")
	g.c("y3 = λ·(bx − x3) − by")
	w := g.sub(regA, bx, x3)
	lam16 = g.unspill(0, lam16.bound, regB)
	t := g.mul(w, lam16)
	by = g.unspill(1, by.bound, regA)
	y3 := g.reduce(g.sub(regC, t, by), regB, [2]string{tmp[0], tmp[1]})
	g.store(y3, "R12")
	for _, r := range []string{"DI", "SI", "R8", "R9", "R10", "R11", "R12"} {
		g.p("ADDQ $256, %s", r)
	}
	g.p("JMP loopG1")
	g.b.WriteString("\ndoneG1:\n")
	g.p("VZEROUPPER")
	g.p("RET")
}

// Arguments of addAffineG2IFMA, in order: E2 coordinates split into
// their real (0) and imaginary (1) parts, one vector each.
var g2Args = []string{"bx0", "bx1", "by0", "by1", "qx0", "qx1", "qy0", "qy1", "ninv", "x30", "x31", "y30", "y31"}

// argLoad loads eight elements of the vector argument name at byte offset
// DX into d.
func (g *gen) argLoad(name string, d fe) value {
	g.p("MOVQ %s(FP), AX", argOff(name))
	for i := range 4 {
		g.p("VMOVDQU64 %d(AX)(DX*1), %s", 64*i, tmp[i])
	}
	return g.convertIn(d)
}

// argStore is store to the vector argument name at byte offset DX.
func (g *gen) argStore(v value, name string) {
	g.p("MOVQ %s(FP), BX", argOff(name))
	g.p("ADDQ DX, BX")
	g.store(v, "BX")
}

func argOff(name string) string {
	for i, a := range g2Args {
		if a == name {
			return fmt.Sprintf("%s+%d", a, 8*i)
		}
	}
	log.Fatalf("ifmagen: no argument %s", name)
	return ""
}

// slots names the stack slots of addG2's spilled values.
type slots struct {
	next  int
	bound map[int]float64
}

func (s *slots) put(g *gen, v value) int {
	n := s.next
	s.next++
	s.bound[n] = v.bound
	g.spill(v, n)
	return n
}

func (s *slots) get(g *gen, n int, d fe) value { return g.unspill(n, s.bound[n], d) }

// addG2 emits addAffineG2IFMA, addBatchG2's additions after the batch
// inversion: with d = qx − bx, e = qy − by (in E2) and ninv = 1/(d₀² + d₁²),
// λ = e·conj(d)·ninv, x3 = λ² − bx − qx, y3 = λ·(bx − x3) − by.
func (g *gen) addG2() {
	const nSlots = 32
	fmt.Fprintf(&g.b, `
// func addAffineG2IFMA(bx0, bx1, by0, by1, qx0, qx1, qy0, qy1, ninv, x30, x31, y30, y31 *fp.Element, n uint64)
TEXT ·addAffineG2IFMA(SB), $%d-%d
	MOVQ n+%d(FP), CX
	XORQ DX, DX
`, nSlots*slotB, 8*(len(g2Args)+1), 8*len(g2Args))
	g.constants()
	g.b.WriteString("\nloopG2:\n")
	g.p("TESTQ CX, CX")
	g.p("JEQ doneG2")
	g.p("DECQ CX")
	s := &slots{bound: map[int]float64{}}
	two := [2]string{tmp[0], tmp[1]}
	var bx, sx, d, d16, by, e [2]int
	for c := range 2 {
		g.c(fmt.Sprintf("part %d: d = qx − bx, sx = bx + qx, e = qy − by", c))
		bxv := g.argLoad(fmt.Sprintf("bx%d", c), regA)
		qxv := g.argLoad(fmt.Sprintf("qx%d", c), regB)
		dv := g.sub(regC, qxv, bxv)
		bx[c] = s.put(g, bxv)
		sx[c] = s.put(g, g.add(regB, bxv, qxv))
		d[c] = s.put(g, dv)
		d16[c] = s.put(g, g.shl4(dv, regA, tmp[0]))
		byv := g.argLoad(fmt.Sprintf("by%d", c), regA)
		qyv := g.argLoad(fmt.Sprintf("qy%d", c), regB)
		by[c] = s.put(g, byv)
		e[c] = s.put(g, g.sub(regC, qyv, byv))
	}
	// prod returns the slot of a·b, b16 holding 16·b.
	prod := func(a, b16 int) int {
		return s.put(g, g.mul(s.get(g, a, regA), s.get(g, b16, regB)))
	}
	g.c("λ = (e₀d₀ + e₁d₁, e₁d₀ − e₀d₁)·ninv")
	p00, p11, p10, p01 := prod(e[0], d16[0]), prod(e[1], d16[1]), prod(e[1], d16[0]), prod(e[0], d16[1])
	n0 := s.put(g, g.add(regC, s.get(g, p00, regA), s.get(g, p11, regB)))
	n1 := s.put(g, g.sub(regC, s.get(g, p10, regA), s.get(g, p01, regB)))
	ninv16 := s.put(g, g.shl4(g.argLoad("ninv", regA), regB, tmp[0]))
	l0v := g.mul(s.get(g, n0, regA), s.get(g, ninv16, regB))
	l0 := s.put(g, l0v)
	l016 := s.put(g, g.shl4(l0v, regA, tmp[0]))
	l1v := g.mul(s.get(g, n1, regA), s.get(g, ninv16, regB))
	l1 := s.put(g, l1v)
	l116 := s.put(g, g.shl4(l1v, regA, tmp[0]))
	g.c("x3 = ((λ₀ + λ₁)(λ₀ − λ₁), 2λ₀λ₁) − bx − qx")
	l0r, l1r := s.get(g, l0, regA), s.get(g, l1, regB)
	diff := g.sub(regC, l0r, l1r)
	sum := g.add(regA, l0r, l1r)
	diff16 := g.shl4(diff, regB, tmp[0])
	t := g.mul(sum, diff16)
	x30 := g.reduce(g.sub(regC, t, s.get(g, sx[0], regA)), regB, two)
	g.argStore(x30, "x30")
	x3 := [2]int{s.put(g, x30)}
	t = g.mul(s.get(g, l0, regA), s.get(g, l116, regB))
	t = g.add(regC, t, t)
	x31 := g.reduce(g.sub(regC, t, s.get(g, sx[1], regA)), regB, two)
	g.argStore(x31, "x31")
	x3[1] = s.put(g, x31)
	g.c("y3 = (λ₀w₀ − λ₁w₁, λ₀w₁ + λ₁w₀) − by, w = bx − x3")
	var w [2]int
	for c := range 2 {
		w[c] = s.put(g, g.sub(regC, s.get(g, bx[c], regA), s.get(g, x3[c], regB)))
	}
	a, b := prod(w[0], l016), prod(w[1], l116)
	t = g.sub(regC, s.get(g, a, regA), s.get(g, b, regB))
	y30 := g.reduce(g.sub(regC, t, s.get(g, by[0], regA)), regB, two)
	g.argStore(y30, "y30")
	a, b = prod(w[1], l016), prod(w[0], l116)
	y31 := g.reduce(g.sub(regC, g.add(regA, s.get(g, a, regA), s.get(g, b, regB)), s.get(g, by[1], regB)), regB, two)
	g.argStore(y31, "y31")
	check(s.next <= nSlots, "addG2 uses %d slots", s.next)
	g.p("ADDQ $256, DX")
	g.p("JMP loopG2")
	g.b.WriteString("\ndoneG2:\n")
	g.p("VZEROUPPER")
	g.p("RET")
}

// one loads 2^256 mod q (one in Montgomery form) into d.
func (g *gen) one(d fe) value {
	m := new(big.Int).Lsh(big.NewInt(1), 52)
	t := new(big.Int).Mod(new(big.Int).Lsh(big.NewInt(1), 256), q)
	for i := range 5 {
		l := new(big.Int).And(t, new(big.Int).Sub(m, big.NewInt(1)))
		t.Rsh(t, 52)
		g.p("MOVQ $0x%x, AX", l.Uint64())
		g.p("VPBROADCASTQ AX, %s", d[i])
	}
	return value{d, 1}
}

// loopBound is the bound assumed for a value carried from one iteration
// of a loop to the next; the loop body must bring it back below.
const loopBound = 2

// invPrefix emits invPrefixIFMA, the forward half of a lane-wise batch
// inversion: per lane, the running product of den over the blocks, the
// product before each block saved to pre (five ZMM words per block, radix
// 2^52), the lanes' full products written reduced to total.
func (g *gen) invPrefix() {
	g.b.WriteString(`
// func invPrefixIFMA(den *fp.Element, pre *uint64, total *fp.Element, n uint64)
TEXT ·invPrefixIFMA(SB), NOSPLIT, $0-32
	MOVQ den+0(FP), DI
	MOVQ pre+8(FP), SI
	MOVQ total+16(FP), R8
	MOVQ n+24(FP), CX
`)
	g.constants()
	acc := g.one(regA)
	g.b.WriteString("\nloopPre:\n")
	g.p("TESTQ CX, CX")
	g.p("JEQ donePre")
	g.p("DECQ CX")
	acc.bound = loopBound
	for i := range 5 {
		g.p("VMOVDQU64 %s, %d(SI)", acc.r[i], 64*i)
	}
	d16 := g.shl4(g.load("DI", regC), regB, tmp[0])
	acc2 := g.mul(acc, d16)
	check(acc2.bound <= loopBound, "invPrefix: running product bound %.3f", acc2.bound)
	g.move(acc2, regA)
	g.p("ADDQ $256, DI")
	g.p("ADDQ $320, SI")
	g.p("JMP loopPre")
	g.b.WriteString("\ndonePre:\n")
	g.store(g.reduce(value{regA, loopBound}, regB, [2]string{tmp[0], tmp[1]}), "R8")
	g.p("VZEROUPPER")
	g.p("RET")
}

// invBack emits invBackIFMA, the backward half: from the inverses of the
// lanes' full products (tinv), last block first, inv = tinv·pre and
// tinv = tinv·den.
func (g *gen) invBack() {
	g.b.WriteString(`
// func invBackIFMA(den *fp.Element, pre *uint64, tinv, inv *fp.Element, n uint64)
TEXT ·invBackIFMA(SB), NOSPLIT, $0-40
	MOVQ den+0(FP), DI
	MOVQ pre+8(FP), SI
	MOVQ tinv+16(FP), R8
	MOVQ inv+24(FP), R9
	MOVQ n+32(FP), CX
	TESTQ CX, CX
	JEQ doneBack
	MOVQ CX, AX
	DECQ AX
	MOVQ AX, BX
	SHLQ $8, AX
	ADDQ AX, DI
	ADDQ AX, R9
	IMULQ $320, BX
	ADDQ BX, SI
`)
	g.constants()
	g.move(g.load("R8", regC), regA)
	g.b.WriteString("\nloopBack:\n")
	g.p("TESTQ CX, CX")
	g.p("JEQ doneBack")
	g.p("DECQ CX")
	acc := value{regA, loopBound}
	pre := value{regC, loopBound}
	for i := range 5 {
		g.p("VMOVDQU64 %d(SI), %s", 64*i, pre.r[i])
	}
	inv := g.mul(acc, g.shl4(pre, regB, tmp[0]))
	g.store(g.reduce(inv, regB, [2]string{tmp[0], tmp[1]}), "R9")
	d16 := g.shl4(g.load("DI", regC), regB, tmp[0])
	acc2 := g.mul(acc, d16)
	check(acc2.bound <= loopBound, "invBack: running inverse bound %.3f", acc2.bound)
	g.move(acc2, regA)
	g.p("SUBQ $256, DI")
	g.p("SUBQ $320, SI")
	g.p("SUBQ $256, R9")
	g.p("JMP loopBack")
	g.b.WriteString("\ndoneBack:\n")
	g.p("VZEROUPPER")
	g.p("RET")
}
