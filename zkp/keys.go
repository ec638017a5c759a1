package zkp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	groth16bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	"github.com/consensys/gnark/constraint"
	csbn254 "github.com/consensys/gnark/constraint/bn254"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/consensys/gnark/logger"
)

// CircuitNames lists the circuits of a System in a stable order.
func CircuitNames() []string {
	return []string{CircuitEligibilityV3, CircuitPrescriptionV4}
}

// manifestFormat versions the key manifest written beside each key pair.
const manifestFormat = "healthagents/zkp-keys/v1"

// Key origins recorded in the manifest.
const (
	OriginSetup    = "setup"    // groth16.Setup on this machine (single-party, toxic waste discarded)
	OriginCeremony = "ceremony" // imported from an mpcsetup ceremony
)

// circuitKeys is one compiled circuit with its Groth16 key pair.
type circuitKeys struct {
	name   string
	ccs    *csbn254.R1CS
	digest [32]byte // SHA-256 of the serialized constraint system
	pkSum  [32]byte // SHA-256 of the proving key's bytes as stored (zero for ceremony files)
	vkSum  [32]byte // SHA-256 of the verifying key's bytes as stored
	pk     *groth16bn254.ProvingKey
	vk     *groth16bn254.VerifyingKey
	origin string
	g16    lazyGroth16 // fixed-base prover over pk, built in the background after the first proof
	tables TableStore  // where g16's tables are kept between processes, if anywhere (WithTableStore)
}

// System holds the compiled constraint systems and the proving and
// verifying keys of every circuit. It is immutable after construction and
// safe for concurrent use; build a Prover and a Verifier on it.
type System struct {
	circuits map[string]*circuitKeys
}

type systemOptions struct {
	keepGnarkLogs bool
	tables        TableStore
}

// SystemOption configures LoadOrSetup and LoadCeremony.
type SystemOption func(*systemOptions) error

// WithGnarkLogging leaves gnark's process-wide zerolog logger as it is.
// Without it, the first LoadOrSetup or LoadCeremony call in a process
// disables that logger (logger.Disable, once per process), because gnark
// otherwise writes a line to stdout for every proof; the library never logs
// on its own.
func WithGnarkLogging() SystemOption {
	return func(o *systemOptions) error { o.keepGnarkLogs = true; return nil }
}

// silenceGnark guards the one process-wide side effect of this package:
// switching gnark's global logger off. sync.Once makes it idempotent and
// orders it before any proof this package starts.
var silenceGnark sync.Once

func applySystemOptions(opts []SystemOption) (systemOptions, error) {
	var o systemOptions
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return o, err
		}
	}
	if !o.keepGnarkLogs {
		silenceGnark.Do(logger.Disable)
	}
	return o, nil
}

// newCircuit returns the empty circuit definition named name.
func newCircuit(name string) (frontend.Circuit, error) {
	switch name {
	case CircuitEligibilityV3:
		return &EligibilityV3Circuit{}, nil
	case CircuitPrescriptionV4:
		return &PrescriptionV4Circuit{}, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownCircuit, name)
}

// CompileCircuit compiles the named circuit to its BN254 R1CS. The result is
// what an mpcsetup phase 2 is initialised with (see docs/decisions/zkp.md).
func CompileCircuit(name string) (*csbn254.R1CS, error) {
	c, err := newCircuit(name)
	if err != nil {
		return nil, err
	}
	ccs, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, c)
	if err != nil {
		return nil, fmt.Errorf("zkp: compile %s circuit: %w", name, err)
	}
	r, ok := ccs.(*csbn254.R1CS)
	if !ok {
		return nil, fmt.Errorf("zkp: compile %s circuit: unexpected constraint system %T", name, ccs)
	}
	if n := len(commitmentsOf(r)); n != 0 {
		return nil, fmt.Errorf("zkp: %s circuit has %d Pedersen (BSB22) commitments; the Solidity verifier supports none", name, n)
	}
	return r, nil
}

// commitmentsOf returns the Pedersen (BSB22) commitments of a constraint system.
func commitmentsOf(r *csbn254.R1CS) constraint.Groth16Commitments {
	c, _ := r.CommitmentInfo.(constraint.Groth16Commitments)
	return c
}

func compileWithDigest(name string, store TableStore) (*circuitKeys, error) {
	ccs, digest, err := compileOnce(name, store)
	if err != nil {
		return nil, err
	}
	return &circuitKeys{name: name, ccs: ccs, digest: digest}, nil
}

// manifest is written beside each key pair, last, so that its presence
// means the pair is complete.
type manifest struct {
	Format       string `json:"format"`
	Circuit      string `json:"circuit"`
	Origin       string `json:"origin"`
	CCSSHA256    string `json:"ccs_sha256"`
	Constraints  int    `json:"constraints"`
	PublicInputs int    `json:"public_inputs"`
	PKSHA256     string `json:"pk_sha256"`
	VKSHA256     string `json:"vk_sha256"`
}

