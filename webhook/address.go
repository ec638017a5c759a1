package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// Resolver looks up a host's addresses. *net.Resolver is one; tests pass
// their own to make a name resolve to a chosen address.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// AddressError says why an address may not be reached. It wraps
// ErrUnsafeAddress.
type AddressError struct {
	Addr   netip.Addr
	Reason string // loopback, private, link-local, cgnat, metadata, …
}

func (e *AddressError) Error() string {
	return fmt.Sprintf("webhook: address %s is %s", e.Addr, e.Reason)
}

func (e *AddressError) Unwrap() error { return ErrUnsafeAddress }

// blocked lists the ranges a delivery may never reach, with the reason
// given. Order matters: the first match names the reason.
var blockedRanges = []struct {
	prefix netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("169.254.169.254/32"), "metadata"},
	{netip.MustParsePrefix("fd00:ec2::254/128"), "metadata"},
	{netip.MustParsePrefix("0.0.0.0/32"), "unspecified"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("0.0.0.0/8"), "reserved"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("fc00::/7"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "cgnat"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved"},
	{netip.MustParsePrefix("192.0.2.0/24"), "reserved"},
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved"},
	{netip.MustParsePrefix("198.51.100.0/24"), "reserved"},
	{netip.MustParsePrefix("203.0.113.0/24"), "reserved"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("100::/64"), "reserved"},
	{netip.MustParsePrefix("2001:db8::/32"), "reserved"},
	{netip.MustParsePrefix("2001::/32"), "reserved"},      // Teredo hides an IPv4 address
	{netip.MustParsePrefix("64:ff9b:1::/48"), "reserved"}, // local-use NAT64
}

var (
	nat64   = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4  = netip.MustParsePrefix("2002::/16")
	loopV4  = netip.MustParsePrefix("127.0.0.0/8")
	loopV6  = netip.MustParsePrefix("::1/128")
	zeroV4  = netip.AddrFrom4([4]byte{})
	errZone = errors.New("zoned address")
)

// policy decides which addresses deliveries may reach.
type policy struct {
	allowLoopback bool
	resolver      Resolver
}

// check returns an *AddressError for an address a delivery may not reach.
// IPv4-mapped, NAT64 and 6to4 addresses are judged by the IPv4 address
// they carry.
func (p policy) check(a netip.Addr) error {
	if a.Zone() != "" {
		return &AddressError{Addr: a, Reason: "link-local"}
	}
	a = a.Unmap()
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64.Contains(a):
			if err := p.check(netip.AddrFrom4([4]byte(b[12:16]))); err != nil {
				return &AddressError{Addr: a, Reason: err.(*AddressError).Reason}
			}
		case sixTo4.Contains(a):
			if err := p.check(netip.AddrFrom4([4]byte(b[2:6]))); err != nil {
				return &AddressError{Addr: a, Reason: err.(*AddressError).Reason}
			}
		}
	}
	if p.allowLoopback && (loopV4.Contains(a) || loopV6.Contains(a)) {
		return nil
	}
	for _, r := range blockedRanges {
		if r.prefix.Contains(a) {
			return &AddressError{Addr: a, Reason: r.reason}
		}
	}
	if a == zeroV4 || !a.IsValid() {
		return &AddressError{Addr: a, Reason: "unspecified"}
	}
	return nil
}

// errNumericHost: a host that URL parsers and resolvers may read as an IPv4
// address although it is not four decimal numbers (2130706433, 0177.0.0.1,
// 0x7f.1, 127.1 all mean 127.0.0.1 to some of them).
var errNumericHost = errors.New("webhook: an IPv4 address not written as four decimal numbers")

// numericHost reports whether host ends in a number, which the WHATWG URL
// standard reads as an IPv4 address: its last label (after an optional
// final dot) is decimal digits, or 0x followed by hex digits.
func numericHost(host string) bool {
	h := strings.TrimSuffix(host, ".")
	last := h[strings.LastIndexByte(h, '.')+1:]
	if last == "" {
		return false
	}
	if hex, ok := strings.CutPrefix(strings.ToLower(last), "0x"); ok {
		return strings.Trim(hex, "0123456789abcdef") == ""
	}
	return strings.Trim(last, "0123456789") == ""
}

// resolve returns host's addresses when every one of them is allowed: a
// name with one public and one private address is refused, since the
// dialer might pick either. An IPv4 literal must be in dotted-decimal
// form: any other numeric form is refused without resolving it.
func (p policy) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return nil, errZone
		}
		if err := p.check(a); err != nil {
			return nil, err
		}
		return []netip.Addr{a}, nil
	}
	if numericHost(host) {
		return nil, errNumericHost
	}
	addrs, err := p.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("webhook: resolving the host: %w", err)
	}
	if len(addrs) == 0 {
		return nil, errors.New("webhook: the host has no address")
	}
	for _, a := range addrs {
		if err := p.check(a); err != nil {
			return nil, err
		}
	}
	return addrs, nil
}

// control runs after the socket is created and before it connects: the
// last word on the address, whatever resolved it.
func (p policy) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("webhook: dialing %q: %w", address, ErrUnsafeAddress)
	}
	return p.check(ap.Addr())
}

// netDialer returns the dialer every delivery connection is opened with:
// its Control function checks the socket's address right before connect.
func (p policy) netDialer(timeout time.Duration) *net.Dialer {
	return &net.Dialer{Timeout: timeout, Control: p.control}
}

// dialer returns a DialContext that resolves with the policy's resolver,
// refuses forbidden addresses, and dials the allowed ones with d (from
// netDialer), which checks the address again at connect time.
func (p policy) dialer(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		addrs, err := p.resolve(ctx, host)
		if err != nil {
			return nil, err
		}
		var errs []error
		for _, a := range addrs {
			c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
			if err == nil {
				return c, nil
			}
			errs = append(errs, err)
		}
		return nil, errors.Join(errs...)
	}
}
