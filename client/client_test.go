package client_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/client"
)

func TestNew(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		url     string
		opts    []client.Option
		wantErr string
	}{
		{"ok/plain", "http://localhost:8000", nil, ""},
		{"ok/prefix and trailing slash", "https://api.example.org/healthagents/", nil, ""},
		{"ok/all options", "http://localhost:8000", []client.Option{
			client.WithAPIKey("sk_dev_x"), client.WithHTTPClient(&http.Client{}), client.WithTimeout(time.Second),
			client.WithMaxAttempts(5), client.WithRetryBackoff(time.Millisecond, time.Second), client.WithMaxRetryWait(time.Second),
			client.WithLogger(nil), client.WithUserAgent("me/1"), client.WithHeader("X-Trace", "t"), client.WithAutoIdempotencyKeys(false),
		}, ""},
		{"fail/no scheme", "localhost:8000", nil, "base URL"},
		{"fail/ftp", "ftp://localhost", nil, "base URL"},
		{"fail/no host", "http://", nil, "base URL"},
		{"fail/user info", "http://u:p@localhost", nil, "user info"},
		{"fail/query", "http://localhost?x=1", nil, "query"},
		{"fail/idempotency key is per call", "http://localhost", []client.Option{client.WithIdempotencyKey("k")}, "per-call"},
		{"fail/response info is per call", "http://localhost", []client.Option{client.WithResponseInfo(&client.ResponseInfo{})}, "per-call"},
		{"fail/attempts 0", "http://localhost", []client.Option{client.WithMaxAttempts(0)}, "attempts"},
		{"fail/attempts 11", "http://localhost", []client.Option{client.WithMaxAttempts(11)}, "attempts"},
		{"fail/negative timeout", "http://localhost", []client.Option{client.WithTimeout(-1)}, "timeout"},
		{"fail/backoff", "http://localhost", []client.Option{client.WithRetryBackoff(time.Second, time.Millisecond)}, "backoff"},
		{"fail/nil http client", "http://localhost", []client.Option{client.WithHTTPClient(nil)}, "nil"},
		{"fail/key with newline", "http://localhost", []client.Option{client.WithAPIKey("a\nb")}, "line break"},
		{"fail/authorization header", "http://localhost", []client.Option{client.WithHeader("authorization", "x")}, "own option"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := client.New(tc.url, tc.opts...)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				assert.NotContains(t, err.Error(), "u:p", "credentials in a URL are not echoed")
				return
			}
			require.NoError(t, err)
			assert.NotNil(t, c)
		})
	}
}

func TestRequestShape(t *testing.T) {
	t.Parallel()
	s := newStub(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("X-Request-ID", "rid-1")
		w.Header().Set("X-RateLimit-Limit", "100")
		w.Header().Set("X-RateLimit-Remaining", "99")
		w.Header().Set("X-RateLimit-Reset", "1795000000")
		writeJSON(w, http.StatusOK, eligibleBody)
	})
	c := newClient(t, s.URL+"/prefix/", client.WithAPIKey("sk_dev_k1"), client.WithHeader("X-Trace", "abc"))
	var info client.ResponseInfo
	per := c.With(client.WithAPIKey("sk_dev_k2"), client.WithUserAgent("mine/2"), client.WithResponseInfo(&info))

	res, err := per.VerifyEligibility(t.Context(), testEnv, "PROC001")
	require.NoError(t, err)
	assert.Equal(t, &healthagents.EligibilityResult{
		Eligible: true, CoveragePct: 80, PrivacyPreserved: true, ProcedureCode: "PROC001",
		RequiresAuthorization: true, ZKProofVerified: true,
	}, res)
	assert.Equal(t, client.ResponseInfo{
		StatusCode: 200, RequestID: "rid-1", Attempts: 1, IdempotencyKey: info.IdempotencyKey,
		RateLimit: &client.RateLimit{Limit: 100, Remaining: 99, Reset: time.Unix(1795000000, 0)},
	}, info)

	// The parent keeps its own settings. (The stub's body decodes into any
	// struct; only the request matters here.)
	_, err = c.Status(t.Context())
	require.NoError(t, err)
	reqs := s.requests()
	require.Len(t, reqs, 2)

	post, get := reqs[0], reqs[1]
	assert.Equal(t, "POST", post.Method)
	assert.Equal(t, "/prefix/verify-eligibility", post.Path)
	assert.Equal(t, "Bearer sk_dev_k2", post.Header.Get("Authorization"))
	assert.Equal(t, "mine/2", post.Header.Get("User-Agent"))
	assert.Equal(t, "application/json", post.Header.Get("Content-Type"))
	assert.Equal(t, "abc", post.Header.Get("X-Trace"))
	assert.Equal(t, info.IdempotencyKey, post.Header.Get("Idempotency-Key"))
	assert.JSONEq(t, `{"patient_data":{"patient_id":"PT-1","encrypted_data":"gAAAA","ipfs_cid":"bafy","data_hash":"00"},"procedure_code":"PROC001"}`, string(post.Body))

	assert.Equal(t, "GET", get.Method)
	assert.Equal(t, "/prefix/status", get.Path)
	assert.Equal(t, "Bearer sk_dev_k1", get.Header.Get("Authorization"))
	assert.Equal(t, "healthagents-go/"+healthagents.Version, get.Header.Get("User-Agent"))
	assert.Empty(t, get.Header.Get("Idempotency-Key"), "GET is idempotent by itself")
	assert.Empty(t, get.Header.Get("Content-Type"))
	assert.Empty(t, get.Body)
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
	}{
		{"not JSON", "hello"},
		{"wrong type", `{"status": 5}`},
		{"empty", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStub(t, func(w http.ResponseWriter, r *http.Request, n int) {
				writeJSON(w, http.StatusOK, tc.body)
			})
			_, err := newClient(t, s.URL).Health(t.Context())
			require.ErrorContains(t, err, "decoding response")
			var ce *client.Error
			assert.NotErrorAs(t, err, &ce)
		})
	}
}

