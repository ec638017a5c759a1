package secagg

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"golang.org/x/crypto/chacha20"
)

// Vectors are elements of (Z_2^64)^d: every addition wraps modulo 2^64, which
// is exactly Go's uint64 arithmetic.

// SeedSize is the size of every PRG seed: the full 256-bit ChaCha20 key.
const SeedSize = 32

// expandInto adds (sign > 0) or subtracts (sign < 0) the ChaCha20 keystream
// keyed by seed, read as little-endian uint64 words, into v. The nonce is
// fixed at zero: every seed is used for exactly one vector (pairwise seeds are
// bound to the session by HKDF, self-mask seeds are fresh per round).
func expandInto(seed *[SeedSize]byte, v []uint64, sign int) error {
	var nonce [chacha20.NonceSize]byte
	c, err := chacha20.NewUnauthenticatedCipher(seed[:], nonce[:])
	if err != nil {
		return fmt.Errorf("secagg: prg: %w", err)
	}
	var buf [4096]byte
	for off := 0; off < len(v); {
		n := min(len(v)-off, len(buf)/8)
		b := buf[:n*8]
		clear(b)
		c.XORKeyStream(b, b)
		for i := range n {
			w := binary.LittleEndian.Uint64(b[i*8:])
			if sign > 0 {
				v[off+i] += w
			} else {
				v[off+i] -= w
			}
		}
		off += n
	}
	return nil
}

// MaskedInput is a participant's input after masking: uniformly distributed
// on its own, meaningful only summed with the others and unmasked. The
// coordinator's API accepts nothing else from a participant's update.
type MaskedInput []uint64

const (
	maskedMagic   = "HASM"
	maskedVersion = 1
	maskedHeader  = 4 + 1 + 4
	// MaxDim bounds the length of a decoded vector (16 Mi words, 128 MiB).
	MaxDim = 1 << 24
)

// ErrMalformedVector is wrapped by UnmarshalBinary errors.
var ErrMalformedVector = errors.New("secagg: malformed masked vector")

// MarshalBinary encodes the vector as "HASM", a version byte (1), a uint32
// little-endian length and the words as little-endian uint64.
func (m MaskedInput) MarshalBinary() ([]byte, error) {
	if len(m) > MaxDim {
		return nil, fmt.Errorf("%w: %d words exceed %d", ErrMalformedVector, len(m), MaxDim)
	}
	out := make([]byte, maskedHeader+8*len(m))
	copy(out, maskedMagic)
	out[4] = maskedVersion
	binary.LittleEndian.PutUint32(out[5:], uint32(len(m)))
	for i, w := range m {
		binary.LittleEndian.PutUint64(out[maskedHeader+8*i:], w)
	}
	return out, nil
}

// UnmarshalBinary decodes a vector written by MarshalBinary; any other input,
// including trailing bytes, is rejected.
func (m *MaskedInput) UnmarshalBinary(data []byte) error {
	if len(data) < maskedHeader || string(data[:4]) != maskedMagic {
		return fmt.Errorf("%w: bad header", ErrMalformedVector)
	}
	if data[4] != maskedVersion {
		return fmt.Errorf("%w: version %d", ErrMalformedVector, data[4])
	}
	n := binary.LittleEndian.Uint32(data[5:])
	if n > MaxDim || uint64(len(data)-maskedHeader) != 8*uint64(n) {
		return fmt.Errorf("%w: length field %d does not match %d payload bytes", ErrMalformedVector, n, len(data)-maskedHeader)
	}
	v := make(MaskedInput, n)
	for i := range v {
		v[i] = binary.LittleEndian.Uint64(data[maskedHeader+8*i:])
	}
	*m = v
	return nil
}

// Quantizer maps clipped real vectors to fixed point in Z_2^64 and back.
//
// A value x with |x| <= Bound becomes round(x * 2^FracBits) (stochastic
// rounding: unbiased), stored in two's complement. NewQuantizer proves that a
// sum over up to MaxParticipants such values cannot leave the int64 range, so
// the modular sum equals the integer sum exactly.
type Quantizer struct {
	Bound           float64
	FracBits        uint
	MaxParticipants int
}

// Errors of the quantizer.
var (
	ErrQuantizerConfig = errors.New("secagg: quantizer cannot rule out overflow")
	ErrOutOfBounds     = errors.New("secagg: value outside the quantization bound")
)

// NewQuantizer checks that MaxParticipants * (Bound*2^FracBits + 1) < 2^62,
// leaving one spare bit below the int64 sign bit.
func NewQuantizer(bound float64, fracBits uint, maxParticipants int) (*Quantizer, error) {
	if !(bound > 0) || math.IsInf(bound, 0) || fracBits > 52 || maxParticipants < 1 {
		return nil, fmt.Errorf("%w: bound=%g fracBits=%d max=%d", ErrQuantizerConfig, bound, fracBits, maxParticipants)
	}
	perParty := bound*math.Ldexp(1, int(fracBits)) + 1
	if perParty*float64(maxParticipants) >= math.Ldexp(1, 62) {
		return nil, fmt.Errorf("%w: %d participants x %g exceeds 2^62", ErrQuantizerConfig, maxParticipants, perParty)
	}
	return &Quantizer{Bound: bound, FracBits: fracBits, MaxParticipants: maxParticipants}, nil
}

// Quantize writes the fixed-point form of x into a new vector. Values outside
// [-Bound, Bound] or not finite are an error (bounds_check upstream should
// have caught them). rng drives the stochastic rounding.
func (q *Quantizer) Quantize(x []float64, rng *rand.Rand) ([]uint64, error) {
	out := make([]uint64, len(x))
	scale := math.Ldexp(1, int(q.FracBits))
	for i, v := range x {
		if math.IsNaN(v) || math.Abs(v) > q.Bound {
			return nil, fmt.Errorf("%w: coordinate %d", ErrOutOfBounds, i)
		}
		s := v * scale
		f := math.Floor(s)
		if rng.Float64() < s-f {
			f++
		}
		out[i] = uint64(int64(f))
	}
	return out, nil
}

// Dequantize reads a (summed) vector as two's-complement fixed point.
func (q *Quantizer) Dequantize(v []uint64) []float64 {
	out := make([]float64, len(v))
	for i, w := range v {
		out[i] = math.Ldexp(float64(int64(w)), -int(q.FracBits))
	}
	return out
}

// Sum adds vectors modulo 2^64. All must have the same length.
func Sum(vs ...[]uint64) ([]uint64, error) {
	if len(vs) == 0 {
		return nil, nil
	}
	out := make([]uint64, len(vs[0]))
	for _, v := range vs {
		if len(v) != len(out) {
			return nil, fmt.Errorf("%w: lengths %d and %d", ErrMalformedVector, len(v), len(out))
		}
		for i, w := range v {
			out[i] += w
		}
	}
	return out, nil
}
