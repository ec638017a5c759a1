package ceremony

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	curve "github.com/consensys/gnark-crypto/ecc/bn254"
	cmpc "github.com/consensys/gnark-crypto/ecc/bn254/mpcsetup"
	"github.com/consensys/gnark/backend/groth16/bn254/mpcsetup"
	gio "github.com/consensys/gnark/io"
)

// Format is the first field of every transcript file's header.
const Format = "healthagents/ceremony/v1"

// Kinds of transcript file.
const (
	KindPhase1 = "phase1" // powers of tau: init (index 0), then one file per contribution
	KindSRS    = "srs"    // phase 1 verified and sealed with a beacon: the input of phase 2
	KindPhase2 = "phase2" // one section per circuit: init (index 0), then one file per contribution
)

// MaxPower bounds the phase-1 domain (2^MaxPower constraints, a ~3 GB file).
const MaxPower = 24

// maxHeader bounds the JSON header line of a transcript file.
const maxHeader = 1 << 20

// ErrTranscript reports a transcript file that is malformed, does not follow
// the file before it, or carries a contribution that does not verify.
var ErrTranscript = errors.New("ceremony: transcript check failed")

// ErrNoContribution (with ErrTranscript) reports a chain that holds only
// its initial file: well formed, but nothing to seal or finalize yet. A
// participant checking the file it received (`ceremony verify --in
// phase1-0000.bin`) is told so, not refused.
var ErrNoContribution = errors.New("no contribution yet")

// Header is the first line of a transcript file, JSON. It is not trusted:
// every field is checked against the previous file, the circuits and the
// bytes it describes.
type Header struct {
	Format string `json:"format"`
	Kind   string `json:"kind"`
	// Index counts the contributions behind the file: 0 for an init file.
	Index int `json:"index"`
	// Power: the phase-1 domain is 2^Power (phase1 and srs files).
	Power int `json:"power,omitempty"`
	// Prev is the SHA-256 of the file this one was contributed from.
	Prev string `json:"prev,omitempty"`
	// SRS is the SHA-256 of the srs file a phase-2 transcript starts from.
	SRS string `json:"srs_sha256,omitempty"`
	// Beacon (srs) is the hex beacon phase 1 was sealed with, and Sealed the
	// SHA-256 of every phase-1 file, index 0 first.
	Beacon string   `json:"beacon,omitempty"`
	Sealed []string `json:"sealed,omitempty"`
	// Sections describe the payload, in order.
	Sections []Section `json:"sections"`
}

// Section is one gnark object of a transcript file.
type Section struct {
	// Name is "powers-of-tau" (phase1, srs) or a circuit name (phase2).
	Name      string `json:"name"`
	CCSSHA256 string `json:"ccs_sha256,omitempty"` // phase2: the circuit's constraint system
	Power     int    `json:"power,omitempty"`      // phase2: the circuit's domain is 2^Power
	PKK       int    `json:"pkk,omitempty"`        // phase2: private-wire points
	Bytes     int64  `json:"bytes"`
}

// File is one transcript file: a JSON header line, then its sections.
type File struct {
	Header
	raw      []byte // the whole file
	sections [][]byte
}

// Hash is the SHA-256 of the whole file: the contribution hash a
// participant publishes, and what `sha256sum FILE` prints.
func (f *File) Hash() string {
	s := sha256.Sum256(f.raw)
	return hex.EncodeToString(s[:])
}

// Bytes returns the file's encoding.
func (f *File) Bytes() []byte { return f.raw }

// newFile assembles a file from its header and section payloads.
func newFile(h Header, payloads [][]byte) (*File, error) {
	h.Format = Format
	if len(h.Sections) != len(payloads) {
		return nil, fmt.Errorf("ceremony: %d sections described, %d given", len(h.Sections), len(payloads))
	}
	for i := range payloads {
		h.Sections[i].Bytes = int64(len(payloads[i]))
	}
	line, err := json.Marshal(&h)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Write(line)
	buf.WriteByte('\n')
	for _, p := range payloads {
		buf.Write(p)
	}
	return Parse(buf.Bytes())
}