func TestWithInvalidOption(t *testing.T) {
	t.Parallel()
	s := newStub(t, func(w http.ResponseWriter, r *http.Request, n int) { writeJSON(w, http.StatusOK, healthBody) })
	c := newClient(t, s.URL)
	bad := c.With(client.WithMaxAttempts(0), client.WithAPIKey("k"))
	_, err := bad.Health(t.Context())
	require.ErrorContains(t, err, "max attempts")
	_, err = bad.With(client.WithTimeout(time.Second)).Health(t.Context())
	require.ErrorContains(t, err, "max attempts", "a client derived from an invalid one stays invalid")
	assert.Empty(t, s.requests(), "an invalid call sends nothing")
	_, err = c.Health(t.Context())
	require.NoError(t, err, "the parent is unaffected")
}

func TestLiveKeyNeedsHTTPS(t *testing.T) {
	t.Parallel()
	const live = "sk_live_0123456789_secret"
	for _, tc := range []struct {
		name, url string
		opts      []client.Option
		refused   bool
	}{
		{"fail/plain HTTP to a remote host", "http://api.example.org", nil, true},
		{"fail/plain HTTP to a private address", "http://10.1.2.3:8000", nil, true},
		{"ok/https", "https://api.example.org", nil, false},
		{"ok/loopback", "http://127.0.0.1:8000", nil, false},
		{"ok/localhost", "http://localhost:8000", nil, false},
		{"ok/IPv6 loopback", "http://[::1]:8000", nil, false},
		{"ok/behind a TLS proxy, by choice", "http://api.example.org", []client.Option{client.WithInsecureLiveKey(true)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// A transport that records whether anything was sent.
			sent := false
			hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
				sent = true
				return nil, errors.New("not sending in this test")
			})}
			c := newClient(t, tc.url, append([]client.Option{client.WithAPIKey(live), client.WithHTTPClient(hc), client.WithMaxAttempts(1)}, tc.opts...)...)
			_, err := c.Health(t.Context())
			require.Error(t, err)
			assert.Equal(t, tc.refused, errors.Is(err, client.ErrInsecureLiveKey), "%v", err)
			assert.Equal(t, !tc.refused, sent)
			assert.NotContains(t, err.Error(), "secret")
		})
	}
	// A dev key may use plain HTTP.
	s := newStub(t, func(w http.ResponseWriter, r *http.Request, n int) { writeJSON(w, http.StatusOK, healthBody) })
	_, err := newClient(t, s.URL, client.WithAPIKey("sk_dev_x")).Health(t.Context())
	require.NoError(t, err)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
