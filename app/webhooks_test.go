package app_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/app"
	"github.com/healthagents/healthagents/client"
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

// TestDevelopmentModeWarnsAndWebhooksKeepTheKeySealed opens the service the
// way `go run ./cmd/healthagents` does (HEALTHAGENTS_ENV unset) and checks:
//   - a warning at startup names what development mode allows and how to
//     leave it;
//   - it does allow a loopback http:// receiver, which gets the event of an
//     eligibility check, with data.patient_id the account's pseudonym derived
//     from the audit log's patient_ref;
//   - the pseudonym key the two share is kept sealed in the database.
func TestDevelopmentModeWarnsAndWebhooksKeepTheKeySealed(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dataDir := keyedDir(t)
	cfg, err := app.ConfigFromEnv(func(k string) string { return map[string]string{"DATA_DIR": dataDir}[k] })
	require.NoError(t, err)
	require.False(t, cfg.Production, "unset HEALTHAGENTS_ENV stays development")
	var logs syncBuffer
	a, err := app.OpenWithOutput(ctx, cfg, slog.New(slog.NewJSONHandler(&logs, nil)), io.Discard)
	require.NoError(t, err)
	defer a.Close()

	var warning string
	sc := bufio.NewScanner(strings.NewReader(logs.String()))
	for sc.Scan() {
		var l struct{ Level, Msg string }
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l))
		if l.Level == "WARN" && strings.Contains(l.Msg, "DEVELOPMENT MODE") {
			warning = l.Msg
		}
	}
	require.NotEmpty(t, warning, "a development-mode warning at startup: %s", logs.String())
	for _, s := range []string{"http://", "loopback", "sk_dev_", "bootstrap", "HEALTHAGENTS_ENV=production"} {
		assert.Contains(t, warning, s)
	}

	ts := httptest.NewServer(a.Handler)
	defer ts.Close()
	bodies := make(chan []byte, 4)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- b
	}))
	defer rc.Close()
	key, _, err := a.Keys.Create(ctx, apikey.CreateParams{Env: apikey.Dev, Organization: "dev-clinic"})
	require.NoError(t, err)
	c, err := client.New(ts.URL, client.WithAPIKey(key), client.WithMaxAttempts(1))
	require.NoError(t, err)
	_, err = c.CreateWebhook(ctx, rc.URL+"/hook", []string{healthagents.EventEligibilityVerified})
	require.NoError(t, err, "development accepts a loopback http:// receiver")
	env := sealed(t, a, nil)
	_, err = c.VerifyEligibility(ctx, env, "70551")
	require.NoError(t, err)

	var body []byte
	select {
	case body = <-bodies:
	case <-time.After(30 * time.Second):
		t.Fatal("no delivery")
	}
	var p struct {
		Data struct {
			PatientID string `json:"patient_id"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(body, &p))
	ref, err := a.Audit.PatientRef(ctx, env.PatientID)
	require.NoError(t, err)
	assert.Equal(t, webhook.OwnerPseudonym(ref, "org:dev-clinic"), p.Data.PatientID)

	var stored string
	require.NoError(t, a.DB.SQL().QueryRowContext(ctx, `SELECT value FROM webhook_settings WHERE name = 'pseudonym_key'`).Scan(&stored))
	assert.True(t, strings.HasPrefix(stored, "sealed:"), "the pseudonym key is sealed at rest")
}
