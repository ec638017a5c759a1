package federated

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/federated/synth"
	"github.com/healthagents/healthagents/record"
)

func TestWeightEncoding(t *testing.T) {
	t.Parallel()
	w := []float64{0.5, -1.25, 3}
	b, err := EncodeWeights(w)
	require.NoError(t, err)
	// The format, built by hand: magic, version, count, little-endian binary64.
	want := []byte("HAFW\x01\x03\x00\x00\x00")
	for _, v := range w {
		want = binary.LittleEndian.AppendUint64(want, math.Float64bits(v))
	}
	assert.Equal(t, want, b)
	sum := sha256.Sum256(want)
	h, err := ModelHash(w)
	require.NoError(t, err)
	assert.Equal(t, hex.EncodeToString(sum[:]), h)
	got, err := DecodeWeights(b)
	require.NoError(t, err)
	assert.Equal(t, w, got)

	hz, err := ModelHash([]float64{math.Copysign(0, -1)})
	require.NoError(t, err)
	hp, err := ModelHash([]float64{0})
	require.NoError(t, err)
	assert.Equal(t, hp, hz, "negative zero hashes like zero")
	bz, err := EncodeWeights([]float64{math.Copysign(0, -1)})
	require.NoError(t, err)
	_, err = DecodeWeights(bz)
	require.NoError(t, err, "whatever EncodeWeights writes, DecodeWeights reads")

	tests := []struct {
		name string
		in   []byte
	}{
		{"fail/empty", nil},
		{"fail/bad magic", []byte("HAFX\x01\x00\x00\x00\x00")},
		{"fail/bad version", []byte("HAFW\x02\x00\x00\x00\x00")},
		{"fail/trailing byte", append(append([]byte(nil), b...), 0)},
		{"fail/short", b[:len(b)-1]},
		{"fail/nan", binary.LittleEndian.AppendUint64([]byte("HAFW\x01\x01\x00\x00\x00"), math.Float64bits(math.NaN()))},
		{"fail/inf", binary.LittleEndian.AppendUint64([]byte("HAFW\x01\x01\x00\x00\x00"), math.Float64bits(math.Inf(-1)))},
		{"fail/negative zero", binary.LittleEndian.AppendUint64([]byte("HAFW\x01\x01\x00\x00\x00"), 1<<63)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := DecodeWeights(tc.in)
			require.ErrorIs(t, err, ErrMalformedWeights)
		})
	}
	_, err = EncodeWeights([]float64{math.NaN()})
	require.ErrorIs(t, err, ErrNaN)
}

func FuzzDecodeWeights(f *testing.F) {
	good, _ := EncodeWeights([]float64{1, 2, -3})
	f.Add(good)
	f.Add([]byte("HAFW\x01\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := DecodeWeights(data)
		if err != nil {
			return
		}
		again, err := EncodeWeights(w)
		require.NoError(t, err)
		require.Equal(t, data, again, "the encoding is canonical")
	})
}

func TestChecks(t *testing.T) {
	t.Parallel()
	require.ErrorIs(t, NaNCheck([]float64{1, math.Inf(1)}), ErrNaN)
	require.NoError(t, NaNCheck([]float64{1, -2}))
	require.ErrorIs(t, BoundsCheck([]float64{3, 4}, 4.9), ErrBounds)
	require.NoError(t, BoundsCheck([]float64{3, 4}, 5))
	v := []float64{3, 4}
	assert.InDelta(t, 5, Clip(v, 1), 1e-12)
	assert.InDelta(t, 1, L2Norm(v), 1e-12)
	u := []float64{0.3, 0.4}
	Clip(u, 1)
	assert.Equal(t, []float64{0.3, 0.4}, u, "short vectors are left alone")
}

func TestTaskExamples(t *testing.T) {
	t.Parallel()
	task := DefaultTask()
	recs := []*record.Record{
		{PatientID: "a", BirthDate: "1976-01-01", Observations: map[string]float64{"glucose": 150, "bmi": 34, "systolic_bp": 140}, Diagnosis: "positive"},
		{PatientID: "b", Observations: map[string]float64{"glucose": 1e6}, Diagnosis: "negative"}, // clamped, others imputed
		{PatientID: "c", Observations: map[string]float64{"glucose": 100}, Diagnosis: "unknown"},  // skipped
		{PatientID: "d", BirthDate: "1976-06-30", Observations: map[string]float64{"age": 20}, Diagnosis: "negative"},
	}
	d, skipped, err := task.Examples(recs)
	require.NoError(t, err)
	assert.Equal(t, 1, skipped)
	require.Equal(t, 3, d.Len())
	assert.Equal(t, []float64{1, 0, 0}, d.Y)
	assert.InDeltaSlice(t, []float64{1, 1, 0, 1}, d.X[0], 1e-12) // age 50 at 2026-01-01
	assert.Equal(t, []float64{5, 0, 0, 0}, d.X[1])
	assert.InDelta(t, -2, d.X[2][2], 1e-12, "an 'age' observation wins over birth_date")
	assert.Len(t, task.Hash(), 64)

	bad := DefaultTask()
	bad.Features = append(bad.Features, Feature{Name: "glucose", Scale: 1})
	require.ErrorIs(t, bad.Validate(), ErrTask)
	bad = DefaultTask()
	bad.Model.Type = "forest"
	require.ErrorIs(t, bad.Validate(), ErrTask)
}

func TestSplitHeldOutIsStable(t *testing.T) {
	t.Parallel()
	recs := synth.Records(synth.ThreeCohorts(1000, 1)[0])
	tr1, te1 := SplitHeldOut(recs, 0.2)
	tr2, te2 := SplitHeldOut(recs[100:], 0.2)
	assert.InDelta(t, 200, len(te1), 50)
	assert.Equal(t, len(recs), len(tr1)+len(te1))
	in := map[string]bool{}
	for _, r := range te1 {
		in[r.PatientID] = true
	}
	for _, r := range te2 {
		assert.True(t, in[r.PatientID], "a record stays held out")
	}
	for _, r := range tr2 {
		assert.False(t, in[r.PatientID])
	}
}

func TestTrainImproves(t *testing.T) {
	t.Parallel()
	task := DefaultTask()
	m, err := task.NewModel()
	require.NoError(t, err)
	d, _, err := task.Examples(synth.Records(synth.ThreeCohorts(500, 2)[0]))
	require.NoError(t, err)
	w0 := make([]float64, m.NumWeights())
	g := make([]float64, m.NumWeights())
	loss0 := m.LossGrad(w0, d.X, d.Y, g)
	for _, bs := range []int{0, 32} {
		spec := task.Training
		spec.BatchSize = bs
		upd, err := Train(t.Context(), m, w0, d, spec, rand.New(rand.NewPCG(1, 2)))
		require.NoError(t, err)
		loss1 := m.LossGrad(upd.Delta, d.X, d.Y, g)
		assert.Less(t, loss1, loss0, "batch size %d", bs)
		assert.Greater(t, upd.Delta[0], 0.0, "glucose raises the risk")
	}
	ctx, cancel := contextWithCancel(t)
	cancel()
	_, err = Train(ctx, m, w0, d, task.Training, rand.New(rand.NewPCG(1, 2)))
	require.Error(t, err)
}
