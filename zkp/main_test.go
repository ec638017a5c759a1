package zkp

import (
	"context"
	"fmt"
	"os"
	"testing"
)

// One key set per test binary: setup is the slow part (seconds), so every
// test shares it. testKeyDir holds its files for the persistence tests.
var (
	testSys    *System
	testKeyDir string
)

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "zkp-keys-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	testKeyDir = dir
	testSys, err = LoadOrSetup(context.Background(), dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "zkp test setup:", err)
		return 1
	}
	return m.Run()
}
