package contracts_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/chain/internal/contracts"
)

// hashSources mirrors sourcesHash in contracts/compile.js.
func hashSources(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	for _, name := range []string{"Groth16Verifier.sol", "GovernedRegistry.sol", "compile.js", "package.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		h.Write([]byte(name))
		h.Write([]byte{0})
		h.Write(b)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestGeneratedIsCurrent fails when the Solidity sources or the compile
// settings changed after the bindings were generated: run
// `go generate ./chain/...` and commit.
func TestGeneratedIsCurrent(t *testing.T) {
	t.Parallel()
	got := hashSources(t, filepath.Join("..", "..", "..", "contracts"))
	assert.Equal(t, contracts.SourcesSHA256, got, "contracts/*.sol changed: run go generate ./chain/... and commit the result")
}

// TestBindingsMatchArtifacts checks that the abigen bindings embed the
// bytecode that compile.js wrote.
func TestBindingsMatchArtifacts(t *testing.T) {
	t.Parallel()
	for name, bin := range map[string]string{
		"Groth16Verifier": contracts.Groth16VerifierMetaData.Bin,
	} {
		raw, err := os.ReadFile(name + ".bin")
		require.NoError(t, err)
		assert.Equal(t, "0x"+strings.TrimSpace(string(raw)), bin, name)
	}
	assert.Equal(t, "paris", contracts.EVMVersion)
}
