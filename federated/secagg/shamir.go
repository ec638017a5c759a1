package secagg

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/big"
)

// The Shamir field is GF(p) with p = 2^521 - 1, a Mersenne prime. Any secret
// of up to 65 bytes (520 bits) is an element of the field as it is, so the
// 32-byte keys and seeds this package shares need no reduction or chunking.
const (
	// MaxSecretSize is the largest secret Split accepts, in bytes.
	MaxSecretSize = 65
	// shareValueSize is the fixed big-endian width of a share's Y value.
	shareValueSize = 66
	// ShareSize is the length of a binary-encoded Share.
	ShareSize = 2 + shareValueSize
	// MaxShares is the largest number of shares Split produces (x is a uint16).
	MaxShares = 1<<16 - 1
)

// fieldPrime returns 2^521 - 1. It is a function, not a package variable, so
// that no mutable state is shared between callers.
func fieldPrime() *big.Int {
	p := new(big.Int).Lsh(big.NewInt(1), 521)
	return p.Sub(p, big.NewInt(1))
}

// Errors returned by Split, Combine and Share decoding.
var (
	ErrThreshold      = errors.New("secagg: invalid threshold")
	ErrTooFewShares   = errors.New("secagg: fewer shares than the threshold")
	ErrDuplicateShare = errors.New("secagg: two shares have the same x")
	ErrMalformedShare = errors.New("secagg: malformed share")
	ErrSecretSize     = errors.New("secagg: secret size out of range")
)

// Share is one Shamir share: the evaluation Y = f(X) of a random polynomial f
// of degree threshold-1 with f(0) = secret. X is never 0.
type Share struct {
	X uint16 `json:"x"`
	Y []byte `json:"y"` // big-endian, exactly 66 bytes, < 2^521-1
}

// Split shares secret t-of-n: any t of the n returned shares reconstruct it,
// fewer reveal nothing about it. Shares carry x = 1..n.
func Split(rand io.Reader, secret []byte, t, n int) ([]Share, error) {
	if len(secret) == 0 || len(secret) > MaxSecretSize {
		return nil, fmt.Errorf("%w: %d bytes", ErrSecretSize, len(secret))
	}
	if t < 1 || n < t || n > MaxShares {
		return nil, fmt.Errorf("%w: %d of %d", ErrThreshold, t, n)
	}
	p := fieldPrime()
	coeffs := make([]*big.Int, t)
	coeffs[0] = new(big.Int).SetBytes(secret)
	buf := make([]byte, shareValueSize)
	for i := 1; i < t; i++ {
		c, err := randomFieldElement(rand, p, buf)
		if err != nil {
			return nil, err
		}
		coeffs[i] = c
	}
	shares := make([]Share, n)
	x, y := new(big.Int), new(big.Int)
	for i := range n {
		x.SetInt64(int64(i + 1))
		// Horner: y = ((c_{t-1} x + c_{t-2}) x + ...) x + c_0
		y.SetInt64(0)
		for j := t - 1; j >= 0; j-- {
			y.Mul(y, x)
			y.Add(y, coeffs[j])
			y.Mod(y, p)
		}
		out := make([]byte, shareValueSize)
		y.FillBytes(out)
		shares[i] = Share{X: uint16(i + 1), Y: out}
	}
	return shares, nil
}

// randomFieldElement draws a uniform element of GF(p) by rejection sampling.
func randomFieldElement(rand io.Reader, p *big.Int, buf []byte) (*big.Int, error) {
	for {
		if _, err := io.ReadFull(rand, buf); err != nil {
			return nil, fmt.Errorf("secagg: reading randomness: %w", err)
		}
		buf[0] &= 0x01 // keep 521 bits
		v := new(big.Int).SetBytes(buf)
		if v.Cmp(p) < 0 {
			return v, nil
		}
	}
}

// Combine reconstructs a secret of size bytes from at least t shares by
// Lagrange interpolation at 0. It uses the first t shares; shares with a
// repeated x are rejected. A wrong share yields a wrong secret, not an error:
// callers verify the result against a commitment (see Unmask).
func Combine(shares []Share, t, size int) ([]byte, error) {
	return new(combiner).combine(shares, t, size)
}

