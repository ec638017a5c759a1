package client_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents/client"
)

// TestPathSegmentsEscapedOnce: an id with '/', '%' or a space travels as one
// segment, escaped exactly once.
func TestPathSegmentsEscapedOnce(t *testing.T) {
	t.Parallel()
	var got []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.EscapedPath())
		w.WriteHeader(http.StatusNoContent)
	}))
	defer ts.Close()
	c, err := client.New(ts.URL+"/base", client.WithAPIKey("sk_dev_x"), client.WithMaxAttempts(1))
	require.NoError(t, err)
	require.NoError(t, c.DeletePatient(t.Context(), "PT/1 %2"))
	require.Len(t, got, 1)
	assert.Equal(t, "/base/api/v1/patients/PT%2F1%20%252", got[0])
}
