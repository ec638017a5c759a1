package server_test

import (
	"net/http"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/server"
)

// TestTimeoutIs500: no error code maps to 504, a status outside the spec's
// table, and no operation of the OpenAPI document lists it.
func TestTimeoutIs500(t *testing.T) {
	t.Parallel()
	assert.Equal(t, http.StatusInternalServerError, server.StatusOf(healthagents.CodeTimeout))
	for _, c := range []healthagents.Code{
		healthagents.CodeInvalid, healthagents.CodeUnauthorized, healthagents.CodeForbidden, healthagents.CodeNotFound,
		healthagents.CodeConflict, healthagents.CodeTooLarge, healthagents.CodeUnprocessable, healthagents.CodeRateLimited,
		healthagents.CodeInternal, healthagents.CodeUnavailable, healthagents.CodeTimeout,
	} {
		assert.NotEqual(t, http.StatusGatewayTimeout, server.StatusOf(c), c)
	}
	doc, err := os.ReadFile("testdata/openapi.json")
	require.NoError(t, err)
	assert.NotContains(t, string(doc), `"504"`)
}
