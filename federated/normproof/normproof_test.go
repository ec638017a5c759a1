package normproof

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"math"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/internal/testcache"
)

const (
	testFrac = 16
	testClip = 1.0
)

var testShape = Shape{Weights: 8, Extra: 5, Peers: 2, Bits: testFrac + 1}

var (
	keysOnce sync.Once
	keys     *Keys
	keysErr  error
)

// testKeys are testShape's keys, set up once per machine and circuit: the
// shared test cache (package testcache) holds them raw under the shape and
// the digest of its compiled circuit (internal/testcache/normkeys does the
// same for the other packages, which may import this one). Keys that do
// not read back, or do not fit the circuit, are set up again.
// TestKeysKeptAndFetched still runs a set-up of its own.
func testKeys(t testing.TB) *Keys {
	keysOnce.Do(func() { keys, keysErr = cachedTestKeys(testShape) })
	require.NoError(t, keysErr)
	return keys
}

func cachedTestKeys(s Shape) (*Keys, error) {
	c, err := testcache.Open()
	if err != nil {
		return nil, err
	}
	cs, err := Compile(s)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	if _, err := cs.WriteTo(h); err != nil {
		return nil, err
	}
	key := testcache.Key([]byte("normproof-test-keys/v1"), []byte(s.Name()), h.Sum(nil))
	build := func() ([]byte, error) {
		k, err := Setup(s)
		if err != nil {
			return nil, err
		}
		var pk, vk bytes.Buffer
		if _, err := k.PK.WriteRawTo(&pk); err != nil {
			return nil, err
		}
		if _, err := k.VK.WriteRawTo(&vk); err != nil {
			return nil, err
		}
		return testcache.Pack(map[string][]byte{"pk": pk.Bytes(), "vk": vk.Bytes()}), nil
	}
	decode := func(data []byte) (*Keys, error) {
		files, err := testcache.Unpack(data, []string{"pk", "vk"})
		if err != nil {
			return nil, err
		}
		pk, vk := groth16.NewProvingKey(ecc.BN254), groth16.NewVerifyingKey(ecc.BN254)
		if n, err := pk.UnsafeReadFrom(bytes.NewReader(files["pk"])); err != nil || n != int64(len(files["pk"])) {
			return nil, testcache.ErrBadEntry
		}
		if n, err := vk.UnsafeReadFrom(bytes.NewReader(files["vk"])); err != nil || n != int64(len(files["vk"])) || vk.NbPublicWitness() != cs.GetNbPublicVariables()-1 {
			return nil, testcache.ErrBadEntry
		}
		return &Keys{Shape: s, CS: cs, PK: pk, VK: vk}, nil
	}
	data, err := c.Get(key, build)
	if err != nil {
		return nil, err
	}
	if k, err := decode(data); err == nil {
		return k, nil
	}
	if data, err = build(); err != nil {
		return nil, err
	}
	if err := c.Store(key, data); err != nil {
		return nil, err
	}
	return decode(data)
}

func randomSeed(t testing.TB) Seed {
	b := make([]byte, 48)
	_, err := rand.Read(b)
	require.NoError(t, err)
	s, err := SeedFromBytes(b)
	require.NoError(t, err)
	return s
}

// party is one participant of a three-party round.
type party struct {
	st  Statement
	sec Secret
}

// quantize scales an update to fixed point (deterministic rounding here).
func quantize(u []float64) []int64 {
	out := make([]int64, len(u))
	for i, v := range u {
		out[i] = int64(math.Round(math.Ldexp(v, testFrac)))
	}
	return out
}

// newRound builds three parties with updates xs (weights, then evaluation
// words), pairwise seeds shared as secure aggregation would, and honest
// statements.
func newRound(t testing.TB, xs [3][]int64, evalBound uint32) [3]party {
	var pair [3][3]Seed
	for i := range 3 {
		for j := i + 1; j < 3; j++ {
			pair[i][j] = randomSeed(t)
			pair[j][i] = pair[i][j]
		}
	}
	nb, err := NormBound(testClip, testFrac, testShape.Weights)
	require.NoError(t, err)
	var ps [3]party
	for i := range 3 {
		self := randomSeed(t)
		var pairs []Pair
		p := &ps[i]
		for j := range 3 {
			if j == i {
				continue
			}
			pairs = append(pairs, Pair{Seed: pair[i][j], Plus: i < j})
			p.st.PairCommit = append(p.st.PairCommit, Commit(pair[i][j]))
			p.st.PairPlus = append(p.st.PairPlus, i < j)
			p.sec.PairSeed = append(p.sec.PairSeed, pair[i][j])
		}
		p.sec.X, p.sec.SelfSeed = xs[i], self
		p.st.Masked = Mask(xs[i], self, pairs)
		p.st.SelfCommit = Commit(self)
		p.st.NormBound, p.st.EvalBound = nb, evalBound
	}
	return ps
}

// honestUpdate is an update of L2 norm scale*clip with evaluation words.
func honestUpdate(scale float64, correct, total int64) []int64 {
	u := make([]float64, testShape.Weights)
	for i := range u {
		u[i] = scale * testClip / math.Sqrt(float64(len(u))) * float64(1-2*(i%2))
	}
	return append(quantize(u), correct, total, 1, 0, 0)
}

