package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/server"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
	"github.com/healthagents/healthagents/webhook"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// start runs the program and returns its output and URL.
func start(t *testing.T, args ...string) (*syncBuffer, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), out) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done)
	})
	var url string
	require.Eventually(t, func() bool {
		for _, l := range strings.Split(out.String(), "\n") {
			if u, ok := strings.CutPrefix(l, "listening on "); ok {
				url = u
				return strings.Contains(out.String(), "registered") || !contains(args, "-register")
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond)
	return out, url
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// TestRegistersAndVerifiesRealDeliveries runs the whole path: the receiver
// registers itself through the SDK with a real server, the service emits
// an event, the dispatcher delivers it signed, the receiver verifies it.
func TestRegistersAndVerifiesRealDeliveries(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)})
	ks, err := store.NewKeyStore(db)
	require.NoError(t, err)
	keys, err := apikey.New(ks)
	require.NoError(t, err)
	t.Cleanup(func() { keys.Close(context.Background()) })
	ws, err := store.NewWebhookStore(db)
	require.NoError(t, err)
	opts := []webhook.Option{webhook.AllowHTTP(), webhook.AllowLoopback()}
	reg, err := webhook.NewRegistry(ws, opts...)
	require.NoError(t, err)
	disp, err := webhook.NewDispatcher(ws, opts...)
	require.NoError(t, err)
	fk, err := cipher.GenerateKey()
	require.NoError(t, err)
	kr, err := cipher.ParseKeyring(fk)
	require.NoError(t, err)
	svc, err := healthagents.New(kr, healthagents.WithEvents(reg))
	require.NoError(t, err)
	h, err := server.New(server.Deps{Service: svc, Keys: keys, Webhooks: reg})
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	raw, _, err := keys.Create(t.Context(), apikey.CreateParams{Env: apikey.Dev})
	require.NoError(t, err)

	out, _ := start(t, "-register", ts.URL, "-api-key", raw, "-events", "eligibility.verified")
	require.NoError(t, reg.Emit(t.Context(), healthagents.Event{
		Type: healthagents.EventEligibilityVerified, PatientID: "PT-000123",
		Data: map[string]any{"coverage_percentage": 80, "requires_auth": false},
	}))
	n, err := disp.RunOnce(t.Context())
	require.NoError(t, err)
	require.Equal(t, 1, n)
	assert.Contains(t, out.String(), " eligibility.verified {\"patient_id\":\"")
	assert.Contains(t, out.String(), "\"coverage_percentage\":80,\"requires_auth\":false")
	assert.NotContains(t, out.String(), "PT-000123")
}

func TestRefusesForgeriesAndPrintsRetriesOnce(t *testing.T) {
	t.Parallel()
	const secret = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	out, url := start(t, "-secret", secret)
	body := []byte(`{"event":"prescription.validated","timestamp":"2026-11-21T10:00:00Z","data":{"patient_id":"ab","valid":true}}`)
	post := func(id string, at time.Time, sig string) int {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("webhook-id", id)
		req.Header.Set("webhook-timestamp", strconv.FormatInt(at.Unix(), 10))
		req.Header.Set("webhook-signature", sig)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	sign := func(id string, at time.Time) string {
		s, err := webhook.Sign(secret, id, at, body)
		require.NoError(t, err)
		return s
	}
	now := time.Now()
	assert.Equal(t, 204, post("msg_1", now, sign("msg_1", now)))
	assert.Equal(t, 204, post("msg_1", now, sign("msg_1", now)), "a retry is acknowledged")
	assert.Equal(t, 401, post("msg_2", now, sign("msg_1", now)), "a signature for another id")
	old := now.Add(-time.Hour)
	assert.Equal(t, 401, post("msg_3", old, sign("msg_3", old)), "a replayed old delivery")
	assert.Equal(t, 401, post("msg_4", now, "v1,AAAA"))
	assert.Equal(t, 1, strings.Count(out.String(), "prescription.validated"), out.String())
	assert.Contains(t, out.String(), "msg_1 prescription.validated {\"patient_id\":\"ab\",\"valid\":true}")
}

func TestNeedsASecret(t *testing.T) {
	t.Setenv("WEBHOOK_SECRET", "")
	err := run(t.Context(), []string{"-addr", "127.0.0.1:0"}, &bytes.Buffer{})
	assert.ErrorContains(t, err, "-secret")
}

func TestRefusesAZeroTolerance(t *testing.T) {
	t.Parallel()
	for _, tol := range []string{"0s", "-1m"} {
		err := run(t.Context(), []string{"-addr", "127.0.0.1:0", "-secret", "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", "-tolerance", tol}, &bytes.Buffer{})
		assert.ErrorContains(t, err, "-tolerance must be positive", tol)
	}
}
