package zkp

import (
	"math/big"
	"slices"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	curve "github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/groth16"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	csbn254 "github.com/consensys/gnark/constraint/bn254"
	"github.com/consensys/gnark/frontend"
	"github.com/stretchr/testify/require"
)

// edgeScalars are scalars whose signed digits hit the corner cases: zero,
// one, the largest value r-1, a digit of exactly ±2^(c-1), long carry
// chains (all bits set below a power of two).
func edgeScalars() []fr.Element {
	var out []fr.Element
	add := func(b *big.Int) {
		var e fr.Element
		e.SetBigInt(b)
		out = append(out, e)
	}
	r := fr.Modulus()
	add(big.NewInt(0))
	add(big.NewInt(1))
	add(new(big.Int).Sub(r, big.NewInt(1)))
	add(new(big.Int).Sub(r, big.NewInt(2)))
	for _, n := range []uint{10, 11, 12, 13, 64, 128, 200, 252, 253} {
		p := new(big.Int).Lsh(big.NewInt(1), n)
		add(p)
		add(new(big.Int).Sub(p, big.NewInt(1)))
		add(new(big.Int).Add(p, big.NewInt(1)))
		add(new(big.Int).Rsh(p, 1))
	}
	return out
}

func TestSignedDigits(t *testing.T) {
	scalars := edgeScalars()
	for range 200 {
		var e fr.Element
		_, _ = e.SetRandom()
		scalars = append(scalars, e)
	}
	for c := uint(4); c <= 16; c++ {
		w := msmWindows(c)
		d := make([]int32, w)
		for _, s := range scalars {
			signedDigits(d, s.Bits(), c)
			sum := new(big.Int)
			for j := w - 1; j >= 0; j-- {
				require.Less(t, d[j], int32(1)<<(c-1), "c=%d digit %d", c, j)
				require.GreaterOrEqual(t, d[j], -(int32(1) << (c - 1)), "c=%d digit %d", c, j)
				sum.Lsh(sum, c).Add(sum, big.NewInt(int64(d[j])))
			}
			var want big.Int
			s.BigInt(&want)
			require.Zero(t, want.Cmp(sum), "c=%d s=%s", c, want.String())
		}
	}
}

// randomPoints returns n distinct points of G1 and G2 with a few points at
// infinity mixed in (the proving key's K may hold some).
func randomPoints(n int) ([]curve.G1Affine, []curve.G2Affine) {
	_, _, g1, g2 := curve.Generators()
	p1 := make([]curve.G1Affine, n)
	p2 := make([]curve.G2Affine, n)
	for i := range n {
		var s fr.Element
		_, _ = s.SetRandom()
		var b big.Int
		s.BigInt(&b)
		if i%97 != 5 {
			p1[i].ScalarMultiplication(&g1, &b)
			p2[i].ScalarMultiplication(&g2, &b)
		}
	}
	return p1, p2
}

func TestFixedBaseMultiExpMatchesGnark(t *testing.T) {
	checkMultiExpMatchesGnark(t)
}

// checkMultiExpMatchesGnark compares the fixed-base MSMs with
// gnark-crypto's MultiExp on random, boolean, edge and repeated scalars.
func checkMultiExpMatchesGnark(t *testing.T) {
	const n = 300
	p1, p2 := randomPoints(n)
	scalars := make([]fr.Element, n)
	edges := edgeScalars()
	for i := range scalars {
		switch {
		case i < len(edges):
			scalars[i] = edges[i]
		case i%3 == 0:
			scalars[i].SetUint64(uint64(i % 2)) // boolean wires
		case i%3 == 1 && i < 200:
			scalars[i] = edges[len(edges)-1] // one value for many wires: deep buckets (drain)
		default:
			_, _ = scalars[i].SetRandom()
		}
	}
	// Repeated points, to exercise doubling inside a bucket.
	p1[n-1], p2[n-1] = p1[n-2], p2[n-2]
	scalars[n-1] = scalars[n-2]

	var want1 curve.G1Jac
	_, err := want1.MultiExp(p1, scalars, ecc.MultiExpConfig{})
	require.NoError(t, err)
	var want2 curve.G2Jac
	_, err = want2.MultiExp(p2, scalars, ecc.MultiExpConfig{})
	require.NoError(t, err)

	// The width chosen for n points, and the ones our circuits use.
	for _, c := range []uint{msmWindowBits(n), 7, 10, 11, 12} { // 7: the Jacobian reduction
		t1, t2 := newTableG1Bits(p1, c), newTableG2Bits(p2, c)
		got1 := t1.multiExp(scalars, 0)
		require.True(t, got1.Equal(&want1), "G1 c=%d", c)
		got2 := t2.multiExp(scalars, 0)
		require.True(t, got2.Equal(&want2), "G2 c=%d", c)

		// A sub-range with an offset, as the prover splits G2.
		lo, hi := t2.multiExp(scalars[:n/3], 0), t2.multiExp(scalars[n/3:], n/3)
		lo.AddAssign(&hi)
		require.True(t, lo.Equal(&want2), "G2 split c=%d", c)

		// All-zero scalars give the point at infinity.
		zero := t1.multiExp(make([]fr.Element, n), 0)
		require.True(t, zero.Z.IsZero())
	}
}

