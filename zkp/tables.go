package zkp

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"

	curve "github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fp"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	csbn254 "github.com/consensys/gnark/constraint/bn254"
)

// TableStore keeps the fast prover's tables between processes (the tables
// of a circuit take a few CPU-seconds to build, most of a start on a
// development machine's keys). Get returns the bytes stored under key,
// calling build and storing its result when there are none (or the stored
// bytes are damaged); Store replaces what is under key. The test suites'
// cache (internal/testcache) is one; a server builds its own tables.
type TableStore interface {
	Get(key string, build func() ([]byte, error)) ([]byte, error)
	Store(key string, data []byte) error
}

// WithTableStore makes LoadOrSetup's (and LoadKeysDir's) circuits take their fast prover's
// tables from s instead of building them, and put there the ones it
// builds; a circuit not yet compiled in the process is read from s too
// when the same executable compiled it before (compiledFrom). An entry is named by the circuit's digest and its proving key's,
// and is checked against the proving key when read: the shape must be the
// one this binary builds and the first window of every table must hold
// the key's points themselves, with spot checks of the windows above (each
// is the one below times 2^c). An entry that fails is built again and
// replaced. The keys' own checks (digests, the sample proof) are the same
// with or without a store.
func WithTableStore(s TableStore) SystemOption {
	return func(o *systemOptions) error { o.tables = s; return nil }
}

// tablesFormat versions the encoding of a groth16Prover's tables.
const tablesFormat = "healthagents/zkp-tables/v1"

// tablesKey names the tables of ck's circuit and proving key in a
// TableStore.
func (ck *circuitKeys) tablesKey() string {
	return hashKey(tablesFormat, ck.name, string(ck.digest[:]), string(ck.pkSum[:]))
}

