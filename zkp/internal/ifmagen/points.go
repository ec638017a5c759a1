package main

import (
	"fmt"
	"log"
)

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