func keyPaths(dir, name string) (pk, vk, man string) {
	return filepath.Join(dir, name+".pk"), filepath.Join(dir, name+".vk"), filepath.Join(dir, name+".json")
}

// LoadOrSetup returns the System whose keys live under dir. For every
// circuit it compiles the constraint system and then either loads the key
// pair stored under dir or, when dir holds none, runs groth16.Setup once and
// stores the pair (each file written to a temporary name, fsynced and
// renamed; the manifest last). Stored keys are checked before use: the
// manifest must name the same compiled circuit (SHA-256 of the constraint
// system), the files must match their recorded digests, and a proof made
// with the proving key must verify under the verifying key. Any mismatch is
// an error wrapping ErrKeyMismatch; nothing is overwritten then.
//
// An advisory lock on dir/.lock (flock, on Unix) serialises processes
// starting on the same directory. groth16.Setup cannot be interrupted; ctx
// is checked between circuits.
func LoadOrSetup(ctx context.Context, dir string, opts ...SystemOption) (*System, error) {
	o, err := applySystemOptions(opts)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("zkp: key directory: %w", err)
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	sys := &System{circuits: make(map[string]*circuitKeys)}
	for _, name := range CircuitNames() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ck, err := compileWithDigest(name, o.tables)
		if err != nil {
			return nil, err
		}
		loaded, err := ck.load(dir)
		if err != nil {
			return nil, err
		}
		if !loaded {
			if err := ck.setup(); err != nil {
				return nil, err
			}
			if err := ck.save(dir); err != nil {
				return nil, err
			}
			// Read back what was written: the pair is then known by the
			// digests of its files, as a later start knows it.
			if _, err := ck.load(dir); err != nil {
				return nil, err
			}
		}
		ck.tables = o.tables
		if ck, err = ck.checkOnce(); err != nil {
			return nil, err
		}
		sys.circuits[name] = ck
	}
	return sys, nil
}

func (ck *circuitKeys) setup() error {
	ck.pk, ck.vk = new(groth16bn254.ProvingKey), new(groth16bn254.VerifyingKey)
	if err := groth16bn254.Setup(ck.ccs, ck.pk, ck.vk); err != nil {
		return fmt.Errorf("zkp: setup %s circuit: %w", ck.name, err)
	}
	ck.origin = OriginSetup
	return nil
}

// load reads the key pair of ck from dir. It reports false (and no error)
// when dir holds no manifest for ck: a pair without a manifest is the
// leftover of an interrupted first start and is replaced.
func (ck *circuitKeys) load(dir string) (bool, error) {
	pkPath, vkPath, manPath := keyPaths(dir, ck.name)
	raw, err := os.ReadFile(manPath)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("zkp: read %s: %w", manPath, err)
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil || m.Format != manifestFormat || m.Circuit != ck.name {
		return false, fmt.Errorf("%w: %s is not a key manifest of the %s circuit", ErrKeyMismatch, manPath, ck.name)
	}
	if m.CCSSHA256 != hex.EncodeToString(ck.digest[:]) {
		return false, fmt.Errorf("%w: the keys under %s were made for another version of the %s circuit (constraint system digest differs); remove them to run a new setup, or import keys from a ceremony over this version", ErrKeyMismatch, dir, ck.name)
	}
	pkBytes, pkSum, err := readDigest(pkPath, m.PKSHA256)
	if err != nil {
		return false, err
	}
	vkBytes, vkSum, err := readDigest(vkPath, m.VKSHA256)
	if err != nil {
		return false, err
	}
	ck.pkSum, ck.vkSum, ck.origin = pkSum, vkSum, m.Origin
	if prev, ok := checkedBefore(ck.identity()); ok {
		// The same bytes were decoded and self-checked earlier in this
		// process (checkOnce returns that circuit).
		ck.pk, ck.vk = prev.pk, prev.vk
		return true, nil
	}
	ck.pk, ck.vk = new(groth16bn254.ProvingKey), new(groth16bn254.VerifyingKey)
	// The proving key's bytes match the digest recorded when we wrote them,
	// so the per-point subgroup checks of ReadFrom are skipped; the
	// self-check proof below still exercises the pair.
	if _, err := ck.pk.UnsafeReadFrom(bytes.NewReader(pkBytes)); err != nil {
		return false, fmt.Errorf("%w: decode %s: %w", ErrKeyMismatch, pkPath, err)
	}
	if _, err := ck.vk.ReadFrom(bytes.NewReader(vkBytes)); err != nil {
		return false, fmt.Errorf("%w: decode %s: %w", ErrKeyMismatch, vkPath, err)
	}
	return true, ck.checkShape()
}