func TestHonestSubmissionsVerifyAndSumExactly(t *testing.T) {
	k := testKeys(t)
	xs := [3][]int64{honestUpdate(1, 8, 10), honestUpdate(0.5, 3, 10), honestUpdate(0.99, 10, 10)}
	ps := newRound(t, xs, 10)
	sum := make([]fr.Element, testShape.Dim())
	for i := range ps {
		proof, err := Prove(k, &ps[i].st, &ps[i].sec)
		require.NoError(t, err)
		require.NoError(t, Verify(k.VK, k.Shape, &ps[i].st, proof))
		for j := range sum {
			sum[j].Add(&sum[j], &ps[i].st.Masked[j])
		}
	}
	// Unmasking: the pairwise masks cancel; the self masks are removed.
	for i := range ps {
		m := Expand(ps[i].sec.SelfSeed, testShape.Dim())
		for j := range sum {
			sum[j].Sub(&sum[j], &m[j])
		}
	}
	for j := range sum {
		got, err := ToInt64(sum[j])
		require.NoError(t, err)
		assert.Equal(t, xs[0][j]+xs[1][j]+xs[2][j], got, "word %d", j)
	}
}

func TestOutOfBoundUpdatesCannotBeProved(t *testing.T) {
	k := testKeys(t)
	nan := honestUpdate(1, 5, 10)
	nan[3] = int64(math.Float64bits(math.NaN()))
	inf := honestUpdate(1, 5, 10)
	inf[0] = int64(math.Float64bits(math.Inf(-1)))
	for name, x := range map[string][]int64{
		"three times the clip bound": honestUpdate(3, 5, 10),
		"just over the clip bound":   honestUpdate(1.01, 5, 10),
		"NaN bit pattern":            nan,
		"-Inf bit pattern":           inf,
		"more correct than total":    honestUpdate(1, 11, 10),
		"total over cohort":          honestUpdate(1, 5, 11),
		"negative count":             honestUpdate(1, -1, 10),
	} {
		t.Run(name, func(t *testing.T) {
			ps := newRound(t, [3][]int64{x, honestUpdate(1, 1, 1), honestUpdate(1, 1, 1)}, 10)
			_, err := Prove(k, &ps[0].st, &ps[0].sec)
			assert.ErrorIs(t, err, ErrWitness)
		})
	}
}

func TestTamperedStatementsDoNotVerify(t *testing.T) {
	k := testKeys(t)
	ps := newRound(t, [3][]int64{honestUpdate(1, 5, 10), honestUpdate(1, 1, 1), honestUpdate(1, 1, 1)}, 10)
	proof, err := Prove(k, &ps[0].st, &ps[0].sec)
	require.NoError(t, err)
	one := fr.NewElement(1)
	for name, f := range map[string]func(st *Statement){
		"masked word shifted": func(st *Statement) {
			st.Masked = append([]fr.Element(nil), st.Masked...)
			st.Masked[testShape.Weights+1].Add(&st.Masked[testShape.Weights+1], &one)
		},
		"other pair commitment": func(st *Statement) {
			st.PairCommit = []fr.Element{Commit(randomSeed(t)), st.PairCommit[1]}
		},
		"flipped sign":      func(st *Statement) { st.PairPlus = []bool{!st.PairPlus[0], st.PairPlus[1]} },
		"other self seed":   func(st *Statement) { st.SelfCommit = Commit(randomSeed(t)) },
		"larger cohort":     func(st *Statement) { st.EvalBound = 1000 },
		"larger norm bound": func(st *Statement) { st.NormBound = st.NormBound.Lsh(st.NormBound, 2) },
	} {
		t.Run(name, func(t *testing.T) {
			st := ps[0].st
			f(&st)
			assert.ErrorIs(t, Verify(k.VK, k.Shape, &st, proof), ErrProof)
		})
	}
	// A masking with a seed other than the committed one cannot be proved.
	bad := ps[0]
	bad.sec.PairSeed = []Seed{randomSeed(t), bad.sec.PairSeed[1]}
	_, err = Prove(k, &bad.st, &bad.sec)
	assert.ErrorIs(t, err, ErrWitness)
}

func TestShapeAndNormBound(t *testing.T) {
	for _, s := range []Shape{{}, {Weights: 1, Extra: 1, Peers: 1, Bits: 8}, {Weights: 1, Peers: 0, Bits: 8}, {Weights: 1, Peers: 1, Bits: 61}} {
		assert.ErrorIs(t, s.Validate(), ErrShape)
	}
	nb, err := NormBound(1, 16, 4)
	require.NoError(t, err)
	assert.Equal(t, int64((65536+2)*(65536+2)), nb.Int64())
	_, err = NormBound(math.Inf(1), 16, 4)
	assert.ErrorIs(t, err, ErrShape)
	v, err := ToInt64(FromInt64(-42))
	require.NoError(t, err)
	assert.Equal(t, int64(-42), v)
}
