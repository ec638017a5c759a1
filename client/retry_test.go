package client_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/client"
)

const healthBody = `{"status":"healthy","version":"0.1.0","message":"ok"}`

const eligibleBody = `{"eligible":true,"coverage_pct":80,"privacy_preserved":true,"procedure_code":"PROC001","requires_authorization":true,"zk_proof_verified":true,"reason":null}`

var testEnv = &healthagents.PatientData{PatientID: "PT-1", EncryptedData: "gAAAA", IPFSCID: "bafy", DataHash: "00"}

func TestRetryStatuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		status       int
		wantAttempts int
		wantErr      bool
	}{
		{"ok/503 twice then success", http.StatusServiceUnavailable, 3, false},
		{"ok/502 twice then success", http.StatusBadGateway, 3, false},
		{"ok/504 twice then success", http.StatusGatewayTimeout, 3, false},
		{"ok/408 twice then success", http.StatusRequestTimeout, 3, false},
		{"ok/429 twice then success", http.StatusTooManyRequests, 3, false},
		{"fail/500 is not retried", http.StatusInternalServerError, 1, true},
		{"fail/400 is not retried", http.StatusBadRequest, 1, true},
		{"fail/404 is not retried", http.StatusNotFound, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStub(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if n <= 2 {
					writeJSON(w, tc.status, `{"detail":"try later"}`)
					return
				}
				writeJSON(w, http.StatusOK, healthBody)
			})
			var info client.ResponseInfo
			c := newClient(t, s.URL).With(client.WithResponseInfo(&info))
			h, err := c.Health(t.Context())
			assert.Len(t, s.requests(), tc.wantAttempts)
			assert.Equal(t, tc.wantAttempts, info.Attempts)
			if tc.wantErr {
				var ce *client.Error
				require.ErrorAs(t, err, &ce)
				assert.Equal(t, tc.status, ce.StatusCode)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "healthy", h.Status)
			assert.Equal(t, http.StatusOK, info.StatusCode)
		})
	}
}

func TestRetryGivesUpAfterMaxAttempts(t *testing.T) {
	t.Parallel()
	s := newStub(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeJSON(w, http.StatusServiceUnavailable, `{"detail":"Service temporarily unavailable"}`)
	})
	c := newClient(t, s.URL, client.WithMaxAttempts(4))
	_, err := c.Health(t.Context())
	require.True(t, client.IsUnavailable(err), "%v", err)
	assert.Len(t, s.requests(), 4)

	_, err = c.With(client.WithMaxAttempts(1)).Health(t.Context())
	require.Error(t, err)
	assert.Len(t, s.requests(), 5, "WithMaxAttempts(1) per call makes exactly one attempt")
}

func TestRetry429HonoursRetryAfter(t *testing.T) {
	t.Parallel()
	s := newStub(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			w.Header().Set("X-RateLimit-Limit", "10")
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10))
			writeJSON(w, http.StatusTooManyRequests, `{"detail":"Rate limit exceeded. Try again in 60 seconds."}`)
			return
		}
		writeJSON(w, http.StatusOK, eligibleBody)
	})
	logs := &syncBuffer{}
	c := newClient(t, s.URL, client.WithLogger(debugLogger(logs)))
	res, err := c.VerifyEligibility(t.Context(), testEnv, "PROC001")
	require.NoError(t, err)
	assert.True(t, res.Eligible)
	reqs := s.requests()
	require.Len(t, reqs, 2)
	// Retry-After wins over the hour-away X-RateLimit-Reset, and the POST
	// was retried because it carried the same auto Idempotency-Key.
	assert.Contains(t, logs.String(), `"msg":"retrying"`)
	assert.Contains(t, logs.String(), `"wait":1000000000`)
	key := reqs[0].Header.Get("Idempotency-Key")
	assert.Len(t, key, 32)
	assert.Equal(t, key, reqs[1].Header.Get("Idempotency-Key"))
}

func TestRetryServerWaitAboveCapIsNotRetried(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		header map[string]string
	}{
		{"Retry-After seconds", map[string]string{"Retry-After": "120"}},
		{"Retry-After date", map[string]string{"Retry-After": time.Now().Add(2 * time.Hour).UTC().Format(http.TimeFormat)}},
		{"X-RateLimit-Reset", map[string]string{"X-RateLimit-Reset": strconv.FormatInt(time.Now().Add(2*time.Hour).Unix(), 10)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStub(t, func(w http.ResponseWriter, r *http.Request, n int) {
				for k, v := range tc.header {
					w.Header().Set(k, v)
				}
				writeJSON(w, http.StatusTooManyRequests, `{"detail":"Rate limit exceeded. Try again in 60 seconds."}`)
			})
			c := newClient(t, s.URL)
			_, err := c.Health(t.Context())
			require.True(t, client.IsRateLimited(err), "%v", err)
			assert.Len(t, s.requests(), 1)
			rl := client.RateLimitOf(err)
			require.NotNil(t, rl)
			if _, ok := tc.header["X-RateLimit-Reset"]; ok {
				assert.False(t, rl.Reset.IsZero())
			} else {
				assert.Greater(t, rl.RetryAfter, time.Minute)
			}
		})
	}
}