// hashKey is a TableStore key for parts (hex SHA-256, usable as a file
// name), each length-prefixed so no two lists share a key.
func hashKey(parts ...string) string {
	h := sha256.New()
	for _, part := range parts {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write([]byte(part))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// buildGroth16Prover builds ck's fast prover: its tables from ck.tables
// when it holds them for these keys, else computed (and stored there).
func (ck *circuitKeys) buildGroth16Prover() (*groth16Prover, error) {
	if ck.tables == nil || ck.pkSum == ([32]byte{}) {
		return newGroth16Prover(ck.ccs, ck.pk)
	}
	key := ck.tablesKey()
	var built *groth16Prover
	data, err := ck.tables.Get(key, func() ([]byte, error) {
		p, err := newGroth16Prover(ck.ccs, ck.pk)
		if err != nil {
			return nil, err
		}
		built = p
		return p.encodeTables(), nil
	})
	switch {
	case built != nil:
		return built, nil
	case err != nil:
		// The store failed (a full disk, a lock): the tables are built here.
		return newGroth16Prover(ck.ccs, ck.pk)
	}
	if p, err := decodeTables(ck.ccs, ck.pk, data); err == nil {
		return p, nil
	}
	// Stored tables that do not belong to this key: build and replace them.
	p, err := newGroth16Prover(ck.ccs, ck.pk)
	if err != nil {
		return nil, err
	}
	return p, ck.tables.Store(key, p.encodeTables())
}

// encodeTables writes the tables as: format, then per table (A, B₁, K, Z
// in G1, B in G2) c, windows, n and the points' coordinates, each a
// little-endian Montgomery limb.
func (p *groth16Prover) encodeTables() []byte {
	size := len(tablesFormat) + 5*24 + (len(p.a.pts)+len(p.b1.pts)+len(p.k.pts)+len(p.z.pts))*2*fp.Bytes + len(p.b2.pts)*4*fp.Bytes
	out := make([]byte, 0, size)
	out = append(out, tablesFormat...)
	head := func(c uint, windows, n int) {
		out = binary.LittleEndian.AppendUint64(out, uint64(c))
		out = binary.LittleEndian.AppendUint64(out, uint64(windows))
		out = binary.LittleEndian.AppendUint64(out, uint64(n))
	}
	limbs := func(e *fp.Element) {
		for _, l := range e {
			out = binary.LittleEndian.AppendUint64(out, l)
		}
	}
	for _, t := range []*tableG1{p.a, p.b1, p.k, p.z} {
		head(t.c, t.windows, t.n)
		for i := range t.pts {
			limbs(&t.pts[i].X)
			limbs(&t.pts[i].Y)
		}
	}
	head(p.b2.c, p.b2.windows, p.b2.n)
	for i := range p.b2.pts {
		limbs(&p.b2.pts[i].X.A0)
		limbs(&p.b2.pts[i].X.A1)
		limbs(&p.b2.pts[i].Y.A0)
		limbs(&p.b2.pts[i].Y.A1)
	}
	return out
}

var errTables = errors.New("zkp: stored prover tables do not match the proving key")

// decodeTables reads what encodeTables wrote for pk and checks it against
// pk (see WithTableStore).
func decodeTables(ccs *csbn254.R1CS, pk *groth16bn254.ProvingKey, data []byte) (*groth16Prover, error) {
	if err := checkProvingKeyShape(ccs, pk); err != nil {
		return nil, fmt.Errorf("zkp: %w", err)
	}
	data, ok := bytes.CutPrefix(data, []byte(tablesFormat))
	if !ok {
		return nil, errTables
	}
	word := func() (uint64, bool) {
		if len(data) < 8 {
			return 0, false
		}
		v := binary.LittleEndian.Uint64(data)
		data = data[8:]
		return v, true
	}
	// element reads a coordinate; head has checked that the bytes are there.
	element := func(e *fp.Element) {
		for i := range e {
			e[i], _ = word()
		}
	}
	// head reads a table's shape, which must be the one newTable builds
	// for n points, with enough bytes left for its points.
	head := func(n, pointBytes int) (c uint, windows int, ok bool) {
		cw, ok1 := word()
		ww, ok2 := word()
		nw, ok3 := word()
		c, windows = msmWindowBits(n), msmWindows(msmWindowBits(n))
		if !ok1 || !ok2 || !ok3 || cw != uint64(c) || ww != uint64(windows) || nw != uint64(n) ||
			uint64(len(data)) < uint64(n)*uint64(windows)*uint64(pointBytes) {
			return 0, 0, false
		}
		return c, windows, true
	}
	g1 := func(points []curve.G1Affine) *tableG1 {
		c, w, ok := head(len(points), 2*fp.Bytes)
		if !ok {
			return nil
		}
		t := &tableG1{c: c, windows: w, n: len(points), pts: make([]curve.G1Affine, len(points)*w)}
		for i := range t.pts {
			element(&t.pts[i].X)
			element(&t.pts[i].Y)
		}
		for i := range points {
			if !t.pts[i*w].Equal(&points[i]) {
				return nil
			}
		}
		for _, i := range spotChecks(len(points)) {
			for j := 1; j < w; j++ {
				var q curve.G1Jac
				q.FromAffine(&t.pts[i*w+j-1])
				for range c {
					q.DoubleAssign()
				}
				var a curve.G1Affine
				a.FromJacobian(&q)
				if !a.Equal(&t.pts[i*w+j]) {
					return nil
				}
			}
		}
		return t
	}
	nbPublic := ccs.GetNbPublicVariables()
	p := &groth16Prover{ccs: ccs, pk: pk, nbPublic: nbPublic}
	if p.a = g1(pk.G1.A); p.a == nil {
		return nil, errTables
	}
	if p.b1 = g1(pk.G1.B); p.b1 == nil {
		return nil, errTables
	}
	if p.k = g1(pk.G1.K); p.k == nil {
		return nil, errTables
	}
	if p.z = g1(pk.G1.Z[:pk.Domain.Cardinality-1]); p.z == nil {
		return nil, errTables
	}
	points := pk.G2.B
	c, w, ok := head(len(points), 4*fp.Bytes)
	if !ok {
		return nil, errTables
	}
	t := &tableG2{c: c, windows: w, n: len(points), pts: make([]curve.G2Affine, len(points)*w)}
	for i := range t.pts {
		element(&t.pts[i].X.A0)
		element(&t.pts[i].X.A1)
		element(&t.pts[i].Y.A0)
		element(&t.pts[i].Y.A1)
	}
	for i := range points {
		if !t.pts[i*w].Equal(&points[i]) {
			return nil, errTables
		}
	}
	for _, i := range spotChecks(len(points)) {
		for j := 1; j < w; j++ {
			var q curve.G2Jac
			q.FromAffine(&t.pts[i*w+j-1])
			for range c {
				q.DoubleAssign()
			}
			var a curve.G2Affine
			a.FromJacobian(&q)
			if !a.Equal(&t.pts[i*w+j]) {
				return nil, errTables
			}
		}
	}
	if len(data) != 0 {
		return nil, errTables
	}
	p.b2 = t
	return p, nil
}

// spotChecks picks the points of a table of n whose every window is
// recomputed on load: the first, the last and a few spread between.
func spotChecks(n int) []int {
	if n == 0 {
		return nil
	}
	const k = 8
	var idx []int
	for i := range k {
		idx = append(idx, i*(n-1)/(k-1))
	}
	return idx
}
