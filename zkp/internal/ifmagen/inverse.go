package main

import "math/big"

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
	g.accumulate(acc, "invPrefix: running product")
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
	g.accumulate(acc, "invBack: running inverse")
	g.p("SUBQ $256, DI")
	g.p("SUBQ $320, SI")
	g.p("SUBQ $256, R9")
	g.p("JMP loopBack")
	g.b.WriteString("\ndoneBack:\n")
	g.p("VZEROUPPER")
	g.p("RET")
}

// accumulate emits acc·den for the block at DI (den shifted by 4 bits for
// the product's radix) and moves the product back into regA, where the
// next iteration expects it; what names the product if its bound is too
// high for the loop.
func (g *gen) accumulate(acc value, what string) {
	d16 := g.shl4(g.load("DI", regC), regB, tmp[0])
	next := g.mul(acc, d16)
	check(next.bound <= loopBound, "%s bound %.3f", what, next.bound)
	g.move(next, regA)
}
