package npi_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/npi"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		ok       bool
	}{
		// 1234567893 is the worked example of the CMS check-digit paper.
		{"ok/cms example", "1234567893", true},
		{"ok/type 2", "1245319599", true},
		{"ok/another", "1679576722", true},
		{"fail/wrong check digit", "1234567890", false},
		{"fail/transposed digits", "1243567893", false},
		{"fail/nine digits", "123456789", false},
		{"fail/eleven digits", "12345678931", false},
		{"fail/letters", "12345678a3", false},
		{"fail/hyphen", "123-456789", false},
		{"fail/empty", "", false},
		{"fail/starts with 3", "3234567890", false},
		{"fail/unicode digits", "١٢٣٤٥٦٧٨٩٣", false},
		{"fail/space", " 1234567893", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := npi.Check(tc.in)
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, npi.ErrInvalid)
			if tc.in != "" {
				assert.NotContains(t, err.Error(), tc.in)
			}
		})
	}
}

// TestCheckDigitDetectsSingleErrors: the Luhn digit catches every
// single-digit substitution.
func TestCheckDigitDetectsSingleErrors(t *testing.T) {
	t.Parallel()
	const good = "1234567893"
	require.NoError(t, npi.Check(good))
	for pos := 1; pos < npi.Length; pos++ {
		for d := byte('0'); d <= '9'; d++ {
			if good[pos] == d {
				continue
			}
			b := []byte(good)
			b[pos] = d
			assert.Error(t, npi.Check(string(b)), "substitution at %d", pos)
		}
	}
}

func TestCheckDigit(t *testing.T) {
	t.Parallel()
	d, err := npi.CheckDigit("123456789")
	require.NoError(t, err)
	assert.Equal(t, byte('3'), d)
	_, err = npi.CheckDigit("12345678")
	require.ErrorIs(t, err, npi.ErrInvalid)
	_, err = npi.CheckDigit("12345678x")
	require.ErrorIs(t, err, npi.ErrInvalid)
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{"1234567893", "1234567890", "", "abcdefghij", "2999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := npi.Check(s)
		if err != nil {
			return
		}
		// Accepted: ten digits whose last digit is the computed one.
		require.Len(t, s, npi.Length)
		d, derr := npi.CheckDigit(s[:9])
		require.NoError(t, derr)
		require.Equal(t, d, s[9])
	})
}

func BenchmarkCheck(b *testing.B) {
	for b.Loop() {
		_ = npi.Check("1234567893")
	}
}

func ExampleCheck() {
	fmt.Println(npi.Check("1234567893"))
	fmt.Println(npi.Check("1234567890"))
	// Output:
	// <nil>
	// invalid NPI: check digit does not match
}
