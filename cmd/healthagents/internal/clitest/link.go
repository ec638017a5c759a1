package clitest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/healthagents/healthagents/internal/testcache"
)

// linkFormat names the binaries' layout in the test cache and what their
// keys hash; a change to either changes it.
const linkFormat = "healthagents-test-binary/v2"

// linkFlags are the flags of every link: the Dockerfile's, but for
// -trimpath. The binary is named by its sources' content, not by where they
// are checked out, so a checkout with the same sources gets the binary
// another one linked (and the same Go build ID, which names its compiled
// circuits in the test cache) whether or not the paths in it are trimmed;
// without -trimpath, go build reuses the packages go test compiled for the
// test binaries instead of compiling every package a second time, with
// other action IDs, after each change of the sources. -buildvcs=false
// keeps the commit out of the binary.
var linkFlags = []string{"-buildvcs=false", "-ldflags=-s -w"}

// buildEnv is what `go env` reports that changes what a CGO_ENABLED=0
// build of the same sources links: the toolchain, the target and its
// architecture levels, experiments and GOFLAGS (tags, -ldflags, -mod).
var buildEnv = []string{"GOVERSION", "GOROOT", "GOOS", "GOARCH", "GOAMD64", "GOARM", "GOARM64", "GO386",
	"GOMIPS", "GOMIPS64", "GOPPC64", "GORISCV64", "GOWASM", "GOEXPERIMENT", "GOFLAGS", "GOFIPS140"}

// keepBinaries is how many binaries of a package Link keeps beside the
// one it hands out, at the least; binaryIdle is how long an older one
// must have gone unused before it is deleted (a test run that was handed
// it may still start processes of it).
const (
	keepBinaries = 4
	binaryIdle   = time.Hour
)

// Link links the main package pkg of the module in root with
// CGO_ENABLED=0 and linkFlags, into the cache, and returns the binary's
// path. The binary is named by its sources' content (SourceKey): a checkout
// whose sources are the same as one linked before, in any directory, gets
// that binary without a link, and any change to what the binary is built
// from (a non-test Go file or embedded file of any package it links from
// outside the module cache, a module version, go.mod or go.sum, the
// toolchain or the build environment) names another one, linked anew.
// A binary is linked to a temporary name and renamed into place, under
// the cache's lock of the package, and its SHA-256 recorded beside it is
// checked at every hand-out (a binary that does not match is linked again).
// Binaries of pkg beyond the keepBinaries most recently handed out are
// deleted once unused for binaryIdle.
func Link(c *testcache.Cache, root, pkg string) (string, error) {
	key, name, err := SourceKey(root, pkg)
	if err != nil {
		return "", err
	}
	// binaries/<package>/<sources>/<name>; a package's binaries are
	// linked, checked and pruned under one lock.
	pkgKey := testcache.Key([]byte(linkFormat), []byte(pkg))[:16]
	base := filepath.Join(c.Dir(), "binaries", pkgKey)
	unlock, err := c.Lock("binary-" + pkgKey)
	if err != nil {
		return "", err
	}
	defer unlock()
	dir := filepath.Join(base, key[:32])
	path := filepath.Join(dir, name)
	if sum := readSum(path); sum != "" && sumFile(path) == sum {
		touch(dir)
		prune(base, dir)
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, ".link-*")
	if err != nil {
		return "", err
	}
	_ = tmp.Close()
	defer os.Remove(tmp.Name())
	args := append(append([]string{"build"}, linkFlags...), "-o", tmp.Name(), pkg)
	cmd := exec.Command("go", args...)
	cmd.Dir, cmd.Env = root, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w\n%s", err, out)
	}
	sum := sumFile(tmp.Name())
	if sum == "" {
		return "", fmt.Errorf("reading the binary go build wrote for %s", pkg)
	}
	// The binary first, then its digest: a binary without a matching
	// digest beside it is never handed out. Renaming never writes into a
	// file a process may be running.
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", err
	}
	if err := os.WriteFile(path+".sha256", []byte(sum+"\n"), 0o600); err != nil {
		return "", err
	}
	touch(dir)
	prune(base, dir)
	return path, nil
}

