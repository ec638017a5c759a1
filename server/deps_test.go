package server_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/internal/depcheck"
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
	deps := depcheck.Deps(t, pkg)
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
	depcheck.Forbid(t, pkg, deps, forbidden)
}
