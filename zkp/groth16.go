package zkp

import (
	"errors"
	"fmt"
	"math/big"
	"sync"
	"sync/atomic"

	curve "github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr/fft"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/consensys/gnark/backend/witness"
	csbn254 "github.com/consensys/gnark/constraint/bn254"
)

// groth16Prover computes the same Groth16 proof as gnark's
// groth16bn254.Prove (same key, same equations, fresh r and s per proof)
// with the fixed-base MSM tables of msm.go instead of gnark-crypto's
// MultiExp. It supports exactly our circuits' shape: no BSB22 commitment.
type groth16Prover struct {
	ccs *csbn254.R1CS
	pk  *groth16bn254.ProvingKey

	a, b1, k, z *tableG1
	b2          *tableG2
	nbPublic    int // public wires, the constant one included; K covers the rest
}

// checkProvingKeyShape reports whether pk has the sizes the prover relies
// on for ccs (checkShape runs it when keys are loaded).
func checkProvingKeyShape(ccs *csbn254.R1CS, pk *groth16bn254.ProvingKey) error {
	nbWires := ccs.GetNbInternalVariables() + ccs.GetNbPublicVariables() + ccs.GetNbSecretVariables()
	nbPublic := ccs.GetNbPublicVariables()
	switch {
	case len(pk.CommitmentKeys) != 0:
		return errors.New("proving key has commitment keys")
	case len(pk.InfinityA) != nbWires || len(pk.InfinityB) != nbWires:
		return fmt.Errorf("proving key has %d/%d wire flags for %d wires", len(pk.InfinityA), len(pk.InfinityB), nbWires)
	case len(pk.G1.A) != nbWires-int(pk.NbInfinityA) || len(pk.G1.B) != nbWires-int(pk.NbInfinityB) || len(pk.G2.B) != len(pk.G1.B):
		return errors.New("proving key A/B sizes do not match its infinity flags")
	case len(pk.G1.K) != nbWires-nbPublic:
		return fmt.Errorf("proving key has %d K points for %d private wires", len(pk.G1.K), nbWires-nbPublic)
	case pk.Domain.Cardinality < 2 || len(pk.G1.Z) < int(pk.Domain.Cardinality)-1:
		return fmt.Errorf("proving key has %d Z points for domain %d", len(pk.G1.Z), pk.Domain.Cardinality)
	}
	infA, infB := 0, 0
	for i := range nbWires {
		if pk.InfinityA[i] {
			infA++
		}
		if pk.InfinityB[i] {
			infB++
		}
	}
	if infA != int(pk.NbInfinityA) || infB != int(pk.NbInfinityB) {
		return errors.New("proving key infinity flags do not match their counts")
	}
	return nil
}

// newGroth16Prover computes the MSM tables of pk (~0.6 CPU-seconds).
func newGroth16Prover(ccs *csbn254.R1CS, pk *groth16bn254.ProvingKey) (*groth16Prover, error) {
	if err := checkProvingKeyShape(ccs, pk); err != nil {
		return nil, fmt.Errorf("zkp: %w", err)
	}
	nbPublic := ccs.GetNbPublicVariables()
	p := &groth16Prover{ccs: ccs, pk: pk, nbPublic: nbPublic}
	var wg sync.WaitGroup
	wg.Go(func() { p.a = newTableG1(pk.G1.A) })
	wg.Go(func() { p.b1 = newTableG1(pk.G1.B) })
	wg.Go(func() { p.k = newTableG1(pk.G1.K) })
	wg.Go(func() { p.z = newTableG1(pk.G1.Z[:pk.Domain.Cardinality-1]) })
	wg.Go(func() { p.b2 = newTableG2(pk.G2.B) })
	wg.Wait()
	return p, nil
}

// lazyGroth16 builds a circuit's groth16Prover in the background, started
// by the circuit's first proof. Its tables take ~0.6 CPU-seconds per
// circuit: a process that only verifies never pays it, and no request waits
// for it (proofs use gnark's prover until the tables are ready).
type lazyGroth16 struct {
	start sync.Once
	done  chan struct{} // closed when the build has finished, successfully or not
	p     atomic.Pointer[groth16Prover]
}

// groth16Async returns the fixed-base prover of ck's proving key, or nil
// while its tables are being built; the first call starts the build. The
// returned channel is closed when the build has finished.
func (ck *circuitKeys) groth16Async() (*groth16Prover, <-chan struct{}) {
	if p := ck.g16.p.Load(); p != nil {
		return p, nil
	}
	ck.g16.start.Do(func() {
		ck.g16.done = make(chan struct{})
		go func() {
			defer close(ck.g16.done)
			// The shapes were checked when the keys were loaded, so no error
			// is expected; one would leave gnark's prover in use.
			if p, err := ck.buildGroth16Prover(); err == nil {
				ck.g16.p.Store(p)
			}
		}()
	})
	return ck.g16.p.Load(), ck.g16.done
}

// prove proves w with the fixed-base prover when its tables are ready,
// else with gnark's.
func (ck *circuitKeys) prove(w witness.Witness) (*groth16bn254.Proof, error) {
	if gp, _ := ck.groth16Async(); gp != nil {
		return gp.prove(w)
	}
	return groth16bn254.Prove(ck.ccs, ck.pk, w)
}