// readyGroth16 starts building ck's fixed-base prover if needed and waits
// for it.
func readyGroth16(tb testing.TB, ck *circuitKeys) *groth16Prover {
	tb.Helper()
	if _, done := ck.groth16Async(); done != nil {
		<-done
	}
	gp, _ := ck.groth16Async()
	require.NotNil(tb, gp, "fixed-base prover of %s", ck.name)
	return gp
}

// TestProverUsesFixedBaseTables proves through the Prover once the tables
// are ready (the path every proof but a process's first few takes) and
// checks the proofs verify, and not for other outputs.
func TestProverUsesFixedBaseTables(t *testing.T) {
	<-testSys.Warm() // what a server does at start
	for _, name := range CircuitNames() {
		ck, err := testSys.circuit(name)
		require.NoError(t, err)
		require.NotNil(t, ck.g16.p.Load(), "Warm built the tables of %s", name)
	}
	p := newTestProver(t)
	v, err := NewVerifier(testSys)
	require.NoError(t, err)
	proof, err := proveEligible(t.Context(), p)
	require.NoError(t, err)
	require.NoError(t, v.Verify(t.Context(), proof))
	proof.Public[1].SetZero() // another digest
	require.ErrorIs(t, v.Verify(t.Context(), proof), ErrInvalidProof)

	in := eligibleInput()
	proof, _, _, err = p.ProvePrescriptionV4(t.Context(), PrescriptionV4Input{Credential: in.Credential, Drugs: []string{"11289"}, ServiceDate: in.ServiceDate})
	require.NoError(t, err)
	require.NoError(t, v.Verify(t.Context(), proof))
	proof.Public[1].SetZero()
	require.ErrorIs(t, v.Verify(t.Context(), proof), ErrInvalidProof)
}

// TestGroth16ProverProofsVerify proves both sample statements with the
// fixed-base prover and checks gnark's verifier accepts them and rejects
// them for another public input.
func TestGroth16ProverProofsVerify(t *testing.T) {
	checkGroth16ProofsVerify(t)
}

// checkGroth16ProofsVerify proves both sample statements and checks the
// verifier accepts them and rejects them for another public input.
func checkGroth16ProofsVerify(t *testing.T) {
	for _, name := range []string{CircuitEligibilityV3, CircuitPrescriptionV4} {
		ck, err := testSys.circuit(name)
		require.NoError(t, err)
		gp := readyGroth16(t, ck)
		assignment, err := sampleAssignment(name)
		require.NoError(t, err)
		w, err := frontend.NewWitness(assignment, ecc.BN254.ScalarField())
		require.NoError(t, err)
		pub, err := w.Public()
		require.NoError(t, err)
		proof, err := gp.prove(w)
		require.NoError(t, err)
		require.NoError(t, groth16.Verify(proof, ck.vk, pub), name)

		vec := pub.Vector().(fr.Vector)
		tampered := make(fr.Vector, len(vec))
		copy(tampered, vec)
		tampered[len(tampered)-1].SetUint64(2)
		require.Error(t, groth16bn254.Verify(proof, ck.vk, tampered), name)
	}
}

