package zkp

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Kinds of trusted setup behind a System's keys, as Setup reports them.
const (
	// SetupDevelopment: at least one circuit's keys come from a single-party
	// groth16.Setup (LoadOrSetup's first start). Whoever saw that process's
	// memory (the toxic waste) can forge proofs.
	SetupDevelopment = "development"
	// SetupCeremony: every circuit's keys come from a multi-party ceremony
	// (zkp/ceremony): sound as long as one participant was honest.
	SetupCeremony = "ceremony"
)

// Setup reports the kind of trusted setup behind s's keys: SetupCeremony
// when every circuit's keys were imported from a ceremony, else
// SetupDevelopment. It is what GET /status reports as zk_setup, and what a
// policy refusing development keys (COVERAGE_TRUST=registered) checks.
func (s *System) Setup() string {
	if len(s.circuits) == 0 {
		return SetupDevelopment
	}
	for _, ck := range s.circuits {
		if ck.origin != OriginCeremony {
			return SetupDevelopment
		}
	}
	return SetupCeremony
}

// LoadKeysDir loads the key pair of every circuit from dir, in the layout
// System.Save writes (NAME.pk, NAME.vk, NAME.json), and never runs a setup
// nor writes anything: dir may be read-only. It is how ZK_KEYS_DIR is read.
// Each pair must have been made for the constraint system this binary
// compiles (the manifest's ccs_sha256), match its recorded digests, fit the
// circuit (public inputs, domain, no commitment keys), and prove and
// verify a sample statement. Any mismatch is an error wrapping
// ErrKeyMismatch; a missing pair is an error too. WithTableStore works as
// for LoadOrSetup (the fast prover's tables, checked against the proving
// key when read; nothing is written to dir).
func LoadKeysDir(ctx context.Context, dir string, opts ...SystemOption) (*System, error) {
	o, err := applySystemOptions(opts)
	if err != nil {
		return nil, err
	}
	sys := &System{circuits: make(map[string]*circuitKeys)}
	for _, name := range CircuitNames() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ck, err := compileWithDigest(name, o.tables)
		if err != nil {
			return nil, err
		}
		// The constraint-system check first, with a message for keys
		// brought from elsewhere (load's speaks of a DATA_DIR's own keys).
		_, _, manPath := keyPaths(dir, name)
		raw, err := os.ReadFile(manPath)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: no keys for the %s circuit (%s is missing)", ErrKeyMismatch, name, manPath)
		}
		if err != nil {
			return nil, fmt.Errorf("zkp: read %s: %w", manPath, err)
		}
		var m manifest
		if err := json.Unmarshal(raw, &m); err != nil || m.Format != manifestFormat || m.Circuit != name {
			return nil, fmt.Errorf("%w: %s is not a key manifest of the %s circuit", ErrKeyMismatch, manPath, name)
		}
		if want := hex.EncodeToString(ck.digest[:]); m.CCSSHA256 != want {
			return nil, fmt.Errorf("%w: the %s keys were made for constraint system %s, this binary's %s circuit is %s (keys for another circuit or circuit version)",
				ErrKeyMismatch, name, short(m.CCSSHA256), name, short(want))
		}
		loaded, err := ck.load(dir)
		if err != nil {
			return nil, err
		}
		if !loaded {
			return nil, fmt.Errorf("%w: no keys for the %s circuit", ErrKeyMismatch, name)
		}
		ck.tables = o.tables
		if ck, err = ck.checkOnce(); err != nil {
			return nil, err
		}
		sys.circuits[name] = ck
	}
	return sys, nil
}

// short abbreviates a hex digest for a message.
func short(h string) string {
	if len(h) > 16 {
		return h[:16] + "…"
	}
	return h
}
