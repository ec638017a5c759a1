package zkp

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/healthagents/healthagents/internal/testcache"
)

// One key set per test run, from the test cache shared with the other
// packages' tests (set-up is the slow part): every test shares it. testKeyDir holds its files for the persistence tests.
var (
	testSys    *System
	testKeyDir string
)

// keyDirEnv passes the key directory of a test run to the fuzzing worker
// processes it starts (they inherit the environment and run TestMain too), so
// they load the keys instead of running their own set-up.
const keyDirEnv = "HEALTHAGENTS_TEST_ZKP_KEYS"

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	ctx := context.Background()
	// The keys and the fast prover's tables come from the test cache (the
	// tables are checked against the keys on load; TestTablesRoundTrip
	// compares them with a fresh computation).
	cache, err := testcache.Open()
	if err != nil {
		fmt.Fprintln(os.Stderr, "zkp test cache:", err)
		return 1
	}
	dir := os.Getenv(keyDirEnv)
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "zkp-keys-*"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		if err := os.Setenv(keyDirEnv, dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := cachedKeys(ctx, dir, cache); err != nil {
			fmt.Fprintln(os.Stderr, "zkp test keys:", err)
			return 1
		}
	}
	testKeyDir = dir
	testSys, err = LoadOrSetup(ctx, dir, WithTableStore(cache))
	if err != nil {
		fmt.Fprintln(os.Stderr, "zkp test setup:", err)
		return 1
	}
	return m.Run()
}

// cachedKeys writes the keys of every circuit into dir from the test cache
// (package testcache; internal/testcache/zkkeys does the same for the other
// packages, which may import zkp), setting up and storing the circuits the
// cache misses.
func cachedKeys(ctx context.Context, dir string, c *testcache.Cache) error {
	digest := func(name string) (string, error) { return CircuitDigest(name, WithTableStore(c)) }
	files, err := c.KeyFiles(ctx, testcache.ZKPKeys(CircuitNames(), digest, func(ctx context.Context, dir string) error {
		_, err := LoadOrSetup(ctx, dir, WithTableStore(c))
		return err
	}))
	if err != nil {
		return err
	}
	return testcache.WriteFiles(dir, files)
}