// BenchmarkGroth16Prove compares gnark's prover with the fixed-base one on
// the eligibility sample statement (cpu-ms/op is the figure to compare).
func BenchmarkGroth16Prove(b *testing.B) {
	ck, err := testSys.circuit(CircuitEligibilityV3)
	if err != nil {
		b.Fatal(err)
	}
	assignment, err := sampleAssignment(CircuitEligibilityV3)
	if err != nil {
		b.Fatal(err)
	}
	w, err := frontend.NewWitness(assignment, ecc.BN254.ScalarField())
	if err != nil {
		b.Fatal(err)
	}
	b.Run("gnark", func(b *testing.B) {
		measure(b, func() error { _, err := groth16bn254.Prove(ck.ccs, ck.pk, w); return err })
	})
	b.Run("fixedbase", func(b *testing.B) {
		gp := readyGroth16(b, ck)
		measure(b, func() error { _, err := gp.prove(w); return err })
	})
}

// BenchmarkMultiExpK compares gnark-crypto's MultiExp with the fixed-base
// table on the eligibility key's K points and a real witness.
func BenchmarkMultiExpK(b *testing.B) {
	ck, err := testSys.circuit(CircuitEligibilityV3)
	if err != nil {
		b.Fatal(err)
	}
	assignment, err := sampleAssignment(CircuitEligibilityV3)
	if err != nil {
		b.Fatal(err)
	}
	w, err := frontend.NewWitness(assignment, ecc.BN254.ScalarField())
	if err != nil {
		b.Fatal(err)
	}
	sol, err := ck.ccs.Solve(w)
	if err != nil {
		b.Fatal(err)
	}
	wires := []fr.Element(sol.(*csbn254.R1CSSolution).W)[ck.ccs.GetNbPublicVariables():]
	b.Run("gnark", func(b *testing.B) {
		measure(b, func() error {
			var p curve.G1Jac
			_, err := p.MultiExp(ck.pk.G1.K, wires, ecc.MultiExpConfig{NbTasks: 1})
			return err
		})
	})
	b.Run("fixedbase", func(b *testing.B) {
		t := newTableG1(ck.pk.G1.K)
		b.Logf("c=%d windows=%d points=%d", t.c, t.windows, t.n)
		measure(b, func() error { t.multiExp(wires, 0); return nil })
	})
}

// TestSumAffine checks the batched pairwise sums against plain Jacobian
// additions, with the cases the affine formula cannot take: a point added
// to itself, to its negation, and the point at infinity, at odd lengths.
func TestSumAffine(t *testing.T) {
	p1, p2 := randomPoints(40)
	for _, n := range []int{0, 1, 2, 3, 7, 40} {
		a1 := append([]curve.G1Affine(nil), p1[:n]...)
		a2 := append([]curve.G2Affine(nil), p2[:n]...)
		if n >= 7 {
			a1[1], a2[1] = a1[0], a2[0] // doubling
			a1[3].Neg(&a1[2])           // cancelling
			a2[3].Neg(&a2[2])
			a1[5], a2[5] = curve.G1Affine{}, curve.G2Affine{} // infinity
		}
		var want1 curve.G1Jac
		var want2 curve.G2Jac
		for i := range a1 {
			want1.AddMixed(&a1[i])
			want2.AddMixed(&a2[i])
		}
		got1, got2 := sumG1(a1), sumG2(a2)
		require.True(t, got1.Equal(&want1), "G1 n=%d", n)
		require.True(t, got2.Equal(&want2), "G2 n=%d", n)
	}
}

// bucketAdder returns add(k, i, negate), which schedules ±(p1[i], p2[i])
// into bucket k of b1 and b2 and adds (k+1)·±p[i] to want1 and want2 with
// plain Jacobian additions: Σ (k+1)·bucket[k] must come out as want.
func bucketAdder(p1 []curve.G1Affine, p2 []curve.G2Affine, b1 *bucketsG1, b2 *bucketsG2, want1 *curve.G1Jac, want2 *curve.G2Jac) func(k, i int, negate bool) {
	return func(k, i int, negate bool) {
		b1.add(k, &p1[i].X, &p1[i].Y, negate)
		b2.add(k, &p2[i].X, &p2[i].Y, negate)
		a1, a2 := p1[i], p2[i]
		if negate {
			a1.Neg(&a1)
			a2.Neg(&a2)
		}
		var j1 curve.G1Jac
		var j2 curve.G2Jac
		j1.FromAffine(&a1)
		j2.FromAffine(&a2)
		for range k + 1 {
			want1.AddAssign(&j1)
			want2.AddAssign(&j2)
		}
	}
}

