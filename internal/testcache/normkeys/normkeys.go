// Package normkeys hands tests the Groth16 keys of federated/normproof's
// update-bound circuit from the shared test cache (package testcache), so
// that a test's coordinator does not run a setup per shape and test.
//
// An entry is keyed by the shape and the SHA-256 of its compiled circuit:
// a changed circuit misses and is set up again. It holds the keys twice:
// raw (loaded by this process without per-point checks, as zkp loads its
// own DATA_DIR keys: the entry's bytes match the digest recorded when they
// were written, and the shape of the keys is checked against the circuit)
// and compressed, as normproof writes them under a coordinator's DATA_DIR
// (Into), which the coordinator decodes with every check.
package normkeys

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/constraint"

	"github.com/healthagents/healthagents/federated/normproof"
	"github.com/healthagents/healthagents/internal/testcache"
)

// entryFormat versions the entries.
const entryFormat = "normproof-keys/v1"

var (
	compiled sync.Map // normproof.Shape → *compiledShape
	loaded   sync.Map // normproof.Shape → *loadedKeys
)

type compiledShape struct {
	once   sync.Once
	cs     constraint.ConstraintSystem
	digest string
	err    error
}

type loadedKeys struct {
	once  sync.Once
	keys  *normproof.Keys
	files map[string][]byte
	err   error
}

// compile compiles s's circuit and hashes it, once per process.
func compile(s normproof.Shape) (constraint.ConstraintSystem, string, error) {
	v, _ := compiled.LoadOrStore(s, &compiledShape{})
	c := v.(*compiledShape)
	c.once.Do(func() {
		if c.cs, c.err = normproof.Compile(s); c.err != nil {
			return
		}
		h := sha256.New()
		if _, err := c.cs.WriteTo(h); err != nil {
			c.err = err
			return
		}
		c.digest = hex.EncodeToString(h.Sum(nil))
	})
	return c.cs, c.digest, c.err
}

// Entry files: raw keys for this process, compressed ones for a DATA_DIR.
const (
	rawPK, rawVK = "raw.pk", "raw.vk"
	filePK       = "pk"
	fileVK       = "vk"
)

// load returns s's keys and entry files, from the cache or set up and
// stored there, once per process.
func load(s normproof.Shape) (*normproof.Keys, map[string][]byte, error) {
	v, _ := loaded.LoadOrStore(s, &loadedKeys{})
	l := v.(*loadedKeys)
	l.once.Do(func() {
		c, err := testcache.Open()
		if err != nil {
			l.err = err
			return
		}
		l.keys, l.files, l.err = fetch(c, s)
	})
	if l.err != nil {
		return nil, nil, fmt.Errorf("normproof keys of %s from the test cache: %w", s.Name(), l.err)
	}
	return l.keys, l.files, nil
}

// entryKey names s's entry: the format, the shape and its circuit's digest.
func entryKey(s normproof.Shape) (string, error) {
	_, digest, err := compile(s)
	if err != nil {
		return "", err
	}
	return testcache.Key([]byte(entryFormat), []byte(s.Name()), []byte(digest)), nil
}

// fetch returns s's keys and entry files from c, setting them up and
// storing them when c has none, or none that decode to keys of s's
// circuit; and makes sure c knows them decoded (known).
func fetch(c *testcache.Cache, s normproof.Shape) (*normproof.Keys, map[string][]byte, error) {
	k, files, err := fetchEntry(c, s)
	if err != nil {
		return nil, nil, err
	}
	if err := known(c, k, files); err != nil {
		return nil, nil, err
	}
	return k, files, nil
}

// known stores in c, unless it is there, the normproof.KnownKeysEntry of
// k, whose compressed encodings are files' (the ones Into writes into a
// coordinator's DATA_DIR and the coordinator serves its participants): a
// process given the cache as its normproof.KnownKeys (a coordinator or
// participant started by a test, through HEALTHAGENTS_TEST_CACHE) finds
// these keys, which this harness set up itself, decoded, instead of
// decompressing and checking every point again.
func known(c *testcache.Cache, k *normproof.Keys, files map[string][]byte) error {
	name := normproof.KnownKeysName(k.Shape, files[filePK], files[fileVK])
	if _, found, err := c.Load(name); err == nil && found {
		return nil
	}
	_, data, err := normproof.KnownKeysEntry(k)
	if err != nil {
		return err
	}
	return c.Store(name, data)
}

