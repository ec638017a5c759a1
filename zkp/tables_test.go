package zkp

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"runtime"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fp"
	csbn254 "github.com/consensys/gnark/constraint/bn254"
	"github.com/stretchr/testify/require"
)

// memTables is a TableStore in memory.
type memTables struct {
	mu      sync.Mutex
	entries map[string][]byte
	builds  int
}

func (m *memTables) Get(key string, build func() ([]byte, error)) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if b, ok := m.entries[key]; ok {
		return b, nil
	}
	m.builds++
	b, err := build()
	if err != nil {
		return nil, err
	}
	m.entries[key] = b
	return b, nil
}

func (m *memTables) Store(key string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entries[key] = data
	return nil
}

// TestTablesRoundTrip: the tables a TableStore holds decode to the ones
// the prover builds, and the decoded table equals a fresh computation.
func TestTablesRoundTrip(t *testing.T) {
	ck, err := testSys.circuit(CircuitEligibilityV3)
	require.NoError(t, err)
	gp := readyGroth16(t, ck) // from the test cache (TestMain) or built
	data := gp.encodeTables()
	back, err := decodeTables(ck.ccs, ck.pk, data)
	require.NoError(t, err)
	for i, pair := range [][2]*tableG1{{gp.a, back.a}, {gp.b1, back.b1}, {gp.k, back.k}, {gp.z, back.z}} {
		require.Equal(t, pair[0].pts, pair[1].pts, "G1 table %d", i)
	}
	require.Equal(t, gp.b2.pts, back.b2.pts)
	require.Equal(t, data, back.encodeTables())
	// What a store hands out is what the prover computes from the key.
	require.Equal(t, newTableG1(ck.pk.G1.A).pts, back.a.pts, "A's table computed afresh")
}

// TestTablesRejected: stored tables that were damaged, cut short, or made
// for another key fail the check on load; the prover then builds its
// tables and replaces the entry.
func TestTablesRejected(t *testing.T) {
	ck, err := testSys.circuit(CircuitEligibilityV3)
	require.NoError(t, err)
	data := readyGroth16(t, ck).encodeTables()
	other, err := testSys.circuit(CircuitPrescriptionV4)
	require.NoError(t, err)
	firstPoint := len(tablesFormat) + 24 // A's table: window 0 of point 0, then its windows above
	flip := func(at int) []byte {
		b := bytes.Clone(data)
		b[at] ^= 1
		return b
	}
	for name, bad := range map[string][]byte{
		"a base point changed":            flip(firstPoint),
		"a window above the base changed": flip(firstPoint + 2*fp.Bytes + 5),
		"the last G2 point changed":       flip(len(data) - 1),
		"truncated":                       data[:len(data)-1],
		"trailing bytes":                  append(bytes.Clone(data), 0),
		"another format":                  append([]byte("healthagents/zkp-tables/v0"), data[len(tablesFormat):]...),
		"another circuit's tables":        readyGroth16(t, other).encodeTables(),
		"empty":                           nil,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := decodeTables(ck.ccs, ck.pk, bad)
			require.True(t, errors.Is(err, errTables), "%v", err)
		})
	}

	// Through the prover's store: the bad entry is replaced by good tables.
	store := &memTables{entries: map[string][]byte{}}
	fresh := &circuitKeys{name: ck.name, ccs: ck.ccs, digest: ck.digest, pkSum: ck.pkSum, pk: ck.pk, vk: ck.vk, tables: store}
	store.entries[fresh.tablesKey()] = flip(firstPoint)
	gp, err := fresh.buildGroth16Prover()
	require.NoError(t, err)
	require.Equal(t, data, gp.encodeTables())
	require.Equal(t, data, store.entries[fresh.tablesKey()], "the damaged entry was replaced")
	require.Zero(t, store.builds)

	// An empty store is filled once; the second prover reads it.
	empty := &memTables{entries: map[string][]byte{}}
	fresh.tables = empty
	_, err = fresh.buildGroth16Prover()
	require.NoError(t, err)
	again, err := fresh.buildGroth16Prover()
	require.NoError(t, err)
	require.Equal(t, 1, empty.builds)
	require.Equal(t, data, again.encodeTables())
	require.NotEqual(t, fresh.tablesKey(), (&circuitKeys{name: other.name, digest: other.digest, pkSum: other.pkSum}).tablesKey())
}

// TestCompiledFromStore: a circuit compiled by this executable is stored
// and read back equal (the same digest); an entry that does not decode is
// compiled again and replaced.
func TestCompiledFromStore(t *testing.T) {
	id, ok := executableBuildID()
	if runtime.GOOS == "linux" {
		require.True(t, ok, "a Go build ID in the test binary's ELF note")
		require.NotEmpty(t, id)
	}
	if !ok {
		t.Skip("no build ID readable here: circuits are compiled, never stored")
	}
	name := CircuitEligibilityV3
	_, want, err := compileOnce(name, nil)
	require.NoError(t, err)
	digestOf := func(ccs *csbn254.R1CS) [32]byte {
		h := sha256.New()
		_, err := ccs.WriteTo(h)
		require.NoError(t, err)
		return [32]byte(h.Sum(nil))
	}
	store := &memTables{entries: map[string][]byte{}}
	first, err := compiledFrom(store, name)
	require.NoError(t, err)
	require.Equal(t, want, digestOf(first))
	require.Equal(t, 1, store.builds)
	back, err := compiledFrom(store, name)
	require.NoError(t, err)
	require.Equal(t, 1, store.builds, "read back, not compiled again")
	require.Equal(t, want, digestOf(back))

	key := hashKey(ccsFormat, name, id)
	good := store.entries[key]
	store.entries[key] = []byte("not a constraint system")
	again, err := compiledFrom(store, name)
	require.NoError(t, err)
	require.Equal(t, want, digestOf(again))
	require.Equal(t, good, store.entries[key], "the bad entry was replaced")
}
