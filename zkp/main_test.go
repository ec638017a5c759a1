package zkp

import (
	"context"
	"fmt"
	"os"
	"testing"
)

// One key set per test run: set-up is the slow part (seconds), so every test
// shares it. testKeyDir holds its files for the persistence tests.
var (
	testSys    *System
	testKeyDir string
)

// keyDirEnv passes the key directory of a test run to the fuzzing worker
// processes it starts (they inherit the environment and run TestMain too), so
// they load the keys instead of running their own set-up.
const keyDirEnv = "HEALTHAGENTS_ZKP_TEST_KEYS"

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
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
	}
	testKeyDir = dir
	var err error
	testSys, err = LoadOrSetup(context.Background(), dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "zkp test setup:", err)
		return 1
	}
	return m.Run()
}
