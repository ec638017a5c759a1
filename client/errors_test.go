package client_test

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/client"
)

func TestErrorParsing(t *testing.T) {
	t.Parallel()
	reset := time.Now().Add(time.Minute).Truncate(time.Second)
	for _, tc := range []struct {
		status int
		detail string
		header map[string]string
		code   healthagents.Code
		v1     string
		is     func(error) bool
	}{
		{400, "Eligibility check failed: Data hash mismatch", nil, healthagents.CodeInvalid, "", client.IsInvalid},
		{401, "Unauthorized: Invalid API key", nil, healthagents.CodeUnauthorized, "", client.IsUnauthorized},
		{403, "Forbidden: Insufficient permissions", nil, healthagents.CodeForbidden, "", client.IsForbidden},
		{404, "Procedure code PROC999 not found", nil, healthagents.CodeNotFound, "", client.IsNotFound},
		{404, "PATIENT_NOT_FOUND: patient PT-9 is not registered", nil, healthagents.CodeNotFound, client.V1PatientNotFound, client.IsNotFound},
		{405, "Method Not Allowed", map[string]string{"Allow": "POST"}, healthagents.CodeInvalid, "", client.IsInvalid},
		{409, "Conflict: key already rotated", nil, healthagents.CodeConflict, "", client.IsConflict},
		{413, "Request body too large: the limit is 2097152 bytes", nil, healthagents.CodeTooLarge, "", client.IsTooLarge},
		{422, "Prescription validation failed: Drug interaction detected with Warfarin", nil, healthagents.CodeUnprocessable, "", client.IsUnprocessable},
		{422, "INTERACTION_FOUND: warfarin + aspirin", nil, healthagents.CodeUnprocessable, client.V1InteractionFound, client.IsUnprocessable},
		{429, "Rate limit exceeded. Try again in 60 seconds.", map[string]string{
			"Retry-After": "120", "X-RateLimit-Limit": "10", "X-RateLimit-Remaining": "0",
			"X-RateLimit-Reset": strconv.FormatInt(reset.Unix(), 10),
		}, healthagents.CodeRateLimited, "", client.IsRateLimited},
		{500, "Eligibility check failed: ZK proof verification failed", nil, healthagents.CodeInternal, "", nil},
		{500, "NETWORK_ERROR: blockchain verification failed", nil, healthagents.CodeInternal, client.V1NetworkError, nil},
		{503, "Service temporarily unavailable", nil, healthagents.CodeUnavailable, "", client.IsUnavailable},
	} {
		t.Run(fmt.Sprintf("%d/%s", tc.status, tc.detail), func(t *testing.T) {
			t.Parallel()
			s := newStub(t, func(w http.ResponseWriter, r *http.Request, n int) {
				w.Header().Set("X-Request-ID", "req-123")
				for k, v := range tc.header {
					w.Header().Set(k, v)
				}
				writeJSON(w, tc.status, fmt.Sprintf(`{"detail":%q}`, tc.detail))
			})
			c := newClient(t, s.URL, client.WithMaxAttempts(1))
			_, err := c.VerifyEligibility(t.Context(), testEnv, "PROC001")

			var ce *client.Error
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.status, ce.StatusCode)
			assert.Equal(t, tc.code, ce.Code)
			assert.Equal(t, tc.detail, ce.Detail)
			assert.Equal(t, tc.v1, ce.V1Code)
			assert.Equal(t, tc.v1, client.V1CodeOf(err))
			assert.Equal(t, "req-123", ce.RequestID)
			assert.Equal(t, fmt.Sprintf("healthagents: %d %s", tc.status, tc.detail), err.Error())

			// The same error vocabulary as the in-process service.
			var he *healthagents.Error
			require.ErrorAs(t, err, &he)
			assert.Equal(t, tc.code, he.Code)
			assert.Equal(t, tc.detail, he.Detail)
			assert.Equal(t, tc.code, healthagents.ErrorCode(err))
			if tc.is != nil {
				assert.True(t, tc.is(err))
			}
			assert.Equal(t, tc.status == 404, client.IsNotFound(err))

			if tc.status == 429 {
				rl := ce.RateLimit
				require.NotNil(t, rl)
				assert.Equal(t, 10, rl.Limit)
				assert.Equal(t, 0, rl.Remaining)
				assert.Equal(t, reset.Unix(), rl.Reset.Unix())
				assert.Equal(t, 120*time.Second, rl.RetryAfter)
			} else {
				assert.Nil(t, ce.RateLimit)
			}
		})
	}
}

func TestErrorBodiesThatAreNotDetail(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body, contentType string
		status                  int
		want                    string
	}{
		{"html from a proxy", "<html><body>Bad Gateway</body></html>", "text/html", 502, "Bad Gateway"},
		{"plain text", "upstream connect error", "text/plain", 502, "upstream connect error"},
		{"empty", "", "", 500, "Internal Server Error"},
		{"other JSON", `{"error":"x"}`, "application/json", 400, "Bad Request"},
		{"detail not a string", `{"detail":[{"loc":["body"]}]}`, "application/json", 422, "Unprocessable Entity"},
		{"unknown status", "", "", 599, "HTTP 599"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStub(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if tc.contentType != "" {
					w.Header().Set("Content-Type", tc.contentType)
				}
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			})
			c := newClient(t, s.URL, client.WithMaxAttempts(1))
			_, err := c.Status(t.Context())
			var ce *client.Error
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.want, ce.Detail)
			assert.Equal(t, tc.status, ce.StatusCode)
		})
	}
}

func TestErrorHelpersOnInProcessErrors(t *testing.T) {
	t.Parallel()
	inProc := fmt.Errorf("wrapped: %w", healthagents.Errorf(healthagents.CodeNotFound, "Drug code X not found"))
	assert.True(t, client.IsNotFound(inProc))
	assert.False(t, client.IsRateLimited(inProc))
	assert.Nil(t, client.RateLimitOf(inProc))
	assert.Equal(t, client.V1PatientNotFound, client.V1CodeOf(healthagents.Errorf(healthagents.CodeNotFound, "PATIENT_NOT_FOUND: x")))
	assert.False(t, client.IsNotFound(errors.New("plain")))
	assert.False(t, client.IsNotFound(nil))
}

func TestErrorNeverCarriesAPIKey(t *testing.T) {
	t.Parallel()
	const key = "sk_dev_secretsecretsecret"
	s := newStub(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeJSON(w, 401, `{"detail":"Unauthorized: Invalid API key"}`)
	})
	logs := &syncBuffer{}
	c := newClient(t, s.URL, client.WithAPIKey(key), client.WithLogger(debugLogger(logs)))
	_, err := c.Health(t.Context())
	require.True(t, client.IsUnauthorized(err))
	assert.Equal(t, "Bearer "+key, s.requests()[0].Header.Get("Authorization"))
	assert.NotContains(t, err.Error(), key)
	assert.NotContains(t, logs.String(), key)
	assert.NotEmpty(t, logs.String())
}
