package ceremony_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/consensys/gnark/backend/witness"
	csbn254 "github.com/consensys/gnark/constraint/bn254"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/zkp/ceremony"
)

// powerCircuit proves knowledge of X with X^(Rounds+1) + X + 5 = Y: a
// small stand-in for the service's circuits (whose phase 1 takes minutes),
// with Rounds setting its size. Its public inputs have the registry's shape
// [issuerKeyHash, digest, circuitId] so its keys can be registered on chain;
// only Y (the digest's place) is constrained.
type powerCircuit struct {
	Rounds    int `gnark:"-"`
	X         frontend.Variable
	Issuer    frontend.Variable `gnark:",public"`
	Y         frontend.Variable `gnark:",public"`
	CircuitID frontend.Variable `gnark:",public"`
}

func (c *powerCircuit) Define(api frontend.API) error {
	acc := c.X
	for range c.Rounds {
		acc = api.Mul(acc, c.X)
	}
	api.AssertIsEqual(c.Y, api.Add(acc, c.X, 5))
	return nil
}

func compile(t testing.TB, rounds int) *csbn254.R1CS {
	t.Helper()
	ccs, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, &powerCircuit{Rounds: rounds})
	require.NoError(t, err)
	return ccs.(*csbn254.R1CS)
}

// assignment returns a satisfying assignment for x.
func assignment(rounds int, x int64) *powerCircuit {
	y := new(big.Int).Exp(big.NewInt(x), big.NewInt(int64(rounds+1)), nil)
	y.Add(y, big.NewInt(x+5))
	return &powerCircuit{Rounds: rounds, X: x, Y: y, Issuer: 0, CircuitID: 0}
}

// Two circuits of different domains (2^3 and 2^5 constraints), so phase 2
// runs over a truncated phase 1 for the smaller one.
var testCircuits = sync.OnceValue(func() []ceremony.Circuit {
	return []ceremony.Circuit{
		{Name: "small", CCS: compile(&testing.T{}, 6)},
		{Name: "larger", CCS: compile(&testing.T{}, 20)},
	}
})

var rounds = map[string]int{"small": 6, "larger": 20}

// viaFile round-trips f through its bytes, as a participant receives it.
func viaFile(t testing.TB, f *ceremony.File) *ceremony.File {
	t.Helper()
	g, err := ceremony.Parse(append([]byte(nil), f.Bytes()...))
	require.NoError(t, err)
	return g
}

// transcript is a whole three-party ceremony over testCircuits.
type transcript struct {
	phase1 []*ceremony.File
	srs    *ceremony.File
	phase2 []*ceremony.File
	keys   []ceremony.Keys
}

var beacon1, beacon2 = []byte("drand round 1234 randomness ...."), []byte("drand round 1240 randomness ....")

var threeParty = sync.OnceValues(func() (*transcript, error) {
	ctx := context.Background()
	circuits := testCircuits()
	var tr transcript
	f, err := ceremony.NewPhase1(ceremony.PowerFor(circuits))
	if err != nil {
		return nil, err
	}
	tr.phase1 = append(tr.phase1, f)
	for range 3 {
		if f, err = ceremony.Contribute(ctx, f); err != nil {
			return nil, err
		}
		tr.phase1 = append(tr.phase1, f)
	}
	if tr.srs, _, err = ceremony.SealPhase1(ctx, tr.phase1, beacon1); err != nil {
		return nil, err
	}
	if f, err = ceremony.NewPhase2(ctx, tr.srs, circuits); err != nil {
		return nil, err
	}
	tr.phase2 = append(tr.phase2, f)
	for range 3 {
		if f, err = ceremony.Contribute(ctx, f); err != nil {
			return nil, err
		}
		tr.phase2 = append(tr.phase2, f)
	}
	if tr.keys, _, err = ceremony.Finalize(ctx, tr.srs, circuits, tr.phase2, beacon2); err != nil {
		return nil, err
	}
	return &tr, nil
})

