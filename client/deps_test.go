package client_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/internal/depcheck"
)

// TestDependencies keeps the SDK and the wire types light: a program
// importing client (or api, the wire types it shares with the server) must
// not pull in the server, storage, proofs, chain or their heavy modules.
func TestDependencies(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs go list")
	}
	for _, pkg := range []string{"github.com/healthagents/healthagents/client", "github.com/healthagents/healthagents/api"} {
		checkDependencies(t, pkg)
	}
}

func checkDependencies(t *testing.T, pkg string) {
	deps := depcheck.Deps(t, pkg)
	if strings.HasSuffix(pkg, "/client") {
		require.Contains(t, deps, "github.com/hashicorp/go-retryablehttp", "sanity: the list is the client's")
		require.Contains(t, deps, "github.com/healthagents/healthagents/api", "the SDK uses the shared wire types")
	}
	forbidden := []string{
		"github.com/healthagents/healthagents/server",
		"github.com/healthagents/healthagents/app",
		"github.com/healthagents/healthagents/store",
		"github.com/healthagents/healthagents/zkp",
		"github.com/healthagents/healthagents/chain",
		"github.com/healthagents/healthagents/attest",
		"github.com/healthagents/healthagents/apikey",
		"github.com/healthagents/healthagents/webhook",
		"github.com/healthagents/healthagents/ratelimit",
		"github.com/consensys/",
		"github.com/ethereum/",
		"modernc.org/",
		"github.com/jackc/",
		"github.com/redis/",
		"database/sql",
	}
	// database/sql/driver holds interfaces only (iden3's babyjub, under the
	// coverage credentials, implements driver.Valuer): no driver, no pool.
	depcheck.Forbid(t, pkg, deps, forbidden, "database/sql/driver")
}
