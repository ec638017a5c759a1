package server_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServerIsLight: a program importing only server (to mount the API with
// its own Deps) links no chain, proof or Redis code: go-ethereum, gnark and
// go-redis, and the packages built on them (chain, zkp, attest, issuers,
// ratelimit/redisstore), come in through app or the caller's Deps.
func TestServerIsLight(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs go list")
	}
	const pkg = "github.com/healthagents/healthagents/server"
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", pkg).CombinedOutput()
	require.NoError(t, err, "%s", out)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, pkg, "sanity: the list is the package's")
	require.Contains(t, deps, "github.com/healthagents/healthagents/ratelimit", "sanity: the list is the server's")
	forbidden := []string{
		"github.com/ethereum/",
		"github.com/consensys/",
		"github.com/redis/",
		"github.com/healthagents/healthagents/chain",
		"github.com/healthagents/healthagents/zkp",
		"github.com/healthagents/healthagents/attest",
		"github.com/healthagents/healthagents/issuers",
		"github.com/healthagents/healthagents/ratelimit/redisstore",
		"github.com/healthagents/healthagents/app",
	}
	for _, d := range deps {
		for _, f := range forbidden {
			if d == f || strings.HasPrefix(d, strings.TrimSuffix(f, "/")+"/") {
				t.Errorf("server depends on %s", d)
			}
		}
	}
}
