package webhook

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type noQueue struct{}

func (noQueue) Claim(context.Context, ClaimParams) ([]Job, error) { return nil, nil }
func (noQueue) Finish(context.Context, Outcome) error             { return nil }
func (noQueue) Prune(context.Context, time.Time) (int, error)     { return 0, nil }

// The dialer a Dispatcher opens every delivery connection with checks the
// socket's address right before connect (its Control function), whatever
// resolved it: dialing a loopback literal directly through it is refused
// unless loopback is allowed.
func TestDispatcherDialerChecksTheAddressAtConnect(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	prod, err := NewDispatcher(noQueue{}, WithTimeout(2*time.Second))
	require.NoError(t, err)
	_, err = prod.dialer.DialContext(t.Context(), "tcp", ln.Addr().String())
	assert.ErrorIs(t, err, ErrUnsafeAddress, "refused at connect time")
	var ae *AddressError
	assert.ErrorAs(t, err, &ae)

	dev, err := NewDispatcher(noQueue{}, WithTimeout(2*time.Second), AllowLoopback())
	require.NoError(t, err)
	c, err := dev.dialer.DialContext(t.Context(), "tcp", ln.Addr().String())
	require.NoError(t, err, "allowed with AllowLoopback")
	c.Close()
}

func TestNumericHost(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]bool{
		"2130706433": true, "0177.0.0.1": true, "0x7f.1": true, "127.1": true, "0X7F000001": true,
		"127.0.0.1.": true, "1.2.3.0x": true, "hooks.example": false, "hooks.example.": false,
		"a1.example": false, "1.example": false, "example.1a": false, "0xg": false,
	} {
		assert.Equal(t, want, numericHost(host), host)
	}
}

func TestControlChecksTheConnectedAddress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr          string
		allowLoopback bool
		ok            bool
	}{
		{"93.184.215.14:443", false, true},
		{"[2606:2800:21f:cb07:6820:80da:af6b:8b2c]:443", false, true},
		{"127.0.0.1:443", false, false},
		{"127.0.0.1:443", true, true},
		{"[::1]:443", true, true},
		{"10.0.0.1:443", true, false},
		{"169.254.169.254:80", true, false},
		{"[fd00:ec2::254]:80", true, false},
		{"[::ffff:10.0.0.1]:80", false, false},
		{"0.0.0.0:80", true, false},
		{"not an address", false, false},
	}
	for _, tt := range tests {
		p := policy{allowLoopback: tt.allowLoopback}
		err := p.control("tcp", tt.addr, nil)
		if tt.ok {
			assert.NoError(t, err, tt.addr)
		} else {
			assert.True(t, errors.Is(err, ErrUnsafeAddress), "%s: %v", tt.addr, err)
		}
	}
}

func TestCheckRefusesZonedAddresses(t *testing.T) {
	t.Parallel()
	assert.Error(t, policy{}.check(netip.MustParseAddr("fe80::1%eth0")))
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	tests := map[string]time.Duration{
		"":                              0,
		"120":                           2 * time.Minute,
		" 5 ":                           5 * time.Second,
		"-3":                            0,
		"soon":                          0,
		"Sat, 21 Nov 2026 12:01:00 GMT": time.Minute,
		"Sat, 21 Nov 2026 11:00:00 GMT": 0,
	}
	for in, want := range tests {
		assert.Equal(t, want, parseRetryAfter(in, now), "%q", in)
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"", "120", "Sat, 21 Nov 2026 12:01:00 GMT", "99999999999999999999"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		if d := parseRetryAfter(s, now); d < 0 || d > 365*24*time.Hour {
			t.Fatalf("%q gave %v", s, d)
		}
	})
}
