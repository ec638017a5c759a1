package normproof

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
)

// MaxKeyBytes bounds an encoded proving or verifying key read from a file
// or a coordinator (the proving key of 128 weights and ten peers is a few
// MiB).
const MaxKeyBytes = 64 << 20

// Name is a file-name-safe name of the shape.
func (s Shape) Name() string {
	return fmt.Sprintf("w%d-e%d-p%d-b%d", s.Weights, s.Extra, s.Peers, s.Bits)
}

// EncodeKeys returns the binary encodings of the proving and verifying key
// (gnark's compressed form).
func (k *Keys) EncodeKeys() (pk, vk []byte, err error) {
	var a, b bytes.Buffer
	if _, err := k.PK.WriteTo(&a); err != nil {
		return nil, nil, fmt.Errorf("normproof: encoding the proving key: %w", err)
	}
	if _, err := k.VK.WriteTo(&b); err != nil {
		return nil, nil, fmt.Errorf("normproof: encoding the verifying key: %w", err)
	}
	return a.Bytes(), b.Bytes(), nil
}

// DecodeKeys compiles the circuit of s and pairs it with the encoded keys
// (from EncodeKeys). Anything else is an error, never a panic.
func DecodeKeys(s Shape, pk, vk []byte) (k *Keys, err error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if len(pk) > MaxKeyBytes || len(vk) > MaxKeyBytes {
		return nil, fmt.Errorf("%w: key larger than %d bytes", ErrShape, MaxKeyBytes)
	}
	defer func() {
		if r := recover(); r != nil { // a malformed encoding must not crash the caller
			k, err = nil, fmt.Errorf("normproof: malformed key: %v", r)
		}
	}()
	cs, err := Compile(s)
	if err != nil {
		return nil, err
	}
	p, v := groth16.NewProvingKey(ecc.BN254), groth16.NewVerifyingKey(ecc.BN254)
	if n, err := p.ReadFrom(bytes.NewReader(pk)); err != nil || n != int64(len(pk)) {
		return nil, errors.New("normproof: malformed proving key")
	}
	if n, err := v.ReadFrom(bytes.NewReader(vk)); err != nil || n != int64(len(vk)) {
		return nil, errors.New("normproof: malformed verifying key")
	}
	return &Keys{Shape: s, CS: cs, PK: p, VK: v}, nil
}

// NewServiceDir is a Service that keeps its keys in dir: a shape's keys are
// read from dir when there, else set up once and written there (0600), so
// a restarted coordinator verifies with the keys its participants hold.
func NewServiceDir(dir string, opts ...Option) (*Service, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("normproof: key directory: %w", err)
	}
	v := newService(opts)
	v.source = func(s Shape) (*Keys, error) { return v.loadOrSetup(dir, s) }
	return v, nil
}

// NewServiceFetching is a Service that takes each shape's keys from fetch
// (a participant asks its coordinator, which holds them) instead of running
// a setup of its own.
func NewServiceFetching(fetch func(Shape) (pk, vk []byte, err error), opts ...Option) *Service {
	v := newService(opts)
	v.source = func(s Shape) (*Keys, error) {
		pk, vk, err := fetch(s)
		if err != nil {
			return nil, err
		}
		return v.decode(s, pk, vk)
	}
	return v
}

func (v *Service) loadOrSetup(dir string, s Shape) (*Keys, error) {
	pkPath, vkPath := filepath.Join(dir, s.Name()+".pk"), filepath.Join(dir, s.Name()+".vk")
	pk, err1 := readLimited(pkPath)
	vk, err2 := readLimited(vkPath)
	switch {
	case err1 == nil && err2 == nil:
		k, err := v.decode(s, pk, vk)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", pkPath, err)
		}
		return k, nil
	case !errors.Is(err1, fs.ErrNotExist) && err1 != nil:
		return nil, err1
	case !errors.Is(err2, fs.ErrNotExist) && err2 != nil:
		return nil, err2
	}
	k, err := Setup(s)
	if err != nil {
		return nil, err
	}
	if pk, vk, err = k.EncodeKeys(); err != nil {
		return nil, err
	}
	// The verifying key last: a crash between the two leaves no pair, and
	// the next start sets up again.
	if err := writeFile(dir, pkPath, pk); err != nil {
		return nil, err
	}
	if err := writeFile(dir, vkPath, vk); err != nil {
		return nil, err
	}
	return k, nil
}

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxKeyBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxKeyBytes {
		return nil, fmt.Errorf("normproof: %s is larger than %d bytes", path, MaxKeyBytes)
	}
	return b, nil
}

func writeFile(dir, path string, b []byte) error {
	tmp, err := os.CreateTemp(dir, ".key-*")
	if err != nil {
		return fmt.Errorf("normproof: writing keys: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("normproof: writing keys: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("normproof: writing keys: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("normproof: writing keys: %w", err)
	}
	return nil
}

// ParseShape reads a shape's Name; anything but a canonical name of a valid
// shape is an error.
func ParseShape(name string) (Shape, error) {
	var s Shape
	if _, err := fmt.Sscanf(name, "w%d-e%d-p%d-b%d", &s.Weights, &s.Extra, &s.Peers, &s.Bits); err != nil || s.Name() != name {
		return Shape{}, fmt.Errorf("%w: %q is not w<weights>-e<extra>-p<peers>-b<bits>", ErrShape, name)
	}
	if err := s.Validate(); err != nil {
		return Shape{}, err
	}
	return s, nil
}
