package app_test

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/trust"
)

// TestSelfIssuerAtStart: under the default COVERAGE_TRUST=self the service's
// own issuer key is kept in DATA_DIR/issuer.key (0600) and registered on the
// embedded chain by its owner, whose generated key DATA_DIR/chain/owner.key
// (0600) is not the submitting key; /status names the policy and the key hash.
func TestSelfIssuerAtStart(t *testing.T) {
	t.Parallel()
	a := shared(t)
	require.NotNil(t, a.Trust)
	assert.Equal(t, trust.Self, a.Trust.Mode())
	for _, f := range []string{"issuer.key", filepath.Join("chain", "owner.key")} {
		fi, err := os.Stat(filepath.Join(sharedDir, f))
		require.NoError(t, err, f)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), f)
	}
	assert.True(t, a.Ledger.HoldsOwnerKey())
	assert.NotEqual(t, a.Ledger.Account(), a.Ledger.Owner())
	active, err := a.Ledger.Governed().IsIssuerActive(t.Context(), a.Trust.SelfKeyHash(), nil)
	require.NoError(t, err)
	assert.True(t, active, "the self issuer is registered on chain")
	ok, err := a.Ledger.Governed().IsSubmitter(t.Context(), a.Ledger.Account())
	require.NoError(t, err)
	assert.True(t, ok)

	ts := httptest.NewServer(a.Handler)
	defer ts.Close()
	_, status := getJSON(t, ts.URL+"/status")
	assert.Equal(t, "self", status["issuer"])
	assert.Equal(t, a.Trust.SelfKeyHash().String(), status["self_issuer_key_hash"])
}

// TestRegisteredTrustRefusesDevelopmentKeys: COVERAGE_TRUST=registered
// needs ceremony keys; the single-party development keys refuse the start.
func TestRegisteredTrustRefusesDevelopmentKeys(t *testing.T) {
	_, err := app.OpenWithOutput(t.Context(), app.Config{DataDir: keyedDir(t), CoverageTrust: trust.Registered}, slog.New(slog.DiscardHandler), io.Discard)
	require.ErrorContains(t, err, "COVERAGE_TRUST=registered refuses development ZK keys")
	require.ErrorContains(t, err, "ZK_KEYS_DIR")
}