// combiner caches Lagrange coefficients by the set of x coordinates, so that
// reconstructing many secrets from the same revealers costs t multiplications
// each instead of t^2 plus t inversions.
type combiner struct {
	cache map[string][]*big.Int
}

func (c *combiner) combine(shares []Share, t, size int) ([]byte, error) {
	if t < 1 {
		return nil, fmt.Errorf("%w: %d", ErrThreshold, t)
	}
	if size < 1 || size > MaxSecretSize {
		return nil, fmt.Errorf("%w: %d bytes", ErrSecretSize, size)
	}
	if len(shares) < t {
		return nil, fmt.Errorf("%w: have %d, need %d", ErrTooFewShares, len(shares), t)
	}
	p := fieldPrime()
	use := shares[:t]
	key := make([]byte, 0, 2*t)
	seen := make(map[uint16]bool, t)
	for _, s := range use {
		if err := s.validate(p); err != nil {
			return nil, err
		}
		if seen[s.X] {
			return nil, fmt.Errorf("%w: x=%d", ErrDuplicateShare, s.X)
		}
		seen[s.X] = true
		key = binary.BigEndian.AppendUint16(key, s.X)
	}
	coeffs, ok := c.cache[string(key)]
	if !ok {
		coeffs = lagrangeAtZero(use, p)
		if c.cache == nil {
			c.cache = map[string][]*big.Int{}
		}
		c.cache[string(key)] = coeffs
	}
	secret, term := new(big.Int), new(big.Int)
	for i, s := range use {
		term.SetBytes(s.Y)
		term.Mul(term, coeffs[i])
		secret.Add(secret, term)
	}
	secret.Mod(secret, p)
	if secret.BitLen() > 8*size {
		return nil, fmt.Errorf("%w: reconstructed value exceeds %d bytes (inconsistent shares)", ErrMalformedShare, size)
	}
	out := make([]byte, size)
	secret.FillBytes(out)
	return out, nil
}

// lagrangeAtZero returns basis_i(0) = prod_{j != i} x_j / (x_j - x_i) for
// distinct, non-zero x's.
func lagrangeAtZero(shares []Share, p *big.Int) []*big.Int {
	t := len(shares)
	out := make([]*big.Int, t)
	num, den, diff := new(big.Int), new(big.Int), new(big.Int)
	for i := range t {
		num.SetInt64(1)
		den.SetInt64(1)
		xi := int64(shares[i].X)
		for j := range t {
			if j == i {
				continue
			}
			xj := int64(shares[j].X)
			num.Mul(num, diff.SetInt64(xj))
			num.Mod(num, p)
			den.Mul(den, diff.SetInt64(xj-xi))
			den.Mod(den, p)
		}
		den.ModInverse(den, p)
		out[i] = new(big.Int).Mul(num, den)
		out[i].Mod(out[i], p)
	}
	return out
}

func (s Share) validate(p *big.Int) error {
	if s.X == 0 {
		return fmt.Errorf("%w: x is 0", ErrMalformedShare)
	}
	if len(s.Y) != shareValueSize {
		return fmt.Errorf("%w: y has %d bytes, want %d", ErrMalformedShare, len(s.Y), shareValueSize)
	}
	if new(big.Int).SetBytes(s.Y).Cmp(p) >= 0 {
		return fmt.Errorf("%w: y is not a field element", ErrMalformedShare)
	}
	return nil
}

// MarshalBinary encodes the share as x (uint16 big-endian) followed by the
// 66-byte y.
func (s Share) MarshalBinary() ([]byte, error) {
	if err := s.validate(fieldPrime()); err != nil {
		return nil, err
	}
	out := make([]byte, ShareSize)
	binary.BigEndian.PutUint16(out, s.X)
	copy(out[2:], s.Y)
	return out, nil
}

// UnmarshalBinary decodes and validates a share written by MarshalBinary.
func (s *Share) UnmarshalBinary(data []byte) error {
	if len(data) != ShareSize {
		return fmt.Errorf("%w: %d bytes, want %d", ErrMalformedShare, len(data), ShareSize)
	}
	v := Share{X: binary.BigEndian.Uint16(data), Y: append([]byte(nil), data[2:]...)}
	if err := v.validate(fieldPrime()); err != nil {
		return err
	}
	*s = v
	return nil
}