// SourceKey names what a CGO_ENABLED=0 link of the main package pkg of the
// module in root is made from (see Link): linkFormat, linkFlags, buildEnv's
// values, and every package the binary links (`go list -deps`) by its
// import path with either its module's path and version (a module in the
// module cache, whose content the go command checks against go.sum) or,
// for any other (this module's, a replace by a directory, a vendored
// copy), the names and contents of its Go, assembly, syso and embedded
// files and its module's go.mod; the standard library is the toolchain's.
// Test files are not read: they are not in the binary. The checkout's
// directory is not in the key. name is the last element of pkg's import
// path, the binary's name.
func SourceKey(root, pkg string) (key, name string, err error) {
	env, err := goEnv(root, append(slices.Clone(buildEnv), "GOMODCACHE")...)
	if err != nil {
		return "", "", err
	}
	h := sha256.New()
	field := func(parts ...string) {
		for _, p := range parts {
			fmt.Fprintf(h, "%d:%s", len(p), p)
		}
		h.Write([]byte{'\n'})
	}
	field(linkFormat, pkg)
	field(linkFlags...)
	field("CGO_ENABLED=0")
	for _, v := range buildEnv {
		field(v, env[v])
	}
	if strings.Contains(env["GOFLAGS"], "-overlay") {
		// The overlay's files replace sources the key would read. A link
		// of its own every time, never shared.
		field("overlay", fmt.Sprint(time.Now().UnixNano(), os.Getpid()))
	}
	fields := "ImportPath,Dir,Standard,Module,GoFiles,CgoFiles,CFiles,CXXFiles,MFiles,HFiles,FFiles,SFiles,SwigFiles,SwigCXXFiles,SysoFiles,EmbedFiles,Error,DepsErrors"
	cmd := exec.Command("go", "list", "-deps", "-json="+fields, pkg)
	cmd.Dir, cmd.Env = root, append(os.Environ(), "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", "", fmt.Errorf("go list -deps %s: %w\n%s", pkg, err, stderr.Bytes())
	}
	modCache := filepath.Clean(env["GOMODCACHE"]) + string(filepath.Separator)
	goMods := map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return "", "", fmt.Errorf("go list -deps %s: %w", pkg, err)
		}
		if p.Error != nil || len(p.DepsErrors) > 0 {
			return "", "", fmt.Errorf("go list -deps %s: %s does not load", pkg, p.ImportPath)
		}
		name = path.Base(p.ImportPath) // the last one is pkg
		if p.Standard {
			field("std", p.ImportPath)
			continue
		}
		m := p.Module
		if m == nil {
			return "", "", fmt.Errorf("go list -deps %s: %s is in no module", pkg, p.ImportPath)
		}
		if m.Version != "" && !m.Main && strings.HasPrefix(p.Dir, modCache) && (m.Replace == nil || m.Replace.Version != "") {
			repl := ""
			if m.Replace != nil {
				repl = m.Replace.Path + "@" + m.Replace.Version
			}
			field("module", p.ImportPath, m.Path+"@"+m.Version, repl)
			continue
		}
		field("source", p.ImportPath, m.Path, m.Version, m.GoVersion)
		if m.GoMod != "" && !goMods[m.GoMod] {
			goMods[m.GoMod] = true
			// Its go.mod and go.sum (the go line, the versions and
			// replacements of every module the build takes).
			for _, f := range []string{m.GoMod, strings.TrimSuffix(m.GoMod, ".mod") + ".sum"} {
				b, err := os.ReadFile(f)
				if err != nil && !errors.Is(err, fs.ErrNotExist) {
					return "", "", err
				}
				field("modfile", filepath.Base(f), string(b))
			}
		}
		for _, list := range [][]string{p.GoFiles, p.CgoFiles, p.CFiles, p.CXXFiles, p.MFiles, p.HFiles, p.FFiles,
			p.SFiles, p.SwigFiles, p.SwigCXXFiles, p.SysoFiles, p.EmbedFiles} {
			for _, name := range list {
				b, err := os.ReadFile(filepath.Join(p.Dir, name))
				if err != nil {
					return "", "", err
				}
				field("file", filepath.ToSlash(name), string(b))
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)), name, nil
}

// listedPackage is what SourceKey reads of `go list -json`.
type listedPackage struct {
	ImportPath, Dir string
	Standard        bool
	Module          *struct {
		Path, Version, GoMod, GoVersion string
		Main                            bool
		Replace                         *struct{ Path, Version string }
	}
	GoFiles, CgoFiles, CFiles, CXXFiles, MFiles, HFiles, FFiles, SFiles []string
	SwigFiles, SwigCXXFiles, SysoFiles, EmbedFiles                      []string
	Error                                                               *struct{ Err string }
	DepsErrors                                                          []struct{ Err string }
}

// goEnv returns the values of the go command's variables vars, as a build
// in root sees them.
func goEnv(root string, vars ...string) (map[string]string, error) {
	cmd := exec.Command("go", append([]string{"env", "-json"}, vars...)...)
	cmd.Dir, cmd.Env = root, append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	env := map[string]string{}
	if err := json.Unmarshal(out, &env); err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	return env, nil
}

// sumFile is the hex SHA-256 of the file at path, "" if it cannot be read.
func sumFile(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// readSum is the digest recorded beside the binary at path, "" if none.
func readSum(path string) string {
	b, err := os.ReadFile(path + ".sha256")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// touch marks dir as just handed out (its modification time).
func touch(dir string) {
	now := time.Now()
	_ = os.Chtimes(dir, now, now)
}

// prune deletes the binaries in base (one package's) beyond the
// keepBinaries most recently handed out that have gone unused for
// binaryIdle, never keep. The caller holds the package's lock.
func prune(base, keep string) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	type bin struct {
		dir  string
		used time.Time
	}
	var bins []bin
	for _, e := range entries {
		dir := filepath.Join(base, e.Name())
		if !e.IsDir() || dir == keep {
			continue
		}
		if info, err := e.Info(); err == nil {
			bins = append(bins, bin{dir, info.ModTime()})
		}
	}
	slices.SortFunc(bins, func(a, b bin) int { return b.used.Compare(a.used) })
	for i, b := range bins {
		if i < keepBinaries-1 || time.Since(b.used) < binaryIdle {
			continue
		}
		_ = os.RemoveAll(b.dir)
	}
}
