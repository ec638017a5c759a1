package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/healthagents/healthagents/zkp"
	"github.com/healthagents/healthagents/zkp/ceremony"
)

// ceremonyUsage is what `healthagents ceremony` without a subcommand prints.
const ceremonyUsage = `usage: healthagents ceremony SUBCOMMAND [flags]   (docs/ceremony.md)

A multi-party Groth16 setup of the service's circuits (gnark mpcsetup). Participants
exchange files only; every command but init-phase2 and finalize works offline.

  init --out DIR [--power K]            start phase 1 (powers of tau): DIR/phase1-0000.bin
  contribute --in FILE [--out FILE]     add fresh randomness to a phase1 or phase2 file;
                                        prints the contribution hash (SHA-256 of the new file)
  init-phase2 --dir DIR --beacon HEX    verify phase 1, seal it with the beacon (DIR/srs.bin)
                                        and start phase 2 for every circuit (DIR/phase2-0000.bin)
  verify [--dir DIR] [--in FILE]... [--srs FILE] [--keys ZKDIR]
                                        check every contribution; one line per file; exit 1 on failure
  finalize --dir DIR --beacon HEX --out ZKDIR
                                        verify phase 2, seal it with the beacon, write the proving and
                                        verifying keys and ceremony.json to ZKDIR (for ZK_KEYS_DIR)`

// ceremonyDeps are what the ceremony command runs for: the circuits and how
// their keys are installed. The binary's are zkpCeremony; tests use small
// circuits.
type ceremonyDeps struct {
	circuits func() ([]ceremony.Circuit, error)
	install  func(ctx context.Context, dir string, keys []ceremony.Keys, m *ceremony.Manifest) error
}

func zkpCeremony() ceremonyDeps {
	return ceremonyDeps{circuits: ceremony.ZKPCircuits, install: ceremony.Install}
}

// deployKeys are the verifying keys `healthagents chain deploy` puts in
// the verifiers: ZK_KEYS_DIR's when it is set (checked as the service
// checks them at start), else the development keys under DATA_DIR/zkp.
func deployKeys(ctx context.Context, getenv func(string) string, dataDir string) (*zkp.System, error) {
	if dir := getenv("ZK_KEYS_DIR"); dir != "" {
		sys, _, err := ceremony.LoadKeys(ctx, dir)
		if err != nil {
			return nil, fmt.Errorf("ZK_KEYS_DIR %s: %w", dir, err)
		}
		return sys, nil
	}
	sys, err := zkp.LoadOrSetup(ctx, filepath.Join(dataDir, "zkp"))
	if err != nil {
		return nil, fmt.Errorf("zk keys: %w", err)
	}
	return sys, nil
}

// transcriptName is the file name of a transcript file in a ceremony
// directory: phase1-0003.bin, phase2-0000.bin.
func transcriptName(kind string, index int) string { return fmt.Sprintf("%s-%04d.bin", kind, index) }

const srsName = "srs.bin"

