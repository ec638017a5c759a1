package apikey_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/apikey"
)

// A real key minted by this package (test fixture; it authenticates nowhere).
const fixtureKey = "sk_live_0123456789_abcdefghijklmnopqrstuvwxyzABCDEF"

func withChecksum(t *testing.T, head string) string {
	t.Helper()
	return head + apikey.Checksum(head)
}

func TestParse(t *testing.T) {
	t.Parallel()
	good := withChecksum(t, fixtureKey)
	dev := withChecksum(t, "sk_dev_0123456789_abcdefghijklmnopqrstuvwxyzABCDEF")
	tests := []struct {
		name    string
		raw     string
		wantEnv apikey.Env
		wantErr bool
	}{
		{"ok/live", good, apikey.Live, false},
		{"ok/dev", dev, apikey.Dev, false},
		{"fail/empty", "", "", true},
		{"fail/unknown prefix", "sk_test_" + good[len("sk_live_"):], "", true},
		{"fail/checksum", good[:len(good)-1] + flip(good[len(good)-1]), "", true},
		{"fail/secret changed", good[:20] + flip(good[20]) + good[21:], "", true},
		{"fail/env swapped", "sk_dev_" + good[len("sk_live_"):], "", true},
		{"fail/short", good[:len(good)-2], "", true},
		{"fail/long", good + "0", "", true},
		{"fail/bad char", strings.Replace(good, "a", "-", 1), "", true},
		{"fail/no separator", strings.Replace(good, "9_a", "9aa", 1), "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tok, err := apikey.Parse(tt.raw)
			if tt.wantErr {
				require.ErrorIs(t, err, apikey.ErrInvalid)
				if tt.raw != "" {
					assert.NotContains(t, err.Error(), tt.raw, "errors never echo the key")
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantEnv, tok.Env)
			assert.Equal(t, "0123456789", tok.ID)
			assert.Equal(t, tt.raw, tok.String())
		})
	}
}

func flip(c byte) string {
	if c == 'A' {
		return "B"
	}
	return "A"
}

func TestMintedKeysMatchTheScannerPattern(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(`^sk_(live|dev)_[0-9A-Za-z]{10}_[0-9A-Za-z]{38}$`)
	seen := map[string]bool{}
	for range 200 {
		raw, err := apikey.NewTokenForTest(apikey.Live)
		require.NoError(t, err)
		require.Regexp(t, re, raw)
		tok, err := apikey.Parse(raw)
		require.NoError(t, err)
		require.False(t, seen[tok.ID], "ids repeat")
		seen[tok.ID] = true
	}
}

func FuzzParse(f *testing.F) {
	f.Add(fixtureKey)
	f.Add("sk_dev_")
	f.Add("sk_live_0123456789_")
	f.Fuzz(func(t *testing.T, raw string) {
		tok, err := apikey.Parse(raw)
		if err != nil {
			if !strings.Contains(err.Error(), "apikey:") {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if tok.String() != raw || !apikey.ValidID(tok.ID) || !tok.Env.Valid() {
			t.Fatalf("accepted %q as %+v", raw, tok)
		}
	})
}

func TestParseAllowList(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      []string
		want    []string
		wantErr bool
	}{
		{"ok/address and cidr", []string{"203.0.113.7", "10.1.2.3/8"}, []string{"10.0.0.0/8", "203.0.113.7/32"}, false},
		{"ok/ipv6", []string{"2001:db8::1", "2001:db8:1::/48"}, []string{"2001:db8::1/128", "2001:db8:1::/48"}, false},
		{"ok/mapped", []string{"::ffff:192.0.2.1", "::ffff:192.0.2.0/120"}, []string{"192.0.2.0/24", "192.0.2.1/32"}, false},
		{"ok/dedup", []string{"1.2.3.4", " 1.2.3.4 "}, []string{"1.2.3.4/32"}, false},
		{"ok/empty", []string{}, []string{}, false},
		{"fail/garbage", []string{"example.com"}, nil, true},
		{"fail/bad cidr", []string{"10.0.0.0/33"}, nil, true},
		{"fail/zone", []string{"fe80::1%eth0"}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ps, err := apikey.ParseAllowList(tt.in)
			if tt.wantErr {
				require.ErrorIs(t, err, apikey.ErrBadRequest)
				return
			}
			require.NoError(t, err)
			got := []string{}
			for _, p := range ps {
				got = append(got, p.String())
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestLatencyBucketsBoundTheError(t *testing.T) {
	t.Parallel()
	for us := int64(0); us < 5_000_000; us = us*105/100 + 1 {
		d := apikey.Micros(us)
		lo, hi := apikey.BucketBounds(apikey.LatencyBucket(d))
		require.True(t, lo <= d && d < hi, "%v not in [%v,%v)", d, lo, hi)
		if us >= 16 {
			require.LessOrEqual(t, float64(hi-lo)/float64(lo), 1.0/16+1e-9)
		}
	}
}