func readDigest(path, want string) ([]byte, [32]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, [32]byte{}, fmt.Errorf("%w: read %s: %w", ErrKeyMismatch, path, err)
	}
	sum := sha256.Sum256(b)
	if hex.EncodeToString(sum[:]) != want {
		return nil, [32]byte{}, fmt.Errorf("%w: %s does not match the digest in its manifest (corrupt or replaced)", ErrKeyMismatch, path)
	}
	return b, sum, nil
}

// checkShape verifies that the key pair fits the compiled circuit: number
// of public inputs, evaluation domain and no commitment keys.
func (ck *circuitKeys) checkShape() error {
	nbPublic := ck.ccs.GetNbPublicVariables() - 1 // without the constant wire
	switch {
	case ck.vk.NbPublicWitness() != nbPublic:
		return fmt.Errorf("%w: %s verifying key has %d public inputs, the circuit %d", ErrKeyMismatch, ck.name, ck.vk.NbPublicWitness(), nbPublic)
	case len(ck.vk.CommitmentKeys) != 0 || len(ck.pk.CommitmentKeys) != 0 || len(ck.vk.PublicAndCommitmentCommitted) != 0:
		return fmt.Errorf("%w: %s keys carry Pedersen commitment keys", ErrKeyMismatch, ck.name)
	case ck.pk.Domain.Cardinality != ecc.NextPowerOfTwo(uint64(ck.ccs.GetNbConstraints())):
		return fmt.Errorf("%w: %s proving key has domain %d for %d constraints", ErrKeyMismatch, ck.name, ck.pk.Domain.Cardinality, ck.ccs.GetNbConstraints())
	}
	if err := checkProvingKeyShape(ck.ccs, ck.pk); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrKeyMismatch, ck.name, err)
	}
	return nil
}

// selfCheck proves a fixed sample statement with the proving key and
// verifies it with the verifying key, so a pair that does not belong
// together (or to this circuit) fails at start rather than on a request.
func (ck *circuitKeys) selfCheck() error {
	assignment, err := sampleAssignment(ck.name)
	if err != nil {
		return err
	}
	w, err := frontend.NewWitness(assignment, ecc.BN254.ScalarField())
	if err != nil {
		return fmt.Errorf("zkp: self-check witness: %w", err)
	}
	proof, err := groth16bn254.Prove(ck.ccs, ck.pk, w)
	if err != nil {
		return fmt.Errorf("%w: %s proving key cannot prove the sample statement: %w", ErrKeyMismatch, ck.name, err)
	}
	pub, err := w.Public()
	if err != nil {
		return fmt.Errorf("zkp: self-check public witness: %w", err)
	}
	if err := groth16.Verify(proof, ck.vk, pub); err != nil {
		return fmt.Errorf("%w: %s verifying key rejects a proof of its proving key: %w", ErrKeyMismatch, ck.name, err)
	}
	return nil
}

// save writes ck's key pair and manifest under dir.
func (ck *circuitKeys) save(dir string) error {
	pkPath, vkPath, manPath := keyPaths(dir, ck.name)
	var pkBuf, vkBuf bytes.Buffer
	if _, err := ck.pk.WriteRawTo(&pkBuf); err != nil {
		return fmt.Errorf("zkp: encode %s proving key: %w", ck.name, err)
	}
	if _, err := ck.vk.WriteTo(&vkBuf); err != nil {
		return fmt.Errorf("zkp: encode %s verifying key: %w", ck.name, err)
	}
	pkSum, vkSum := sha256.Sum256(pkBuf.Bytes()), sha256.Sum256(vkBuf.Bytes())
	m := manifest{
		Format:       manifestFormat,
		Circuit:      ck.name,
		Origin:       ck.origin,
		CCSSHA256:    hex.EncodeToString(ck.digest[:]),
		Constraints:  ck.ccs.GetNbConstraints(),
		PublicInputs: ck.ccs.GetNbPublicVariables() - 1,
		PKSHA256:     hex.EncodeToString(pkSum[:]),
		VKSHA256:     hex.EncodeToString(vkSum[:]),
	}
	man, err := json.MarshalIndent(&m, "", "  ")
	if err != nil {
		return err
	}
	// The manifest goes last: it is the commit point of the pair.
	for _, f := range []struct {
		path string
		data []byte
	}{{pkPath, pkBuf.Bytes()}, {vkPath, vkBuf.Bytes()}, {manPath, append(man, '\n')}} {
		if err := writeFileAtomic(f.path, f.data); err != nil {
			return err
		}
	}
	return nil
}