// stringList is a repeatable flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func ceremonyCommand(ctx context.Context, deps ceremonyDeps, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || isHelp(args[0]) {
		_, err := fmt.Fprintln(stdout, ceremonyUsage)
		if len(args) == 0 && err == nil {
			return errors.New("ceremony: a subcommand is required")
		}
		return err
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("ceremony "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	switch sub {
	case "init":
		out := fs.String("out", "", "ceremony directory to create (phase1-0000.bin is written there)")
		power := fs.Int("power", 0, "phase 1 covers 2^power constraints (default: what the largest circuit needs)")
		if err := fs.Parse(args); err != nil {
			return flagErr(err)
		}
		if *out == "" {
			return errors.New("ceremony init: --out DIR is required")
		}
		return ceremonyInit(deps, *out, *power, stdout)
	case "contribute":
		in := fs.String("in", "", "the latest transcript file (phase1-NNNN.bin or phase2-NNNN.bin)")
		out := fs.String("out", "", "file to write (default: the next name beside --in)")
		if err := fs.Parse(args); err != nil {
			return flagErr(err)
		}
		if *in == "" {
			return errors.New("ceremony contribute: --in FILE is required")
		}
		return ceremonyContribute(ctx, *in, *out, stdout)
	case "init-phase2":
		dir := fs.String("dir", "", "ceremony directory holding phase1-*.bin")
		beacon := fs.String("beacon", "", "public random beacon (hex, ≥16 bytes) fixed in advance and published after the last phase-1 contribution")
		if err := fs.Parse(args); err != nil {
			return flagErr(err)
		}
		b, err := parseBeacon(*beacon)
		if *dir == "" || err != nil {
			return errors.Join(errors.New("ceremony init-phase2: --dir DIR and --beacon HEX are required"), err)
		}
		return ceremonyInitPhase2(ctx, deps, *dir, b, stdout)
	case "verify":
		dir := fs.String("dir", "", "ceremony directory: verify every phase1, srs and phase2 file in it")
		var in stringList
		fs.Var(&in, "in", "transcript file to verify (repeat, in order; or list them after the flags)")
		srs := fs.String("srs", "", "sealed phase 1 (srs.bin) that phase2 files start from (default: beside them)")
		keys := fs.String("keys", "", "with --dir: also re-derive the keys and compare them with ZKDIR (finalize's output)")
		if err := fs.Parse(args); err != nil {
			return flagErr(err)
		}
		in = append(in, fs.Args()...)
		if *dir == "" && len(in) == 0 {
			return errors.New("ceremony verify: --dir DIR or --in FILE is required")
		}
		if *keys != "" && *dir == "" {
			return errors.New("ceremony verify: --keys needs --dir")
		}
		return ceremonyVerify(ctx, deps, *dir, in, *srs, *keys, stdout)
	case "finalize":
		dir := fs.String("dir", "", "ceremony directory holding srs.bin and phase2-*.bin")
		beacon := fs.String("beacon", "", "public random beacon (hex, ≥16 bytes) fixed in advance and published after the last phase-2 contribution")
		out := fs.String("out", "", "directory to write the keys and ceremony.json to (then ZK_KEYS_DIR)")
		if err := fs.Parse(args); err != nil {
			return flagErr(err)
		}
		b, err := parseBeacon(*beacon)
		if *dir == "" || *out == "" || err != nil {
			return errors.Join(errors.New("ceremony finalize: --dir DIR, --beacon HEX and --out ZKDIR are required"), err)
		}
		return ceremonyFinalize(ctx, deps, *dir, b, *out, stdout)
	default:
		return fmt.Errorf("unknown ceremony subcommand %q\n%s", sub, ceremonyUsage)
	}
}

func parseBeacon(s string) ([]byte, error) {
	b, err := hex.DecodeString(strings.TrimPrefix(strings.TrimSpace(s), "0x"))
	if err != nil || len(b) < ceremony.MinBeacon {
		return nil, fmt.Errorf("--beacon must be at least %d bytes in hex (e.g. a drand round's randomness)", ceremony.MinBeacon)
	}
	return b, nil
}

func ceremonyInit(deps ceremonyDeps, dir string, power int, stdout io.Writer) error {
	circuits, err := deps.circuits()
	if err != nil {
		return err
	}
	need := ceremony.PowerFor(circuits)
	if power == 0 {
		power = need
	}
	if power < need {
		return fmt.Errorf("ceremony init: the largest circuit needs --power %d or more", need)
	}
	f, err := ceremony.NewPhase1(power)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("ceremony init: %w", err)
	}
	path := filepath.Join(dir, transcriptName(ceremony.KindPhase1, 0))
	if err := ceremony.WriteFile(path, f); err != nil {
		return err
	}
	for _, c := range circuits {
		fmt.Fprintf(stdout, "circuit %s: %d constraints (2^%d)\n", c.Name, c.CCS.GetNbConstraints(), c.Power())
	}
	_, err = fmt.Fprintf(stdout, "phase1 #0 %s %s\nnext: each participant runs `healthagents ceremony contribute --in` on the latest file\n", f.Hash(), path)
	return err
}

func ceremonyContribute(ctx context.Context, in, out string, stdout io.Writer) error {
	f, err := ceremony.ReadFile(in)
	if err != nil {
		return err
	}
	if out == "" {
		out = filepath.Join(filepath.Dir(in), transcriptName(f.Kind, f.Index+1))
	}
	if _, err := os.Lstat(out); err == nil {
		return fmt.Errorf("ceremony contribute: %s exists; transcript files are never overwritten", out)
	}
	next, err := ceremony.Contribute(ctx, f)
	if err != nil {
		return err
	}
	if err := ceremony.WriteFile(out, next); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s #%d %s %s\ncontribution hash (publish it; `sha256sum %s` prints the same): %s\n",
		next.Kind, next.Index, next.Hash(), out, filepath.Base(out), next.Hash())
	return err
}