func prove(t testing.TB, name string, pk *groth16bn254.ProvingKey, x int64) (groth16.Proof, frontend.Circuit) {
	t.Helper()
	var ccs *csbn254.R1CS
	for _, c := range testCircuits() {
		if c.Name == name {
			ccs = c.CCS
		}
	}
	a := assignment(rounds[name], x)
	w, err := frontend.NewWitness(a, ecc.BN254.ScalarField())
	require.NoError(t, err)
	proof, err := groth16.Prove(ccs, pk, w)
	require.NoError(t, err)
	return proof, a
}

func publicOf(t testing.TB, a frontend.Circuit) []*big.Int {
	t.Helper()
	w, err := frontend.NewWitness(a, ecc.BN254.ScalarField(), frontend.PublicOnly())
	require.NoError(t, err)
	in, err := chain.InputsFromWitness(w)
	require.NoError(t, err)
	return in
}

// TestThreePartyCeremony: three contributions to each phase give keys whose
// proofs verify with gnark and on the embedded chain, through the same
// Ledger calls the service uses (Register, then Submit); a proof of another
// statement does not.
func TestThreePartyCeremony(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	tr, err := threeParty()
	require.NoError(t, err)
	require.Len(t, tr.keys, 2)

	// The whole transcript checks out, file by file.
	steps, err := ceremony.VerifySRS(ctx, tr.phase1, tr.srs)
	require.NoError(t, err)
	require.Len(t, steps, 5) // init, three contributions, the seal
	for i, s := range steps[:4] {
		assert.Equal(t, i, s.Index)
		assert.Equal(t, tr.phase1[i].Hash(), s.Hash)
		assert.NoError(t, s.Err)
	}
	steps, err = ceremony.VerifyPhase2(ctx, tr.srs, testCircuits(), tr.phase2)
	require.NoError(t, err)
	require.Len(t, steps, 4)

	ledger, err := chain.NewSimulated(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ledger.Close() })
	_, err = ledger.RegisterIssuer(ctx, testIssuer, common.Address{})
	require.NoError(t, err)
	for _, k := range tr.keys {
		assert.Equal(t, uint64(1)<<map[string]int{"small": 3, "larger": 5}[k.Name], k.PK.Domain.Cardinality, "%s: keys over the circuit's own domain", k.Name)
		kind := chain.Kind("ceremony-" + k.Name)
		_, a := prove(t, k.Name, k.PK, 3)
		a.(*powerCircuit).Issuer, a.(*powerCircuit).CircuitID = testIssuer, chain.CircuitID(kind)
		proof, err := groth16.Prove(circuitOf(k.Name), k.PK, mustWitness(t, a))
		require.NoError(t, err)
		pub, err := frontend.NewWitness(a, ecc.BN254.ScalarField(), frontend.PublicOnly())
		require.NoError(t, err)
		require.NoError(t, groth16.Verify(proof, k.VK, pub), k.Name)

		vk, err := chain.VerifyingKeyFromGnark(k.VK)
		require.NoError(t, err)
		require.NoError(t, ledger.Register(ctx, kind, vk))
		onchain, err := chain.ProofFromGnark(proof)
		require.NoError(t, err)
		in := publicOf(t, a)
		rc, err := ledger.Submit(ctx, kind, onchain, in)
		require.NoError(t, err, k.Name)
		assert.True(t, rc.Verified, k.Name)

		// Another public input: rejected by the contract and by gnark.
		other := []*big.Int{in[0], new(big.Int).Add(in[1], big.NewInt(1)), in[2]}
		ok, err := ledger.Check(ctx, kind, onchain, other)
		require.NoError(t, err)
		assert.False(t, ok, "%s: a proof verifies only its own statement", k.Name)
	}
}

