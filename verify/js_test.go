package verify_test

import (
	"errors"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/healthagents/healthagents/verify/verifytest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVerifyJS runs docs/verify.md's script (examples/verify-js, ethers and
// @iden3/js-crypto only) against a real decision: the same checks without Go.
// .ci/run installs the script's packages and sets HEALTHAGENTS_TEST_VERIFYJS;
// without it the test skips.
func TestVerifyJS(t *testing.T) {
	if os.Getenv("HEALTHAGENTS_TEST_VERIFYJS") == "" {
		t.Skip("HEALTHAGENTS_TEST_VERIFYJS unset (needs node and `npm ci` in examples/verify-js)")
	}
	dir, err := filepath.Abs("../examples/verify-js")
	require.NoError(t, err)
	f := verifytest.New(t)
	tx := f.Record(t, big.NewInt(3003))
	endpoint := f.Endpoint

	run := func(registry common.Address, tx common.Hash) (string, int) {
		cmd := exec.CommandContext(t.Context(), "node", "verify.mjs", "--rpc", endpoint, "--registry", registry.Hex(), "--tx", tx.Hex())
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return string(out), ee.ExitCode()
		}
		require.NoError(t, err, string(out))
		return string(out), 0
	}
	out, code := run(f.Gov.Address(), tx)
	assert.Equal(t, 0, code, out)
	for _, name := range []string{"receipt", "registry", "event", "inputs", "verifier", "proof", "issuer"} {
		assert.Contains(t, out, "ok   "+name, out)
	}
	assert.NotContains(t, out, "FAIL")

	out, code = run(f.Verifier, tx)
	assert.Equal(t, 1, code, out)
	assert.True(t, strings.Contains(out, "FAIL registry"), out)
}
