package secagg

import (
	"crypto/rand"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// session runs the four phases for n clients; drop lists clients that stop
// after ShareKeys (they never send a masked input).
type session struct {
	params  Params
	clients []*Client
	inputs  map[string][]uint64
	tr      Transcript
}

func newParams(t testing.TB, dim int) Params {
	s := make([]byte, SessionSize)
	_, err := rand.Read(s)
	require.NoError(t, err)
	return Params{Session: s, Dim: dim}
}

func runSession(t testing.TB, n, threshold, dim int, drop map[string]bool) *session {
	t.Helper()
	p := newParams(t, dim)
	s := &session{params: p, inputs: map[string][]uint64{}}
	s.tr = Transcript{Params: p, Threshold: threshold, Commitments: map[string][]byte{}, Inputs: map[string]MaskedInput{}}
	rng := mrand.New(mrand.NewPCG(uint64(n), uint64(dim)))
	for i := range n {
		c, err := NewClient(rand.Reader, fmt.Sprintf("org-%03d", i), p)
		require.NoError(t, err)
		s.clients = append(s.clients, c)
		s.tr.Roster = append(s.tr.Roster, c.Keys())
	}
	inbox := map[string][]EncryptedShare{}
	var u2 []string
	for _, c := range s.clients {
		msg, err := c.ShareKeys(s.tr.Roster, threshold)
		require.NoError(t, err)
		s.tr.Commitments[c.id] = msg.Commitment
		for _, es := range msg.Shares {
			inbox[es.To] = append(inbox[es.To], es)
		}
		u2 = append(u2, c.id)
	}
	var u3 []string
	for _, c := range s.clients {
		if drop[c.id] {
			continue
		}
		x := make([]uint64, dim)
		for i := range x {
			x[i] = uint64(rng.Int64N(1<<40) - 1<<39)
		}
		s.inputs[c.id] = x
		y, err := c.MaskInput(u2, inbox[c.id], x)
		require.NoError(t, err)
		s.tr.Inputs[c.id] = y
		u3 = append(u3, c.id)
	}
	for _, c := range s.clients {
		if drop[c.id] {
			continue
		}
		rs, err := c.Unmask(u3)
		require.NoError(t, err)
		s.tr.Reveals = append(s.tr.Reveals, rs...)
	}
	return s
}

func (s *session) plainSum() []uint64 {
	var vs [][]uint64
	for _, v := range s.inputs {
		vs = append(vs, v)
	}
	out, _ := Sum(vs...)
	return out
}

func TestSecureSumEqualsPlainSum(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		n, threshold int
		drop         []string
	}{
		{"ok/3 of 3", 3, 2, nil},
		{"ok/4, one drops after sharing", 4, 3, []string{"org-002"}},
		{"ok/7, two drop", 7, 4, []string{"org-000", "org-006"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			drop := map[string]bool{}
			for _, d := range tc.drop {
				drop[d] = true
			}
			s := runSession(t, tc.n, tc.threshold, 257, drop)
			got, err := Unmask(t.Context(), s.tr)
			require.NoError(t, err)
			assert.Equal(t, s.plainSum(), got)
			for id, y := range s.tr.Inputs {
				assert.NotEqual(t, s.inputs[id], []uint64(y), "masked input equals plaintext")
			}
		})
	}
}

func TestUnmaskRejectsBadTranscripts(t *testing.T) {
	t.Parallel()
	s := runSession(t, 4, 3, 16, map[string]bool{"org-003": true})
	tests := []struct {
		name   string
		mutate func(tr *Transcript)
	}{
		{"fail/both secrets of a survivor", func(tr *Transcript) {
			c := s.clients[0]
			tr.Reveals = append(tr.Reveals, RevealedShare{From: "org-000", Of: "org-001", Kind: MaskKey, Share: c.received["org-001"].key})
		}},
		{"fail/too few reveals", func(tr *Transcript) {
			tr.Reveals = slices.DeleteFunc(slices.Clone(tr.Reveals), func(r RevealedShare) bool { return r.From != "org-000" })
		}},
		{"fail/share claimed by another revealer", func(tr *Transcript) {
			tr.Reveals = slices.Clone(tr.Reveals)
			tr.Reveals[0].From = "org-002"
		}},
		{"fail/wrong commitment", func(tr *Transcript) {
			tr.Commitments = map[string][]byte{}
			for k, v := range s.tr.Commitments {
				tr.Commitments[k] = v
			}
			tr.Commitments["org-001"] = make([]byte, 32)
		}},
		{"fail/input with wrong length", func(tr *Transcript) {
			tr.Inputs = map[string]MaskedInput{"org-000": {1}, "org-001": s.tr.Inputs["org-001"], "org-002": s.tr.Inputs["org-002"]}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr := s.tr
			tc.mutate(&tr)
			_, err := Unmask(t.Context(), tr)
			require.ErrorIs(t, err, ErrUnmask)
		})
	}
	got, err := Unmask(t.Context(), s.tr)
	require.NoError(t, err)
	assert.Equal(t, s.plainSum(), got)
}