// TestTamperedContributionFailsVerify: changing one point of one
// contribution, or any byte of its proof, or dropping or reordering a
// file, makes verification fail at that file.
func TestTamperedContributionFailsVerify(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	tr, err := threeParty()
	require.NoError(t, err)

	// flip returns a copy of f with byte i of section 0 (counted from the
	// section's end when negative) changed.
	flip := func(f *ceremony.File, i int) *ceremony.File {
		b := append([]byte(nil), f.Bytes()...)
		if i < 0 {
			i += len(b)
		} else {
			i += len(b) - int(f.Sections[len(f.Sections)-1].Bytes)
			for _, s := range f.Sections[:len(f.Sections)-1] {
				i -= int(s.Bytes)
			}
		}
		b[i] ^= 0x01
		g, err := ceremony.Parse(b)
		require.NoError(t, err)
		return g
	}
	// swap returns a copy of f with the 32-byte compressed G1 points at
	// offsets a and b of its first section exchanged: both stay valid,
	// canonical points, so only the cryptographic checks can notice.
	swap := func(f *ceremony.File, a, b int) *ceremony.File {
		raw := append([]byte(nil), f.Bytes()...)
		start := len(raw)
		for _, s := range f.Sections {
			start -= int(s.Bytes)
		}
		pa, pb := raw[start+a:start+a+32], raw[start+b:start+b+32]
		tmp := append([]byte(nil), pa...)
		copy(pa, pb)
		copy(pb, tmp)
		g, err := ceremony.Parse(raw)
		require.NoError(t, err)
		return g
	}
	// Offsets in a phase-1 section: three update proofs (3 × 96 bytes),
	// the domain size (8), [β]₂ (64), then [τ¹]₁, [τ²]₁, …; in a phase-2
	// section: the commitment count (2), [δ]₁ (32), the length of the
	// private-wire points (4), then those points.
	const tau1, tau2, tau5, tau6 = 360, 392, 488, 520
	const pkk0, pkk1 = 38, 70
	with := func(files []*ceremony.File, i int, f *ceremony.File) []*ceremony.File {
		out := append([]*ceremony.File(nil), files...)
		out[i] = f
		return out
	}
	// relink rewrites f's header to name prev as the file it follows, as
	// someone hiding a change to prev would.
	relink := func(f, prev *ceremony.File) *ceremony.File {
		raw := f.Bytes()
		nl := bytes.IndexByte(raw, '\n')
		h := f.Header
		h.Prev = prev.Hash()
		line, err := json.Marshal(&h)
		require.NoError(t, err)
		g, err := ceremony.Parse(append(append(line, '\n'), raw[nl+1:]...))
		require.NoError(t, err)
		return g
	}
	p1, p2 := tr.phase1, tr.phase2
	for _, c := range []struct {
		name  string
		files []*ceremony.File
		at    int // index of the file whose step fails; -1: the chain's framing fails first
	}{
		{"fail/phase1 #3 [τ¹]₁ and [τ²]₁ swapped (valid points)", with(p1, 3, swap(p1[3], tau1, tau2)), 3},
		{"fail/phase1 #3 [τ⁵]₁ and [τ⁶]₁ swapped (valid points)", with(p1, 3, swap(p1[3], tau5, tau6)), 3},
		{"fail/phase1 #3 proof byte", with(p1, 3, flip(p1[3], 40)), 3},
		{"fail/phase1 #3 last point", with(p1, 3, flip(p1[3], -40)), 3},
		{"fail/phase1 #3 a middle point", with(p1, 3, flip(p1[3], 1000)), 3},
		{"fail/phase1 #2 changed (#3 no longer follows)", with(p1, 2, flip(p1[2], 1000)), -1},
		{"fail/phase1 #2 changed, #3 relinked", func() []*ceremony.File {
			changed := swap(p1[2], tau5, tau6)
			return []*ceremony.File{p1[0], p1[1], changed, relink(p1[3], changed)}
		}(), 2},
		{"fail/phase1 init changed", with(p1, 0, flip(p1[0], -40)), -1},
		{"fail/phase1 #2 left out", []*ceremony.File{p1[0], p1[1], p1[3]}, -1},
		{"fail/phase1 #1 and #2 swapped", []*ceremony.File{p1[0], p1[2], p1[1], p1[3]}, -1},
		{"fail/phase1 #2 a stray contribution, #3 relinked", func() []*ceremony.File {
			s := stray(t, p1[1])
			return []*ceremony.File{p1[0], p1[1], s, relink(p1[3], s)}
		}(), 3},
	} {
		steps, _, err := ceremony.VerifyPhase1(ctx, c.files)
		assertFailsAt(t, c.name, steps, err, c.at)
	}
	for _, c := range []struct {
		name  string
		files []*ceremony.File
		at    int
	}{
		{"fail/phase2 #3 two private-wire points swapped (valid points)", with(p2, 3, swap(p2[3], pkk0, pkk1)), 3},
		{"fail/phase2 #3 last point", with(p2, 3, flip(p2[3], -80)), 3},
		{"fail/phase2 #3 a middle point", with(p2, 3, flip(p2[3], 200)), 3},
		{"fail/phase2 #2 changed, #3 relinked", func() []*ceremony.File {
			changed := flip(p2[2], 200)
			return []*ceremony.File{p2[0], p2[1], changed, relink(p2[3], changed)}
		}(), 2},
		{"fail/phase2 #1 a stray contribution, #2 relinked", func() []*ceremony.File {
			s := stray(t, p2[0])
			return []*ceremony.File{p2[0], s, relink(p2[2], s), p2[3]}
		}(), -1},
	} {
		steps, err := ceremony.VerifyPhase2(ctx, tr.srs, testCircuits(), c.files)
		assertFailsAt(t, c.name, steps, err, c.at)
	}
	// The seal must be the beacon's.
	other, _, err := ceremony.SealPhase1(ctx, tr.phase1, []byte("another beacon value, chosen late"))
	require.NoError(t, err)
	_, err = ceremony.VerifySRS(ctx, tr.phase1, flip(tr.srs, -40))
	assert.ErrorIs(t, err, ceremony.ErrTranscript)
	assert.NotEqual(t, other.Hash(), tr.srs.Hash())
	// Phase 2 over another srs, or for other circuits, is refused.
	_, err = ceremony.VerifyPhase2(ctx, other, testCircuits(), tr.phase2)
	assert.ErrorIs(t, err, ceremony.ErrTranscript)
	swapped := []ceremony.Circuit{testCircuits()[1], testCircuits()[0]}
	_, err = ceremony.VerifyPhase2(ctx, tr.srs, swapped, tr.phase2)
	assert.ErrorIs(t, err, ceremony.ErrTranscript)
}