// writeFileAtomic writes data to a temporary file in path's directory,
// fsyncs it, renames it over path and fsyncs the directory, so a crash
// leaves either the old file, or the new one, never half of one.
func writeFileAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("zkp: write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("zkp: write %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("zkp: sync %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("zkp: close %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("zkp: rename %s: %w", path, err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("zkp: sync directory %s: %w", dir, err)
	}
	defer d.Close()
	if err = d.Sync(); err != nil {
		return fmt.Errorf("zkp: sync directory %s: %w", dir, err)
	}
	return nil
}

// CeremonyKeys names the files of one circuit's key pair as an mpcsetup
// ceremony produced them: the proving and verifying keys returned by
// mpcsetup.VerifyPhase2, each written with its WriteTo (or WriteRawTo).
type CeremonyKeys struct {
	ProvingKey   string
	VerifyingKey string
}

// LoadCeremony builds a System from ceremony key files, one pair per circuit
// (keys of files are circuit names; every circuit needs one). The files
// are untrusted input: every point is decoded with subgroup checks, the
// pair must fit the compiled circuit and a sample proof must verify. Save
// the result under DATA_DIR with System.Save so LoadOrSetup reuses it.
func LoadCeremony(ctx context.Context, files map[string]CeremonyKeys, opts ...SystemOption) (*System, error) {
	if _, err := applySystemOptions(opts); err != nil {
		return nil, err
	}
	for name := range files {
		if _, err := newCircuit(name); err != nil {
			return nil, err
		}
	}
	sys := &System{circuits: make(map[string]*circuitKeys)}
	for _, name := range CircuitNames() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f, ok := files[name]
		if !ok {
			return nil, fmt.Errorf("zkp: no ceremony keys for the %s circuit", name)
		}
		ck, err := compileWithDigest(name, nil)
		if err != nil {
			return nil, err
		}
		ck.pk, ck.vk, ck.origin = new(groth16bn254.ProvingKey), new(groth16bn254.VerifyingKey), OriginCeremony
		if err := readKeyFile(f.ProvingKey, ck.pk); err != nil {
			return nil, err
		}
		if err := readKeyFile(f.VerifyingKey, ck.vk); err != nil {
			return nil, err
		}
		if err := ck.checkShape(); err != nil {
			return nil, err
		}
		if err := ck.selfCheck(); err != nil {
			return nil, err
		}
		sys.circuits[name] = ck
	}
	return sys, nil
}

func readKeyFile(path string, dst io.ReaderFrom) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("zkp: ceremony key: %w", err)
	}
	defer f.Close()
	if _, err := dst.ReadFrom(f); err != nil {
		return fmt.Errorf("%w: decode %s: %w", ErrKeyMismatch, path, err)
	}
	return nil
}

// Save writes every key pair of s, with its manifest, under dir in the
// layout LoadOrSetup reads, replacing what is there. It is how ceremony
// keys are installed under DATA_DIR.
func (s *System) Save(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("zkp: key directory: %w", err)
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return err
	}
	defer unlock()
	for _, name := range CircuitNames() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.circuits[name].save(dir); err != nil {
			return err
		}
	}
	return nil
}

// VerifyingKey returns the verifying key of the named circuit (nil for an
// unknown name). The chain package converts it for the EVM verifier.
func (s *System) VerifyingKey(circuit string) groth16.VerifyingKey {
	ck, ok := s.circuits[circuit]
	if !ok {
		return nil
	}
	return ck.vk
}

// CircuitInfo describes one circuit of a System.
type CircuitInfo struct {
	Name         string
	Constraints  int
	PublicInputs int
	Origin       string // OriginSetup or OriginCeremony
	CCSSHA256    string
}

// Info describes the named circuit; ok is false for an unknown name.
func (s *System) Info(circuit string) (info CircuitInfo, ok bool) {
	ck, ok := s.circuits[circuit]
	if !ok {
		return CircuitInfo{}, false
	}
	return CircuitInfo{
		Name:         ck.name,
		Constraints:  ck.ccs.GetNbConstraints(),
		PublicInputs: ck.ccs.GetNbPublicVariables() - 1,
		Origin:       ck.origin,
		CCSSHA256:    hex.EncodeToString(ck.digest[:]),
	}, true
}

func (s *System) circuit(name string) (*circuitKeys, error) {
	ck, ok := s.circuits[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownCircuit, name)
	}
	return ck, nil
}

// Warm starts building every circuit's fixed-base proving tables in the
// background (what a circuit's first proof would start) and returns a
// channel closed when all builds have finished. A server calls it at start
// so that its first requests already get the fast prover; without it, the
// first proofs of a process use gnark's prover while the tables are built.
func (s *System) Warm() <-chan struct{} {
	all := make(chan struct{})
	var dones []<-chan struct{}
	for _, ck := range s.circuits {
		if _, done := ck.groth16Async(); done != nil {
			dones = append(dones, done)
		}
	}
	go func() {
		defer close(all)
		for _, d := range dones {
			<-d
		}
	}()
	return all
}
