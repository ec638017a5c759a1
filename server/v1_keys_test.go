package server_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/apikey"
)

// key creates a development key with p.
func (e *v1Env) key(t testing.TB, p apikey.CreateParams) string {
	t.Helper()
	p.Env = apikey.Dev
	key, _, err := e.keys.Create(t.Context(), p)
	require.NoError(t, err)
	return key
}
