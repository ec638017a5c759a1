package secagg

import (
	"bytes"
	"crypto/rand"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFieldPrimeIsPrime(t *testing.T) {
	t.Parallel()
	p := fieldPrime()
	require.Equal(t, 521, p.BitLen())
	require.True(t, p.ProbablyPrime(20))
}

func TestSplitCombine(t *testing.T) {
	t.Parallel()
	secret := bytes.Repeat([]byte{0xff}, 32) // the largest 32-byte secret
	tests := []struct {
		name string
		t, n int
		use  []int // indexes of the shares handed to Combine
		ok   bool
	}{
		{"ok/1-of-1", 1, 1, []int{0}, true},
		{"ok/1-of-5 any single share", 1, 5, []int{3}, true},
		{"ok/t=n", 5, 5, []int{4, 2, 0, 1, 3}, true},
		{"ok/3-of-5 last three", 3, 5, []int{2, 3, 4}, true},
		{"ok/3-of-5 extra shares ignored", 3, 5, []int{4, 0, 2, 1}, true},
		{"ok/2-of-100", 2, 100, []int{99, 41}, true},
		{"fail/too few", 3, 5, []int{0, 1}, false},
		{"fail/duplicate x", 3, 5, []int{0, 1, 1}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			shares, err := Split(rand.Reader, secret, tc.t, tc.n)
			require.NoError(t, err)
			require.Len(t, shares, tc.n)
			var in []Share
			for _, i := range tc.use {
				in = append(in, shares[i])
			}
			got, err := Combine(in, tc.t, len(secret))
			if !tc.ok {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, secret, got)
		})
	}
}

func TestSplitRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		secret []byte
		t, n   int
	}{
		{"threshold 0", []byte{1}, 0, 3},
		{"threshold above n", []byte{1}, 4, 3},
		{"empty secret", nil, 2, 3},
		{"secret too large", make([]byte, MaxSecretSize+1), 2, 3},
		{"too many shares", []byte{1}, 2, MaxShares + 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Split(rand.Reader, tc.secret, tc.t, tc.n)
			require.Error(t, err)
		})
	}
}

// Fewer than t shares must be consistent with every secret: with t-1 shares
// fixed, any candidate secret determines a polynomial through them.
func TestBelowThresholdRevealsNothing(t *testing.T) {
	t.Parallel()
	shares, err := Split(rand.Reader, []byte("secret-A"), 3, 5)
	require.NoError(t, err)
	// Fake a third share that, with shares 0 and 1, reconstructs "secret-B":
	// interpolate f(0)=B, f(1)=y1, f(2)=y2 and evaluate at x=3.
	p := fieldPrime()
	b := new(big.Int).SetBytes([]byte("secret-B"))
	y1 := new(big.Int).SetBytes(shares[0].Y)
	y2 := new(big.Int).SetBytes(shares[1].Y)
	// Lagrange at x=3 over nodes 0,1,2: L0=1, L1=-3, L2=3.
	y3 := new(big.Int).Set(b)
	y3.Sub(y3, new(big.Int).Mul(big.NewInt(3), y1))
	y3.Add(y3, new(big.Int).Mul(big.NewInt(3), y2))
	y3.Mod(y3, p)
	fake := Share{X: 3, Y: y3.FillBytes(make([]byte, shareValueSize))}
	got, err := Combine([]Share{shares[0], shares[1], fake}, 3, 8)
	require.NoError(t, err)
	assert.Equal(t, []byte("secret-B"), got)
}

func TestShareBinaryRoundTrip(t *testing.T) {
	t.Parallel()
	shares, err := Split(rand.Reader, []byte{7, 7, 7}, 2, 3)
	require.NoError(t, err)
	b, err := shares[2].MarshalBinary()
	require.NoError(t, err)
	var s Share
	require.NoError(t, s.UnmarshalBinary(b))
	assert.Equal(t, shares[2], s)
	bad := bytes.Repeat([]byte{0xff}, ShareSize) // y >= p
	require.ErrorIs(t, s.UnmarshalBinary(bad), ErrMalformedShare)
}

func FuzzShareUnmarshal(f *testing.F) {
	shares, _ := Split(rand.Reader, []byte{1, 2, 3}, 2, 2)
	good, _ := shares[0].MarshalBinary()
	f.Add(good)
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{0xff}, ShareSize))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s Share
		if err := s.UnmarshalBinary(data); err != nil {
			return
		}
		again, err := s.MarshalBinary()
		require.NoError(t, err)
		require.Equal(t, data, again)
	})
}