// fetchEntry is fetch without known.
func fetchEntry(c *testcache.Cache, s normproof.Shape) (*normproof.Keys, map[string][]byte, error) {
	cs, _, err := compile(s)
	if err != nil {
		return nil, nil, err
	}
	key, err := entryKey(s)
	if err != nil {
		return nil, nil, err
	}
	want := []string{rawPK, rawVK, filePK, fileVK}
	build := func() ([]byte, error) {
		k, err := normproof.Setup(s)
		if err != nil {
			return nil, err
		}
		var rp, rv bytes.Buffer
		if _, err := k.PK.WriteRawTo(&rp); err != nil {
			return nil, err
		}
		if _, err := k.VK.WriteRawTo(&rv); err != nil {
			return nil, err
		}
		pk, vk, err := k.EncodeKeys()
		if err != nil {
			return nil, err
		}
		return testcache.Pack(map[string][]byte{rawPK: rp.Bytes(), rawVK: rv.Bytes(), filePK: pk, fileVK: vk}), nil
	}
	data, err := c.Get(key, build)
	if err != nil {
		return nil, nil, err
	}
	files, err := testcache.Unpack(data, want)
	if err == nil {
		var k *normproof.Keys
		if k, err = decode(s, cs, files); err == nil {
			return k, files, nil
		}
	}
	// An entry that does not decode to keys of this circuit: set up again.
	if data, err = build(); err != nil {
		return nil, nil, err
	}
	if err := c.Store(key, data); err != nil {
		return nil, nil, err
	}
	if files, err = testcache.Unpack(data, want); err != nil {
		return nil, nil, err
	}
	k, err := decode(s, cs, files)
	return k, files, err
}

// decode reads the raw keys and checks that they fit the circuit.
func decode(s normproof.Shape, cs constraint.ConstraintSystem, files map[string][]byte) (*normproof.Keys, error) {
	pk, vk := groth16.NewProvingKey(ecc.BN254), groth16.NewVerifyingKey(ecc.BN254)
	if n, err := pk.UnsafeReadFrom(bytes.NewReader(files[rawPK])); err != nil || n != int64(len(files[rawPK])) {
		return nil, fmt.Errorf("%w: raw proving key", testcache.ErrBadEntry)
	}
	if n, err := vk.UnsafeReadFrom(bytes.NewReader(files[rawVK])); err != nil || n != int64(len(files[rawVK])) {
		return nil, fmt.Errorf("%w: raw verifying key", testcache.ErrBadEntry)
	}
	if vk.NbPublicWitness() != cs.GetNbPublicVariables()-1 {
		return nil, fmt.Errorf("%w: verifying key of %d public inputs, circuit %d", testcache.ErrBadEntry, vk.NbPublicWitness(), cs.GetNbPublicVariables()-1)
	}
	return &normproof.Keys{Shape: s, CS: cs, PK: pk, VK: vk}, nil
}

// Service returns a normproof.Service whose keys come from the test cache
// (set up once per machine and circuit, shared by every Service of the
// process): prover and verifier of one shape agree, as with NewService.
func Service() *normproof.Service {
	return normproof.NewServiceFrom(func(s normproof.Shape) (*normproof.Keys, error) {
		k, _, err := load(s)
		return k, err
	})
}

// Into writes the keys of shapes into dir as normproof.NewServiceDir keeps
// them (a coordinator's DATA_DIR/federated-proofs), so its start decodes
// them, with every check, instead of running a setup per shape.
func Into(tb testing.TB, dir string, shapes ...normproof.Shape) {
	tb.Helper()
	files := map[string][]byte{}
	for _, s := range shapes {
		_, f, err := load(s)
		if err != nil {
			tb.Fatal(err)
		}
		files[s.Name()+".pk"], files[s.Name()+".vk"] = f[filePK], f[fileVK]
	}
	if err := testcache.WriteFiles(filepath.Clean(dir), files); err != nil {
		tb.Fatal(err)
	}
}
