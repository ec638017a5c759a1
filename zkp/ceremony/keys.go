package ceremony

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
	"slices"
	"strings"

	"github.com/healthagents/healthagents/chain"
	"github.com/healthagents/healthagents/zkp"
)

// ManifestFile is the name of the manifest finalize writes beside the keys.
const ManifestFile = "ceremony.json"

// ManifestFormat versions Manifest.
const ManifestFormat = "healthagents/ceremony-keys/v1"

// Manifest records what a key directory came from: the transcript (every
// file's SHA-256, as its contributor published it), the beacons, and per
// circuit the constraint system and the keys. Anyone holding the transcript
// files re-derives the keys (`healthagents ceremony verify --dir`) and
// compares.
type Manifest struct {
	Format string `json:"format"`
	// Power: phase 1 covers 2^Power constraints.
	Power int `json:"power"`
	// Phase1 lists the SHA-256 of every phase-1 file, the init file (#0)
	// first; Phase1Beacon (hex) sealed it into the srs file SRS.
	Phase1       []string `json:"phase1"`
	Phase1Beacon string   `json:"phase1_beacon"`
	SRS          string   `json:"srs_sha256"`
	// Phase2 lists the SHA-256 of every phase-2 file, #0 first;
	// Phase2Beacon sealed the last into the keys.
	Phase2       []string     `json:"phase2"`
	Phase2Beacon string       `json:"phase2_beacon"`
	Circuits     []CircuitKey `json:"circuits"`
}

// CircuitKey describes one circuit's keys in a Manifest.
type CircuitKey struct {
	Name         string `json:"name"`
	CCSSHA256    string `json:"ccs_sha256"` // SHA-256 of the serialized constraint system
	Constraints  int    `json:"constraints"`
	PublicInputs int    `json:"public_inputs"`
	Domain       uint64 `json:"domain"`
	// VKSHA256 is the SHA-256 of the gnark verifying key file (NAME.vk).
	VKSHA256 string `json:"vk_sha256"`
	// ChainVKHash is what the deployed Groth16Verifier contract's
	// verifyingKeyHash() returns for this key (chain.VerifyingKey.Hash).
	ChainVKHash string `json:"chain_vk_hash"`
}

// NewManifest describes keys made by Finalize from the transcript
// (phase-2 files, from #0) over srs, sealed with beacon.
func NewManifest(srs *File, phase2 []*File, beacon []byte, circuits []Circuit, keys []Keys) (*Manifest, error) {
	m := &Manifest{Format: ManifestFormat, Power: srs.Power, Phase1: srs.Sealed, Phase1Beacon: srs.Beacon, SRS: srs.Hash(),
		Phase2Beacon: hex.EncodeToString(beacon)}
	for _, f := range phase2 {
		m.Phase2 = append(m.Phase2, f.Hash())
	}
	if len(keys) != len(circuits) {
		return nil, fmt.Errorf("ceremony: %d key pairs for %d circuits", len(keys), len(circuits))
	}
	for i, c := range circuits {
		k := keys[i]
		d, err := c.digest()
		if err != nil {
			return nil, err
		}
		vkSum, chainHash, err := vkHashes(k)
		if err != nil {
			return nil, err
		}
		m.Circuits = append(m.Circuits, CircuitKey{Name: c.Name, CCSSHA256: d, Constraints: c.CCS.GetNbConstraints(),
			PublicInputs: c.CCS.GetNbPublicVariables() - 1, Domain: k.PK.Domain.Cardinality, VKSHA256: vkSum, ChainVKHash: chainHash})
	}
	return m, nil
}

func vkHashes(k Keys) (sum, chainHash string, err error) {
	h := sha256.New()
	if _, err := k.VK.WriteTo(h); err != nil {
		return "", "", fmt.Errorf("ceremony: encode %s verifying key: %w", k.Name, err)
	}
	cvk, err := chain.VerifyingKeyFromGnark(k.VK)
	if err != nil {
		return "", "", err
	}
	ch, err := cvk.Hash()
	if err != nil {
		return "", "", err
	}
	return hex.EncodeToString(h.Sum(nil)), ch.Hex(), nil
}

// ReadManifest reads dir's ceremony.json.
func ReadManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestFile)
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("ceremony: %s is missing: the directory must be the output of `healthagents ceremony finalize`", path)
	}
	if err != nil {
		return nil, fmt.Errorf("ceremony: %w", err)
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil || m.Format != ManifestFormat {
		return nil, fmt.Errorf("ceremony: %s is not a %s manifest", path, ManifestFormat)
	}
	if len(m.Phase1) < 2 || len(m.Phase2) < 2 || len(m.Circuits) == 0 {
		return nil, fmt.Errorf("ceremony: %s records no contribution to phase 1 or phase 2, or no circuit", path)
	}
	return &m, nil
}

// circuit returns m's entry for name.
func (m *Manifest) circuit(name string) (CircuitKey, bool) {
	i := slices.IndexFunc(m.Circuits, func(c CircuitKey) bool { return c.Name == name })
	if i < 0 {
		return CircuitKey{}, false
	}
	return m.Circuits[i], true
}