// assertFailsAt checks that a verification failed, at the file with index
// at, after the files before it checked out (at -1: before any file).
func assertFailsAt(t *testing.T, name string, steps []ceremony.Step, err error, at int) {
	t.Helper()
	if !assert.ErrorIs(t, err, ceremony.ErrTranscript, name) {
		return
	}
	if at < 0 {
		assert.Empty(t, steps, name)
		return
	}
	if assert.Len(t, steps, at+1, name) {
		for _, s := range steps[:at] {
			assert.NoError(t, s.Err, name)
		}
		assert.Error(t, steps[at].Err, name)
		assert.Contains(t, steps[at].String(), "FAILED", name)
		t.Logf("%s: %v", name, steps[at].Err)
	}
}

// stray contributes to f again: a well-formed contribution that is not the
// one the chain continued from.
func stray(t testing.TB, f *ceremony.File) *ceremony.File {
	t.Helper()
	g, err := ceremony.Contribute(t.Context(), f)
	require.NoError(t, err)
	return g
}

// TestFilesRoundTrip: WriteFile/ReadFile keep a file byte for byte, never
// overwrite one, and a participant contributes from files alone.
func TestFilesRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f, err := ceremony.NewPhase1(2)
	require.NoError(t, err)
	path := filepath.Join(dir, "phase1-0000.bin")
	require.NoError(t, ceremony.WriteFile(path, f))
	assert.Error(t, ceremony.WriteFile(path, f), "never overwritten")
	g, err := ceremony.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, f.Hash(), g.Hash())
	h, err := ceremony.Contribute(t.Context(), viaFile(t, g))
	require.NoError(t, err)
	assert.Equal(t, 1, h.Index)
	assert.Equal(t, f.Hash(), h.Prev)
	_, _, err = ceremony.VerifyPhase1(t.Context(), []*ceremony.File{g, h})
	require.NoError(t, err)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, f.Bytes(), raw)
}

// testIssuer is the issuer key hash the ceremony's test statements name.
var testIssuer = big.NewInt(41)

func circuitOf(name string) *csbn254.R1CS {
	for _, c := range testCircuits() {
		if c.Name == name {
			return c.CCS
		}
	}
	return nil
}

func mustWitness(t testing.TB, a frontend.Circuit) witness.Witness {
	t.Helper()
	w, err := frontend.NewWitness(a, ecc.BN254.ScalarField())
	require.NoError(t, err)
	return w
}
