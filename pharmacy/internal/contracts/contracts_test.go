package contracts

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// hashSources mirrors compile-pharmacy.js: sha256 over, per file, its name,
// a NUL, its bytes, a NUL.
func hashSources(t *testing.T) string {
	t.Helper()
	h := sha256.New()
	for _, name := range []string{"PharmacyOracle.sol", "compile-pharmacy.js", "package.json"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "contracts", name))
		require.NoError(t, err)
		h.Write([]byte(name))
		h.Write([]byte{0})
		h.Write(b)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestArtifactsCurrent fails when the Solidity source or the compile script
// changed without `go generate ./pharmacy/...`.
func TestArtifactsCurrent(t *testing.T) {
	t.Parallel()
	require.Equal(t, hashSources(t), SourcesSHA256, "run go generate ./pharmacy/...")
	a, err := PharmacyOracleABI()
	require.NoError(t, err)
	for _, m := range []string{"attest", "availability", "setWriter", "keyOf", "owner", "writers"} {
		require.Contains(t, a.Methods, m)
	}
	code, err := PharmacyOracleBytecode()
	require.NoError(t, err)
	require.NotEmpty(t, code)
	require.Equal(t, "paris", EVMVersion)
}