// ZKPCircuits compiles the circuits of package zkp, in zkp.CircuitNames
// order: what the healthagents ceremony is run for.
func ZKPCircuits() ([]Circuit, error) {
	var out []Circuit
	for _, name := range zkp.CircuitNames() {
		ccs, err := zkp.CompileCircuit(name)
		if err != nil {
			return nil, err
		}
		out = append(out, Circuit{Name: name, CCS: ccs})
	}
	return out, nil
}

// Install writes the key pairs of zkp's circuits under dir, in the layout
// zkp.LoadKeysDir reads, with m as dir/ceremony.json. zkp checks each pair
// first (decoding with subgroup checks, shape, a sample proof).
func Install(ctx context.Context, dir string, keys []Keys, m *Manifest) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("ceremony: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, ".import-*")
	if err != nil {
		return fmt.Errorf("ceremony: %w", err)
	}
	defer os.RemoveAll(tmp)
	files := map[string]zkp.CeremonyKeys{}
	for _, k := range keys {
		f := zkp.CeremonyKeys{ProvingKey: filepath.Join(tmp, k.Name+".pk"), VerifyingKey: filepath.Join(tmp, k.Name+".vk")}
		if err := writeTo(f.ProvingKey, k.PK); err != nil {
			return err
		}
		if err := writeTo(f.VerifyingKey, k.VK); err != nil {
			return err
		}
		files[k.Name] = f
	}
	sys, err := zkp.LoadCeremony(ctx, files)
	if err != nil {
		return err
	}
	if err := publish(ctx, dir, sys.Save); err != nil {
		return err
	}
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ManifestFile), append(out, '\n'), 0o644)
}

// publish has save write the keys into a staging directory beside dir's
// files, then moves each file it wrote into dir readable by all (0644:
// the keys of a ceremony are public, copied to every replica and to
// auditors), leaving behind what is not a key file: the lock a key
// directory of the service holds while it writes (.lock) and the
// staging directory itself.
func publish(ctx context.Context, dir string, save func(context.Context, string) error) error {
	stage, err := os.MkdirTemp(dir, ".stage-*")
	if err != nil {
		return fmt.Errorf("ceremony: %w", err)
	}
	defer os.RemoveAll(stage)
	if err := save(ctx, stage); err != nil {
		return err
	}
	entries, err := os.ReadDir(stage)
	if err != nil {
		return fmt.Errorf("ceremony: %w", err)
	}
	// The manifests (.json) last, as save wrote them: each commits its pair.
	last := func(e fs.DirEntry) int {
		if filepath.Ext(e.Name()) == ".json" {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(entries, func(a, b fs.DirEntry) int { return last(a) - last(b) })
	for _, e := range entries {
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		from := filepath.Join(stage, e.Name())
		if err := os.Chmod(from, 0o644); err != nil {
			return fmt.Errorf("ceremony: %w", err)
		}
		if err := os.Rename(from, filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("ceremony: %w", err)
		}
	}
	return nil
}

func writeTo(path string, v io.WriterTo) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("ceremony: %w", err)
	}
	if _, err := v.WriteTo(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("ceremony: write %s: %w", path, err)
	}
	return f.Close()
}

// LoadKeys loads the keys of zkp's circuits from dir (ZK_KEYS_DIR): the
// output of `healthagents ceremony finalize`. zkp.LoadKeysDir checks each
// pair against the compiled circuit; LoadKeys also requires the pairs to be
// a ceremony's and to be the ones dir/ceremony.json describes (circuits,
// constraint systems, verifying keys), so that the manifest an auditor
// reads is the one in force.
func LoadKeys(ctx context.Context, dir string, opts ...zkp.SystemOption) (*zkp.System, *Manifest, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, nil, err
	}
	sys, err := zkp.LoadKeysDir(ctx, dir, opts...)
	if err != nil {
		return nil, nil, err
	}
	if sys.Setup() != zkp.SetupCeremony {
		return nil, nil, fmt.Errorf("%w: the keys are development keys (a single-party setup), not a ceremony's", zkp.ErrKeyMismatch)
	}
	names := zkp.CircuitNames()
	for _, c := range m.Circuits {
		if !slices.Contains(names, c.Name) {
			return nil, nil, fmt.Errorf("%w: %s lists circuit %q, which this binary does not have (it has %v)", zkp.ErrKeyMismatch, ManifestFile, c.Name, names)
		}
	}
	for _, name := range names {
		c, ok := m.circuit(name)
		if !ok {
			return nil, nil, fmt.Errorf("%w: %s does not list the %s circuit", zkp.ErrKeyMismatch, ManifestFile, name)
		}
		info, _ := sys.Info(name)
		if c.CCSSHA256 != info.CCSSHA256 {
			return nil, nil, fmt.Errorf("%w: %s names constraint system %s for the %s circuit, the keys and this binary %s", zkp.ErrKeyMismatch, ManifestFile, c.CCSSHA256, name, info.CCSSHA256)
		}
		h := sha256.New()
		if _, err := sys.VerifyingKey(name).WriteTo(h); err != nil {
			return nil, nil, err
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != c.VKSHA256 {
			return nil, nil, fmt.Errorf("%w: the %s verifying key (%s) is not the one %s records (%s)", zkp.ErrKeyMismatch, name, got, ManifestFile, c.VKSHA256)
		}
	}
	return sys, m, nil
}