// Parse splits a transcript file into its header and sections. It checks
// the framing only; the contents are checked where they are used.
func Parse(b []byte) (*File, error) {
	nl := bytes.IndexByte(b[:min(len(b), maxHeader)], '\n')
	if nl < 0 {
		return nil, fmt.Errorf("%w: not a ceremony transcript file (no header line)", ErrTranscript)
	}
	f := &File{raw: b}
	dec := json.NewDecoder(bytes.NewReader(b[:nl]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f.Header); err != nil || f.Format != Format {
		return nil, fmt.Errorf("%w: not a %s transcript file", ErrTranscript, Format)
	}
	switch f.Kind {
	case KindPhase1, KindSRS:
		if f.Power < 1 || f.Power > MaxPower || len(f.Sections) != 1 {
			return nil, fmt.Errorf("%w: %s file with power %d and %d sections", ErrTranscript, f.Kind, f.Power, len(f.Sections))
		}
	case KindPhase2:
		if len(f.Sections) == 0 {
			return nil, fmt.Errorf("%w: phase2 file without circuits", ErrTranscript)
		}
	default:
		return nil, fmt.Errorf("%w: unknown transcript kind %q", ErrTranscript, f.Kind)
	}
	if f.Index < 0 || (f.Kind == KindSRS) != (len(f.Sealed) > 0) {
		return nil, fmt.Errorf("%w: %s file with index %d", ErrTranscript, f.Kind, f.Index)
	}
	rest := b[nl+1:]
	for _, s := range f.Sections {
		if s.Bytes < 0 || s.Bytes > int64(len(rest)) {
			return nil, fmt.Errorf("%w: section %q is cut short", ErrTranscript, s.Name)
		}
		f.sections = append(f.sections, rest[:s.Bytes])
		rest = rest[s.Bytes:]
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the last section", ErrTranscript, len(rest))
	}
	return f, nil
}

// ReadFile reads and parses a transcript file.
func ReadFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ceremony: %w", err)
	}
	f, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// WriteFile writes f to path (a temporary file renamed into place), never
// replacing an existing file: a transcript file, once published, is
// immutable.
func WriteFile(path string, f *File) (err error) {
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("ceremony: %s exists; transcript files are never overwritten", path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("ceremony: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriter(tmp)
	if _, err = w.Write(f.raw); err != nil {
		return fmt.Errorf("ceremony: write %s: %w", path, err)
	}
	if err = w.Flush(); err != nil {
		return fmt.Errorf("ceremony: write %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("ceremony: sync %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("ceremony: close %s: %w", path, err)
	}
	if err = os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("ceremony: %w", err)
	}
	// Link rather than rename: it fails if path appeared meanwhile.
	if err = os.Link(tmp.Name(), path); err != nil {
		return fmt.Errorf("ceremony: %w", err)
	}
	return os.Remove(tmp.Name())
}

// encode serializes a gnark object.
func encode(v io.WriterTo) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := v.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("ceremony: encode: %w", err)
	}
	return buf.Bytes(), nil
}

// Smallest encodings (compressed points), used to bound what a length
// field in an untrusted file may make us allocate.
const (
	g1Size = curve.SizeOfG1AffineCompressed
	g2Size = curve.SizeOfG2AffineCompressed
)

// decodePhase1 decodes a phase-1 section of a 2^power domain. gnark's
// ReadFrom allocates for the domain size it reads, so that size is checked
// first against the header and the section's length.
func decodePhase1(b []byte, power int) (*mpcsetup.Phase1, error) {
	if err := precheckPhase1(b, power); err != nil {
		return nil, err
	}
	p := new(mpcsetup.Phase1)
	if err := readAll(b, p); err != nil {
		return nil, fmt.Errorf("%w: phase-1 parameters: %w", ErrTranscript, err)
	}
	return p, nil
}

// precheckPhase1 checks that a phase-1 section holds a 2^power domain
// and enough bytes for it, before anything of that size is allocated.
func precheckPhase1(b []byte, power int) error {
	r := bytes.NewReader(b)
	for range 3 { // the τ, α and β update proofs precede the parameters
		var up cmpc.UpdateProof
		if _, err := up.ReadFrom(r); err != nil {
			return fmt.Errorf("%w: phase-1 update proof: %w", ErrTranscript, err)
		}
	}
	return checkDomain(r, power)
}

// decodeSRS decodes the sealed phase-1 parameters of a 2^power domain.
func decodeSRS(b []byte, power int) (*mpcsetup.SrsCommons, error) {
	if err := checkDomain(bytes.NewReader(b), power); err != nil {
		return nil, err
	}
	c := new(mpcsetup.SrsCommons)
	if err := readAll(b, c); err != nil {
		return nil, fmt.Errorf("%w: sealed phase-1 parameters: %w", ErrTranscript, err)
	}
	return c, nil
}

