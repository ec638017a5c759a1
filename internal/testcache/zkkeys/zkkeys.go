// Package zkkeys hands tests the development Groth16 keys of zkp's
// circuits from the shared test cache (package testcache), so that a
// DATA_DIR's first start loads keys instead of running groth16.Setup.
package zkkeys

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/healthagents/healthagents/internal/testcache"
	"github.com/healthagents/healthagents/zkp"
)

// Set is zkp's circuits as a testcache.KeySet (testcache.ZKPKeys), compiled
// (zkp.CircuitDigest), built and checked (zkp.LoadOrSetup) with opts.
func Set(opts ...zkp.SystemOption) testcache.KeySet {
	digest := func(name string) (string, error) { return zkp.CircuitDigest(name, opts...) }
	return testcache.ZKPKeys(zkp.CircuitNames(), digest, func(ctx context.Context, dir string) error {
		_, err := zkp.LoadOrSetup(ctx, dir, opts...)
		return err
	})
}

var shared struct {
	once  sync.Once
	files map[string][]byte
	err   error
}

// Files returns the key files of every circuit (file name → bytes), read
// from the shared cache (and checked) once per process. The check loads
// the keys with the cache as their zkp.TableStore: the services this
// process opens on them (zkp keeps the circuits it checked) take the fast
// prover's tables from the cache instead of building them.
func Files() (map[string][]byte, error) {
	shared.once.Do(func() {
		c, err := testcache.Open()
		if err != nil {
			shared.err = err
			return
		}
		shared.files, shared.err = c.KeyFiles(context.Background(), Set(zkp.WithTableStore(c)))
	})
	if shared.err != nil {
		return nil, fmt.Errorf("zk keys from the test cache: %w", shared.err)
	}
	return shared.files, nil
}

// Write writes the keys into dir (created if need be) in the layout
// zkp.LoadOrSetup reads. A service of this process that loads them shares
// the check Files made (zkp keeps the circuits it checked).
func Write(dir string) error {
	files, err := Files()
	if err != nil {
		return err
	}
	return testcache.WriteFiles(dir, files)
}

// Into is Write for a test, which it fails on an error.
func Into(tb testing.TB, dir string) {
	tb.Helper()
	if err := Write(dir); err != nil {
		tb.Fatal(err)
	}
}

// DataDir returns a fresh DATA_DIR (a test's temporary directory) holding
// the keys under zkp/ and nothing else.
func DataDir(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	Into(tb, filepath.Join(dir, "zkp"))
	return dir
}

var other struct {
	once  sync.Once
	files map[string][]byte
	err   error
}

// OtherFiles returns a second development key pair of every circuit, set
// up independently of Files' (other toxic waste, so other verifying keys),
// from the shared cache under an entry of its own: for a test of what a
// service whose keys are not the ones a chain has bound does (a replica
// started on its own DATA_DIR), without a Groth16 set-up at every run.
func OtherFiles() (map[string][]byte, error) {
	other.once.Do(func() {
		c, err := testcache.Open()
		if err != nil {
			other.err = err
			return
		}
		ks := Set(zkp.WithTableStore(c))
		ks.Format += "/other"
		other.files, other.err = c.KeyFiles(context.Background(), ks)
	})
	if other.err != nil {
		return nil, fmt.Errorf("other zk keys from the test cache: %w", other.err)
	}
	return other.files, nil
}

// OtherDataDir is DataDir holding OtherFiles' keys.
func OtherDataDir(tb testing.TB) string {
	tb.Helper()
	files, err := OtherFiles()
	if err != nil {
		tb.Fatal(err)
	}
	dir := tb.TempDir()
	if err := testcache.WriteFiles(filepath.Join(dir, "zkp"), files); err != nil {
		tb.Fatal(err)
	}
	return dir
}