// chainFiles reads the files of kind in dir, in index order.
func chainFiles(dir, kind string) ([]*ceremony.File, error) {
	paths, err := filepath.Glob(filepath.Join(dir, kind+"-[0-9][0-9][0-9][0-9].bin"))
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	return readFiles(paths)
}

func readFiles(paths []string) ([]*ceremony.File, error) {
	var out []*ceremony.File
	for _, p := range paths {
		f, err := ceremony.ReadFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// report prints one line per checked file and returns err.
// reportChain is report for verify, which passes a chain of the initial
// file alone (what a participant received before the first contribution):
// it is checked like any file, and the answer says there is no
// contribution yet.
func reportChain(stdout io.Writer, kind string, steps []ceremony.Step, err error) error {
	if !errors.Is(err, ceremony.ErrNoContribution) {
		return report(stdout, steps, err)
	}
	_ = report(stdout, steps, nil)
	fmt.Fprintf(stdout, "%s: the initial state only, well formed; no contribution yet\n", kind)
	return nil
}

func report(stdout io.Writer, steps []ceremony.Step, err error) error {
	for _, s := range steps {
		fmt.Fprintln(stdout, s.String())
	}
	return err
}

func ceremonyInitPhase2(ctx context.Context, deps ceremonyDeps, dir string, beacon []byte, stdout io.Writer) error {
	circuits, err := deps.circuits()
	if err != nil {
		return err
	}
	files, err := chainFiles(dir, ceremony.KindPhase1)
	if err != nil {
		return err
	}
	srs, steps, err := ceremony.SealPhase1(ctx, files, beacon)
	if err := report(stdout, steps, err); err != nil {
		return err
	}
	srsPath := filepath.Join(dir, srsName)
	if err := ceremony.WriteFile(srsPath, srs); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "srs #%d %s %s (beacon %s)\n", srs.Index, srs.Hash(), srsPath, srs.Beacon)
	p2, err := ceremony.NewPhase2(ctx, srs, circuits)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, transcriptName(ceremony.KindPhase2, 0))
	if err := ceremony.WriteFile(path, p2); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "phase2 #0 %s %s\nnext: each participant runs `healthagents ceremony contribute --in` on the latest phase2 file\n", p2.Hash(), path)
	return err
}

func ceremonyVerify(ctx context.Context, deps ceremonyDeps, dir string, in []string, srsPath, keysDir string, stdout io.Writer) error {
	var phase1, phase2 []*ceremony.File
	var srs *ceremony.File
	if dir != "" {
		var err error
		if phase1, err = chainFiles(dir, ceremony.KindPhase1); err != nil {
			return err
		}
		if phase2, err = chainFiles(dir, ceremony.KindPhase2); err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(dir, srsName)); err == nil {
			if srs, err = ceremony.ReadFile(filepath.Join(dir, srsName)); err != nil {
				return err
			}
		}
	}
	files, err := readFiles(in)
	if err != nil {
		return err
	}
	for i, f := range files {
		switch f.Kind {
		case ceremony.KindPhase1:
			phase1 = append(phase1, f)
		case ceremony.KindPhase2:
			phase2 = append(phase2, f)
			if srsPath == "" && srs == nil {
				srsPath = filepath.Join(filepath.Dir(in[i]), srsName)
			}
		case ceremony.KindSRS:
			srs = f
		}
	}
	if srsPath != "" {
		if srs, err = ceremony.ReadFile(srsPath); err != nil {
			return err
		}
	}
	if len(phase1) == 0 && len(phase2) == 0 {
		return errors.New("ceremony verify: no phase1 or phase2 files")
	}
	switch {
	case len(phase1) > 0 && srs != nil:
		steps, err := ceremony.VerifySRS(ctx, phase1, srs)
		if err := report(stdout, steps, err); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "srs beacon %s: check it is the value announced before the ceremony\n", srs.Beacon)
	case len(phase1) > 0:
		steps, _, err := ceremony.VerifyPhase1(ctx, phase1)
		if err := reportChain(stdout, ceremony.KindPhase1, steps, err); err != nil {
			return err
		}
	}
	if len(phase2) == 0 {
		return nil
	}
	if srs == nil {
		return errors.New("ceremony verify: phase2 files need the srs file they start from (--srs)")
	}
	circuits, err := deps.circuits()
	if err != nil {
		return err
	}
	if keysDir == "" {
		steps, err := ceremony.VerifyPhase2(ctx, srs, circuits, phase2)
		return reportChain(stdout, ceremony.KindPhase2, steps, err)
	}
	m, err := ceremony.ReadManifest(keysDir)
	if err != nil {
		return err
	}
	beacon, err := hex.DecodeString(m.Phase2Beacon)
	if err != nil {
		return fmt.Errorf("ceremony verify: %s: phase2_beacon is not hex", ceremony.ManifestFile)
	}
	keys, steps, err := ceremony.Finalize(ctx, srs, circuits, phase2, beacon)
	if err := report(stdout, steps, err); err != nil {
		return err
	}
	again, err := ceremony.NewManifest(srs, phase2, beacon, circuits, keys)
	if err != nil {
		return err
	}
	return compareKeys(stdout, keysDir, m, again)
}

