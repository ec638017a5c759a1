package e2e

import (
	"os"
	"testing"

	"github.com/healthagents/healthagents/cmd/healthagents/internal/clitest"
)

// TestMain removes the binary clitest.Binary built.
func TestMain(m *testing.M) {
	code := m.Run()
	clitest.RemoveBinary()
	os.Exit(code)
}