func TestClientRefusesUnsafeRequests(t *testing.T) {
	t.Parallel()
	p := newParams(t, 4)
	var cs []*Client
	var roster []PublicKeys
	for i := range 3 {
		c, err := NewClient(rand.Reader, fmt.Sprintf("o%d", i), p)
		require.NoError(t, err)
		cs = append(cs, c)
		roster = append(roster, c.Keys())
	}
	inbox := map[string][]EncryptedShare{}
	for _, c := range cs {
		m, err := c.ShareKeys(roster, 2)
		require.NoError(t, err)
		for _, es := range m.Shares {
			inbox[es.To] = append(inbox[es.To], es)
		}
	}
	// A tampered ciphertext does not authenticate.
	bad := slices.Clone(inbox["o0"])
	bad[0].Ciphertext = slices.Clone(bad[0].Ciphertext)
	bad[0].Ciphertext[len(bad[0].Ciphertext)-1] ^= 1
	_, err := cs[0].MaskInput([]string{"o0", "o1", "o2"}, bad, make([]uint64, 4))
	require.ErrorIs(t, err, ErrDecrypt)

	_, err = cs[1].MaskInput([]string{"o0", "o1", "o2"}, inbox["o1"], make([]uint64, 4))
	require.NoError(t, err)
	// U3 may not contain someone outside U2, nor fall below the threshold.
	_, err = cs[1].Unmask([]string{"o1", "o9"})
	require.ErrorIs(t, err, ErrProtocol)
	_, err = cs[1].Unmask([]string{"o1"})
	require.ErrorIs(t, err, ErrProtocol)
	_, err = cs[1].Unmask([]string{"o1", "o2"})
	require.NoError(t, err)
	_, err = cs[1].Unmask([]string{"o1", "o2"})
	require.ErrorIs(t, err, ErrProtocol, "a client answers the unmask request once")
}

func TestQuantizer(t *testing.T) {
	t.Parallel()
	_, err := NewQuantizer(1, 52, 1<<20)
	require.ErrorIs(t, err, ErrQuantizerConfig)
	q, err := NewQuantizer(2, 24, 1000)
	require.NoError(t, err)
	rng := mrand.New(mrand.NewPCG(1, 2))
	x := []float64{-2, -0.3, 0, 1e-9, 1.5, 2}
	v, err := q.Quantize(x, rng)
	require.NoError(t, err)
	for i, got := range q.Dequantize(v) {
		assert.InDelta(t, x[i], got, 1.0/(1<<24))
	}
	_, err = q.Quantize([]float64{2.0001}, rng)
	require.ErrorIs(t, err, ErrOutOfBounds)
	// The extreme sum fits: 1000 parties at -bound.
	vs := make([][]uint64, 1000)
	for i := range vs {
		vs[i], err = q.Quantize([]float64{-2, 2}, rng)
		require.NoError(t, err)
	}
	sum, err := Sum(vs...)
	require.NoError(t, err)
	assert.Equal(t, []float64{-2000, 2000}, q.Dequantize(sum))
}

func TestMaskedInputBinary(t *testing.T) {
	t.Parallel()
	m := MaskedInput{0, 1, 1 << 63, ^uint64(0)}
	b, err := m.MarshalBinary()
	require.NoError(t, err)
	var got MaskedInput
	require.NoError(t, got.UnmarshalBinary(b))
	assert.Equal(t, m, got)
	require.ErrorIs(t, got.UnmarshalBinary(append(b, 0)), ErrMalformedVector)
	require.ErrorIs(t, got.UnmarshalBinary(b[:len(b)-1]), ErrMalformedVector)
}

func FuzzMaskedInputUnmarshal(f *testing.F) {
	good, _ := MaskedInput{1, 2, 3}.MarshalBinary()
	f.Add(good)
	f.Add([]byte("HASM\x01\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m MaskedInput
		if err := m.UnmarshalBinary(data); err != nil {
			return
		}
		again, err := m.MarshalBinary()
		require.NoError(t, err)
		require.Equal(t, data, again)
	})
}

// FuzzShareDecryption feeds arbitrary ciphertexts to a client: it must reject
// them without panicking.
func FuzzShareDecryption(f *testing.F) {
	f.Add([]byte{}, "o1")
	f.Add(make([]byte, 200), "o2")
	f.Fuzz(func(t *testing.T, ct []byte, from string) {
		p := Params{Session: make([]byte, SessionSize), Dim: 1}
		var cs []*Client
		var roster []PublicKeys
		for i := range 3 {
			c, err := NewClient(rand.Reader, fmt.Sprintf("o%d", i), p)
			require.NoError(t, err)
			cs = append(cs, c)
			roster = append(roster, c.Keys())
		}
		_, err := cs[0].ShareKeys(roster, 2)
		require.NoError(t, err)
		_, err = cs[0].MaskInput([]string{"o0", "o1", "o2"}, []EncryptedShare{{From: from, To: "o0", Ciphertext: ct}}, []uint64{0})
		require.Error(t, err)
	})
}