func TestRetryWaitBeyondDeadlineIsNotStarted(t *testing.T) {
	t.Parallel()
	s := newStub(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Retry-After", "30")
		writeJSON(w, http.StatusServiceUnavailable, `{"detail":"Service temporarily unavailable"}`)
	})
	c := newClient(t, s.URL, client.WithTimeout(10*time.Second))
	_, err := c.Health(t.Context())
	require.True(t, client.IsUnavailable(err), "%v", err)
	assert.Len(t, s.requests(), 1)
}

func TestRetryPOSTNeedsIdempotencyKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		opts         []client.Option
		wantAttempts int
		wantKey      string // "" none, "auto" random, else that value
	}{
		{"ok/auto key: retried", nil, 2, "auto"},
		{"fail/auto keys off: not retried", []client.Option{client.WithAutoIdempotencyKeys(false)}, 1, ""},
		{"ok/auto keys off, explicit key: retried", []client.Option{client.WithAutoIdempotencyKeys(false), client.WithIdempotencyKey("order-42")}, 2, "order-42"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStub(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if n == 1 {
					writeJSON(w, http.StatusServiceUnavailable, `{"detail":"Service temporarily unavailable"}`)
					return
				}
				writeJSON(w, http.StatusOK, eligibleBody)
			})
			c := newClient(t, s.URL).With(tc.opts...)
			_, err := c.VerifyEligibility(t.Context(), testEnv, "PROC001")
			reqs := s.requests()
			require.Len(t, reqs, tc.wantAttempts)
			if tc.wantAttempts == 1 {
				require.True(t, client.IsUnavailable(err), "%v", err)
			} else {
				require.NoError(t, err)
			}
			for _, r := range reqs {
				switch got := r.Header.Get("Idempotency-Key"); tc.wantKey {
				case "":
					assert.Empty(t, got)
				case "auto":
					assert.Equal(t, reqs[0].Header.Get("Idempotency-Key"), got)
					assert.Len(t, got, 32)
				default:
					assert.Equal(t, tc.wantKey, got)
				}
				assert.JSONEq(t, string(reqs[0].Body), string(r.Body), "every attempt sends the same body")
			}
		})
	}
}

func TestRetryContextCancelledMidBackoff(t *testing.T) {
	t.Parallel()
	answered := make(chan struct{}, 1)
	s := newStub(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Retry-After", "50")
		writeJSON(w, http.StatusServiceUnavailable, `{"detail":"Service temporarily unavailable"}`)
		answered <- struct{}{}
	})
	c := newClient(t, s.URL, client.WithTimeout(0))
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-answered
		time.Sleep(20 * time.Millisecond) // let the client read the answer and start waiting
		cancel()
	}()
	done := make(chan error, 1)
	go func() { _, err := c.Health(ctx); done <- err }()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
		var ce *client.Error
		assert.False(t, errors.As(err, &ce), "a cancelled call is not an API error")
	case <-time.After(20 * time.Second): // a hang guard, not a timing assertion: the wait was 50 s
		t.Fatal("the call kept waiting after ctx was cancelled")
	}
	assert.Len(t, s.requests(), 1)
}

func TestRetryTimeoutEndsCall(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	s := newStub(t, func(w http.ResponseWriter, r *http.Request, n int) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	c := newClient(t, s.URL, client.WithTimeout(50*time.Millisecond))
	_, err := c.Health(t.Context())
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestRetryConnectionErrors(t *testing.T) {
	t.Parallel()
	// A port nothing listens on: every attempt fails to dial.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	logs := &syncBuffer{}
	c := newClient(t, "http://"+addr, client.WithLogger(debugLogger(logs)), client.WithAutoIdempotencyKeys(false))
	var info client.ResponseInfo
	ci := c.With(client.WithResponseInfo(&info))

	_, err = ci.Health(t.Context())
	var op *net.OpError
	require.ErrorAs(t, err, &op)
	assert.Equal(t, 3, info.Attempts, "GET retried after connection errors")

	// A POST without a key is still retried when the connection never
	// opened: the request cannot have reached a server.
	_, err = ci.VerifyEligibility(t.Context(), testEnv, "PROC001")
	require.ErrorAs(t, err, &op)
	assert.Equal(t, 3, info.Attempts)
}

func TestRetryPOSTAfterConnectionDropNeedsKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		auto         bool
		wantAttempts int
	}{
		{"fail/no key: not repeated", false, 1},
		{"ok/auto key: repeated", true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStub(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if n == 1 { // the server read the request, then the connection drops
					conn, _, err := http.NewResponseController(w).Hijack()
					if err == nil {
						_ = conn.Close()
					}
					return
				}
				writeJSON(w, http.StatusOK, eligibleBody)
			})
			c := newClient(t, s.URL, client.WithAutoIdempotencyKeys(tc.auto))
			_, err := c.VerifyEligibility(t.Context(), testEnv, "PROC001")
			assert.Len(t, s.requests(), tc.wantAttempts)
			if tc.wantAttempts == 1 {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
			}
		})
	}
}
