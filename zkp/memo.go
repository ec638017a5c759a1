package zkp

import (
	"crypto/sha256"
	"fmt"
	"sync"

	csbn254 "github.com/consensys/gnark/constraint/bn254"
)

// What a process pays once however many Systems it loads: a test binary
// opens a service dozens of times, and a server that reloads its keys
// would otherwise compile, decode and self-check them again.
//
// Both memos are content-addressed. A compiled circuit is a function of
// the binary alone (the circuit's code), so it is keyed by name. A checked
// key pair is keyed by what load and save verified: the circuit's digest,
// the SHA-256 of the proving and verifying key bytes and their origin. A
// pair whose bytes differ in any way (another set-up, a corrupt file) has
// another key, is decoded and self-checked on its own, and fails as
// before. The circuitKeys shared this way are immutable after the check,
// except for the fast prover's tables, which are built once and shared.
var (
	compiledCircuits sync.Map // circuit name → *compiledCircuit
	checkedKeys      sync.Map // keyIdentity → *circuitKeys
)

type compiledCircuit struct {
	once   sync.Once
	ccs    *csbn254.R1CS
	digest [32]byte
	err    error
}

// compileOnce compiles the named circuit and hashes its constraint system,
// once per process. With a store (WithTableStore), a circuit this process
// has not compiled yet is read from it when the same executable compiled
// it before (compiledFrom), and stored there when not.
func compileOnce(name string, store TableStore) (*csbn254.R1CS, [32]byte, error) {
	if _, err := newCircuit(name); err != nil {
		return nil, [32]byte{}, err
	}
	v, _ := compiledCircuits.LoadOrStore(name, &compiledCircuit{})
	c := v.(*compiledCircuit)
	c.once.Do(func() {
		if c.ccs, c.err = compiledFrom(store, name); c.err != nil {
			return
		}
		h := sha256.New()
		if _, err := c.ccs.WriteTo(h); err != nil {
			c.err = fmt.Errorf("zkp: hash %s constraint system: %w", name, err)
			return
		}
		copy(c.digest[:], h.Sum(nil))
	})
	return c.ccs, c.digest, c.err
}

// CircuitDigest returns the hex SHA-256 of the named circuit's compiled
// constraint system: the ccs_sha256 of its key manifest and the CCSSHA256
// of CircuitInfo. Keys made for another digest do not load. The circuit is
// compiled once per process (read from the store of a WithTableStore
// option, if one is given and holds it); the Systems loaded after share
// that work.
func CircuitDigest(name string, opts ...SystemOption) (string, error) {
	var o systemOptions // not applySystemOptions: no logger side effect here
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return "", err
		}
	}
	_, d, err := compileOnce(name, o.tables)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", d), nil
}

// keyIdentity names a key pair by content: the circuit it was made for and
// the bytes of its keys.
type keyIdentity struct {
	name, origin         string
	digest, pkSum, vkSum [32]byte
}

func (ck *circuitKeys) identity() keyIdentity {
	return keyIdentity{name: ck.name, origin: ck.origin, digest: ck.digest, pkSum: ck.pkSum, vkSum: ck.vkSum}
}

// checkedBefore returns the circuit this process already loaded and
// self-checked with the same keys, if any.
func checkedBefore(id keyIdentity) (*circuitKeys, bool) {
	v, ok := checkedKeys.Load(id)
	if !ok {
		return nil, false
	}
	return v.(*circuitKeys), true
}

// checkOnce self-checks ck (a proof with its proving key must verify under
// its verifying key), or returns the circuit that passed that check with
// the same keys earlier in this process, so Systems loaded from equal key
// files share one decoded key pair and one set of prover tables.
func (ck *circuitKeys) checkOnce() (*circuitKeys, error) {
	id := ck.identity()
	if prev, ok := checkedBefore(id); ok {
		return prev, nil
	}
	if err := ck.selfCheck(); err != nil {
		return nil, err
	}
	prev, _ := checkedKeys.LoadOrStore(id, ck)
	return prev.(*circuitKeys), nil
}