// compareKeys checks that the keys under dir, and their manifest, are the
// ones the transcript gives (again).
func compareKeys(stdout io.Writer, dir string, m, again *ceremony.Manifest) error {
	if !slices.Equal(m.Phase1, again.Phase1) || !slices.Equal(m.Phase2, again.Phase2) || m.SRS != again.SRS || m.Phase1Beacon != again.Phase1Beacon {
		return fmt.Errorf("ceremony verify: %s records another transcript than the one verified", ceremony.ManifestFile)
	}
	for _, c := range again.Circuits {
		i := slices.IndexFunc(m.Circuits, func(k ceremony.CircuitKey) bool { return k.Name == c.Name })
		if i < 0 || m.Circuits[i] != c {
			return fmt.Errorf("ceremony verify: keys of the %s circuit: %s does not record the keys the transcript gives", c.Name, ceremony.ManifestFile)
		}
		raw, err := os.ReadFile(filepath.Join(dir, c.Name+".vk"))
		if err != nil {
			return fmt.Errorf("ceremony verify: %w", err)
		}
		if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != c.VKSHA256 {
			return fmt.Errorf("ceremony verify: %s.vk is not the verifying key the transcript gives", c.Name)
		}
		fmt.Fprintf(stdout, "keys %s: verifying key %s (on chain: verifyingKeyHash %s) reproduced\n", c.Name, c.VKSHA256, c.ChainVKHash)
	}
	if len(m.Circuits) != len(again.Circuits) {
		return fmt.Errorf("ceremony verify: %s lists %d circuits, the transcript %d", ceremony.ManifestFile, len(m.Circuits), len(again.Circuits))
	}
	return nil
}

func ceremonyFinalize(ctx context.Context, deps ceremonyDeps, dir string, beacon []byte, out string, stdout io.Writer) error {
	circuits, err := deps.circuits()
	if err != nil {
		return err
	}
	srs, err := ceremony.ReadFile(filepath.Join(dir, srsName))
	if err != nil {
		return err
	}
	files, err := chainFiles(dir, ceremony.KindPhase2)
	if err != nil {
		return err
	}
	if len(files) == 0 || files[0].Index != 0 {
		return fmt.Errorf("ceremony finalize: %s holds no phase2-0000.bin (run init-phase2)", dir)
	}
	keys, steps, err := ceremony.Finalize(ctx, srs, circuits, files, beacon)
	if err := report(stdout, steps, err); err != nil {
		return err
	}
	m, err := ceremony.NewManifest(srs, files, beacon, circuits, keys)
	if err != nil {
		return err
	}
	if err := deps.install(ctx, out, keys, m); err != nil {
		return err
	}
	for _, c := range m.Circuits {
		fmt.Fprintf(stdout, "keys %s: constraint system %s, verifying key %s, on chain verifyingKeyHash %s\n", c.Name, c.CCSSHA256, c.VKSHA256, c.ChainVKHash)
	}
	_, err = fmt.Fprintf(stdout, "wrote %s (%d phase-1 and %d phase-2 contributions); start the service with ZK_KEYS_DIR=%s\n",
		filepath.Join(out, ceremony.ManifestFile), len(m.Phase1)-1, len(m.Phase2)-1, out)
	return err
}