// TestBucketsSpecialCases drives the bucket accumulator through its
// special paths: a point added to a bucket holding it (doubling, Jacobian
// side bucket), its negation (cancelling), and additions deferred behind a
// pending one, and checks Σ (k+1)·bucket[k] against plain additions.
func TestBucketsSpecialCases(t *testing.T) {
	p1, p2 := randomPoints(4)
	b1, b2 := newBucketsG1(4), newBucketsG2(4)
	var want1 curve.G1Jac
	var want2 curve.G2Jac
	add := bucketAdder(p1, p2, b1, b2, &want1, &want2)
	add(0, 0, false) // fills bucket 0
	add(0, 0, false) // doubling
	add(1, 1, false) // fills bucket 1
	add(1, 1, true)  // cancelling
	add(2, 2, false) // fills bucket 2
	add(2, 3, false) // pending
	add(2, 0, true)  // deferred behind it
	add(3, 3, false)
	require.NotNil(t, b1.fallback)
	require.NotEmpty(t, b1.deferred)
	b1.drain()
	b2.drain()
	got1, got2 := b1.reduce(), b2.reduce()
	require.True(t, got1.Equal(&want1), "G1")
	require.True(t, got2.Equal(&want2), "G2")
}

// TestBucketsDrain queues many additions behind a few buckets and drains
// them: one bucket deep (a hundred points, a doubling and a cancelling pair
// among them), one whose queue cancels the bucket to the point at infinity,
// one empty before its queue; Σ (k+1)·bucket[k] is checked against plain
// additions, and every queue must be empty after one drain.
func TestBucketsDrain(t *testing.T) {
	p1, p2 := randomPoints(130)
	p1, p2 = slices.DeleteFunc(p1, func(p curve.G1Affine) bool { return p.IsInfinity() }), slices.DeleteFunc(p2, func(p curve.G2Affine) bool { return p.IsInfinity() })
	b1, b2 := newBucketsG1(8), newBucketsG2(8)
	var want1 curve.G1Jac
	var want2 curve.G2Jac
	add := bucketAdder(p1, p2, b1, b2, &want1, &want2)
	for i := range 100 {
		add(0, i, false)
	}
	add(0, 7, false) // doubling inside the queue
	add(0, 9, true)  // cancels the 9 above
	add(3, 100, false)
	add(3, 101, false)
	add(3, 101, true)
	add(3, 100, true) // bucket 3 back to the point at infinity
	add(5, 102, false)
	add(5, 103, true)
	require.Greater(t, len(b1.deferred), 90)
	b1.drain()
	b2.drain()
	require.Zero(t, b1.n+len(b1.deferred)+b2.n+len(b2.deferred))
	require.False(t, b1.filled[3] || b2.filled[3], "bucket 3 cancelled")
	got1, got2 := b1.reduce(), b2.reduce()
	require.True(t, got1.Equal(&want1), "G1")
	require.True(t, got2.Equal(&want2), "G2")
}

func TestToAffineG2(t *testing.T) {
	_, p2 := randomPoints(8)
	jac := make([]curve.G2Jac, len(p2))
	for i := range p2 {
		jac[i].FromAffine(&p2[i])
		jac[i].DoubleAssign() // Z != 1
	}
	jac[3] = curve.G2Jac{} // infinity
	out := make([]curve.G2Affine, len(jac))
	toAffineG2(out, jac, make([]curve.E2, len(jac)))
	for i := range jac {
		var want curve.G2Affine
		want.FromJacobian(&jac[i])
		require.True(t, out[i].Equal(&want), "point %d", i)
	}
}

// BenchmarkSignedDigits splits random scalars into c = 13 digits, as the
// MSMs of the -v3/-v4 keys do for every wire of a proof.
func BenchmarkSignedDigits(b *testing.B) {
	scalars := make([][fr.Limbs]uint64, 4096)
	for i := range scalars {
		var e fr.Element
		_, _ = e.SetRandom()
		scalars[i] = e.Bits()
	}
	d := make([]int32, msmWindows(13))
	for i := 0; b.Loop(); i++ {
		signedDigits(d, scalars[i%len(scalars)], 13)
	}
}