// checkDomain reads the domain size N that starts r's remaining bytes and
// checks N = 2^power and that the bytes left can hold the 5N-1 points of
// the parameters.
func checkDomain(r *bytes.Reader, power int) error {
	var n uint64
	if err := binary.Read(r, binary.BigEndian, &n); err != nil {
		return fmt.Errorf("%w: phase-1 domain size: %w", ErrTranscript, err)
	}
	if power < 1 || power > MaxPower || n != 1<<power {
		return fmt.Errorf("%w: phase-1 domain %d, header says 2^%d", ErrTranscript, n, power)
	}
	if need := uint64(g2Size) + (2*n-2)*g1Size + (n-1)*g2Size + 2*n*g1Size; uint64(r.Len()) < need {
		return fmt.Errorf("%w: phase-1 parameters cut short (%d bytes for domain %d)", ErrTranscript, r.Len(), n)
	}
	return nil
}

// readAll decodes b into v and requires every byte to be used and the
// encoding to be the canonical one (what WriteTo writes back).
func readAll(b []byte, v interface {
	io.ReaderFrom
	io.WriterTo
}) error {
	r := bytes.NewReader(b)
	if _, err := v.ReadFrom(r); err != nil {
		return err
	}
	if r.Len() != 0 {
		return fmt.Errorf("%d bytes left over", r.Len())
	}
	again, err := encode(v)
	if err != nil {
		return err
	}
	if !bytes.Equal(again, b) {
		return errors.New("not in canonical encoding")
	}
	return nil
}

// phase2Shape is the size of a circuit's phase-2 parameters.
type phase2Shape struct {
	pkk, z int
}

// decodePhase2 decodes a phase-2 section. gnark's ReadFrom allocates for
// the lengths it reads, so each length is checked against want (the
// header's, itself bounded by the section's size) before the points are
// read; the circuits of this package have no Pedersen commitments.
func decodePhase2(b []byte, want phase2Shape) (*mpcsetup.Phase2, error) {
	if int64(want.pkk+want.z)*g1Size > int64(len(b)) || want.pkk < 0 || want.z < 1 {
		return nil, fmt.Errorf("%w: phase-2 section of %d bytes cannot hold %d+%d points", ErrTranscript, len(b), want.pkk, want.z)
	}
	r := bytes.NewReader(b)
	var nbCommitments uint16
	if err := binary.Read(r, binary.BigEndian, &nbCommitments); err != nil || nbCommitments != 0 {
		return nil, fmt.Errorf("%w: phase-2 section with Pedersen commitments", ErrTranscript)
	}
	p := new(mpcsetup.Phase2)
	p.Sigmas = []cmpc.UpdateProof{}
	p.Parameters.G1.SigmaCKK = [][]curve.G1Affine{}
	p.Parameters.G2.Sigma = []curve.G2Affine{}
	dec := curve.NewDecoder(r)
	if err := dec.Decode(&p.Parameters.G1.Delta); err != nil {
		return nil, fmt.Errorf("%w: phase-2 δ: %w", ErrTranscript, err)
	}
	if err := decodeG1Slice(r, &p.Parameters.G1.PKK, want.pkk); err != nil {
		return nil, err
	}
	if err := decodeG1Slice(r, &p.Parameters.G1.Z, want.z); err != nil {
		return nil, err
	}
	if err := dec.Decode(&p.Parameters.G2.Delta); err != nil {
		return nil, fmt.Errorf("%w: phase-2 δ: %w", ErrTranscript, err)
	}
	if _, err := p.Delta.ReadFrom(r); err != nil {
		return nil, fmt.Errorf("%w: phase-2 update proof: %w", ErrTranscript, err)
	}
	challenge, _, err := gio.ReadBytesShort(r)
	if err != nil {
		return nil, fmt.Errorf("%w: phase-2 challenge: %w", ErrTranscript, err)
	}
	p.Challenge = challenge
	if r.Len() != 0 {
		return nil, fmt.Errorf("%w: %d bytes left over in a phase-2 section", ErrTranscript, r.Len())
	}
	// Our reading must be gnark's: the object must encode back to b.
	again, err := encode(p)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(again, b) {
		return nil, fmt.Errorf("%w: phase-2 section not in canonical encoding", ErrTranscript)
	}
	return p, nil
}

// decodeG1Slice reads a length-prefixed G1 slice whose length must be want.
func decodeG1Slice(r *bytes.Reader, dst *[]curve.G1Affine, want int) error {
	var prefix [4]byte
	if _, err := io.ReadFull(r, prefix[:]); err != nil {
		return fmt.Errorf("%w: phase-2 section cut short", ErrTranscript)
	}
	if n := binary.BigEndian.Uint32(prefix[:]); int64(n) != int64(want) {
		return fmt.Errorf("%w: phase-2 vector of %d points, want %d", ErrTranscript, n, want)
	}
	if err := curve.NewDecoder(io.MultiReader(bytes.NewReader(prefix[:]), r)).Decode(dst); err != nil {
		return fmt.Errorf("%w: phase-2 points: %w", ErrTranscript, err)
	}
	return nil
}