// prove solves the constraint system on w and returns a proof.
func (p *groth16Prover) prove(w witness.Witness) (*groth16bn254.Proof, error) {
	sol, err := p.ccs.Solve(w)
	if err != nil {
		return nil, err
	}
	solution := sol.(*csbn254.R1CSSolution)
	wires := []fr.Element(solution.W)

	var r, s, kr fr.Element
	if _, err := r.SetRandom(); err != nil {
		return nil, err
	}
	if _, err := s.SetRandom(); err != nil {
		return nil, err
	}
	kr.Mul(&r, &s).Neg(&kr)
	var rBig, sBig big.Int
	r.BigInt(&rBig)
	s.BigInt(&sBig)

	wiresA := dropInfinity(wires, p.pk.InfinityA, len(p.pk.G1.A))
	wiresB := dropInfinity(wires, p.pk.InfinityB, len(p.pk.G1.B))

	// The H polynomial first (an FFT pass), then the five MSMs in parallel.
	// B in G2 is the largest (about a third of the work): splitting it in
	// two halves measured ~2 % more CPU (a second bucket reduction) for no
	// gain in balance on two cores.
	h := computeH(solution.A, solution.B, solution.C, &p.pk.Domain)

	var bs2 curve.G2Jac
	var arG1, bs1G1, kG1, zG1 curve.G1Jac
	var wg sync.WaitGroup
	wg.Go(func() { arG1 = p.a.multiExp(wiresA, 0) })
	wg.Go(func() { bs1G1 = p.b1.multiExp(wiresB, 0) })
	wg.Go(func() { kG1 = p.k.multiExp(wires[p.nbPublic:], 0) })
	wg.Go(func() { zG1 = p.z.multiExp(h[:p.z.n], 0) })
	wg.Go(func() { bs2 = p.b2.multiExp(wiresB, 0) })
	wg.Wait()

	deltas := curve.BatchScalarMultiplicationG1(&p.pk.G1.Delta, []fr.Element{r, s, kr})
	proof := &groth16bn254.Proof{}

	// A = α + Σ wᵢ·Aᵢ + r·δ
	arG1.AddMixed(&p.pk.G1.Alpha)
	arG1.AddMixed(&deltas[0])
	proof.Ar.FromJacobian(&arG1)

	// B = β + Σ wᵢ·Bᵢ + s·δ, in G2 for the proof and in G1 for C
	var deltaS curve.G2Jac
	deltaS.FromAffine(&p.pk.G2.Delta)
	deltaS.ScalarMultiplication(&deltaS, &sBig)
	bs2.AddAssign(&deltaS)
	bs2.AddMixed(&p.pk.G2.Beta)
	proof.Bs.FromJacobian(&bs2)

	bs1G1.AddMixed(&p.pk.G1.Beta)
	bs1G1.AddMixed(&deltas[1])

	// C = Σ wᵢ·Kᵢ + Σ hᵢ·Zᵢ + s·A + r·B₁ − r·s·δ
	kG1.AddMixed(&deltas[2])
	kG1.AddAssign(&zG1)
	var t curve.G1Jac
	t.ScalarMultiplication(&arG1, &sBig)
	kG1.AddAssign(&t)
	t.ScalarMultiplication(&bs1G1, &rBig)
	kG1.AddAssign(&t)
	proof.Krs.FromJacobian(&kG1)
	return proof, nil
}

// dropInfinity returns the values whose key point is not the point at
// infinity, in order.
func dropInfinity(values []fr.Element, infinity []bool, n int) []fr.Element {
	out := make([]fr.Element, 0, n)
	for i, inf := range infinity {
		if !inf {
			out = append(out, values[i])
		}
	}
	return out
}

// computeH returns the coefficients of H = (A·B − C)/(Xⁿ − 1), where A, B
// and C are the polynomials taking the solution's constraint values on the
// domain, in the (bit-reversed) order of the proving key's Z points. The
// quotient is evaluated on a coset, where Xⁿ − 1 is the constant gⁿ − 1.
func computeH(a, b, c []fr.Element, domain *fft.Domain) []fr.Element {
	n := int(domain.Cardinality)
	pad := func(v []fr.Element) []fr.Element {
		out := make([]fr.Element, n)
		copy(out, v)
		return out
	}
	a, b, c = pad(a), pad(b), pad(c)
	for _, v := range [][]fr.Element{a, b, c} {
		domain.FFTInverse(v, fft.DIF)
		domain.FFT(v, fft.DIT, fft.OnCoset())
	}

	var den, one fr.Element
	one.SetOne()
	den.Exp(domain.FrMultiplicativeGen, big.NewInt(int64(n)))
	den.Sub(&den, &one).Inverse(&den)
	for i := range a {
		a[i].Mul(&a[i], &b[i]).Sub(&a[i], &c[i]).Mul(&a[i], &den)
	}
	domain.FFTInverse(a, fft.DIF, fft.OnCoset())
	return a
}
