package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/api"
	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/server"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/store/storetest"
	"github.com/healthagents/healthagents/webhook"
)

// hookReceiver records the deliveries it gets.
type hookReceiver struct {
	*httptest.Server
	mu  sync.Mutex
	got []*http.Request
	bod [][]byte
}

func newHookReceiver(t *testing.T) *hookReceiver {
	rc := &hookReceiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got, rc.bod = append(rc.got, r), append(rc.bod, b)
		rc.mu.Unlock()
	}))
	t.Cleanup(rc.Close)
	return rc
}

func TestWebhooksOverHTTP(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		ctx := t.Context()
		ks, err := store.NewKeyStore(db)
		require.NoError(t, err)
		keys, err := apikey.New(ks, apikey.WithAdminToken(adminToken))
		require.NoError(t, err)
		t.Cleanup(func() { keys.Close(context.Background()) })
		ws, err := store.NewWebhookStore(db)
		require.NoError(t, err)
		hookOpts := []webhook.Option{webhook.AllowHTTP(), webhook.AllowLoopback(), webhook.WithTenants()}
		reg, err := webhook.NewRegistry(ws, hookOpts...)
		require.NoError(t, err)
		disp, err := webhook.NewDispatcher(ws, hookOpts...)
		require.NoError(t, err)
		fk, err := cipher.GenerateKey()
		require.NoError(t, err)
		kr, err := cipher.ParseKeyring(fk)
		require.NoError(t, err)
		svc, err := healthagents.New(kr, healthagents.WithEvents(reg),
			healthagents.WithClock(func() time.Time { return time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC) }))
		require.NoError(t, err)
		h, err := server.New(server.Deps{Service: svc, Keys: keys, Webhooks: reg})
		require.NoError(t, err)
		ts := httptest.NewServer(h)
		t.Cleanup(ts.Close)
		srv := &keyServer{url: ts.URL, keys: keys}

		keyA, _ := srv.create(t, api.CreateKeyRequest{Organization: "clinic-a"})
		keyB, _ := srv.create(t, api.CreateKeyRequest{Organization: "clinic-b"})
		noScope, _ := srv.create(t, api.CreateKeyRequest{Scopes: []string{"eligibility"}})
		rc := newHookReceiver(t)
		body := map[string]any{"url": rc.URL + "/hook", "events": []string{"eligibility.verified"}}

		assert.Equal(t, 401, srv.call(t, "POST", "/webhooks", "", body).status)
		assert.Equal(t, 403, srv.call(t, "POST", "/webhooks", noScope, body).status)
		for name, bad := range map[string]map[string]any{
			"unknown event":   {"url": rc.URL, "events": []string{"patient.deleted"}},
			"private address": {"url": "http://10.0.0.1/hook", "events": []string{"eligibility.verified"}},
			"metadata":        {"url": "http://169.254.169.254/", "events": []string{"eligibility.verified"}},
			"missing url":     {"events": []string{"eligibility.verified"}},
			"missing events":  {"url": rc.URL},
		} {
			r := srv.call(t, "POST", "/webhooks", keyA, bad)
			assert.Equal(t, 400, r.status, "%s: %v", name, r.body)
		}

		r := srv.call(t, "POST", "/webhooks", keyA, body)
		require.Equal(t, 201, r.status, r.body)
		id, secret := r.body["id"].(string), r.body["secret"].(string)
		assert.Regexp(t, `^whsec_`, secret)
		assert.Equal(t, "active", r.body["status"])

		r = srv.call(t, "GET", "/webhooks", keyA, nil)
		require.Equal(t, 200, r.status)
		assert.EqualValues(t, 1, r.body["total"])
		assert.EqualValues(t, 10, r.body["limit"])
		assert.NotContains(t, r.body["webhooks"].([]any)[0], "secret", "the secret is shown once")
		assert.EqualValues(t, 0, srv.call(t, "GET", "/webhooks", keyB, nil).body["total"])
		assert.Equal(t, 400, srv.call(t, "GET", "/webhooks?limit=101", keyA, nil).status)
		assert.Equal(t, 400, srv.call(t, "GET", "/webhooks?offset=-1", keyA, nil).status)
		assert.Equal(t, 200, srv.call(t, "GET", "/webhooks/"+id, keyA, nil).status)
		assert.Equal(t, 404, srv.call(t, "GET", "/webhooks/"+id, keyB, nil).status, "another owner's endpoint does not exist for them")

		// A decision made with key A reaches A's endpoint, signed; an
		// anonymous one and one made with key B do not.
		env, err := cipher.Seal("PT-000123", mustRecord(t), kr)
		require.NoError(t, err)
		req := map[string]any{"patient_data": env, "procedure_code": "PROC001"}
		require.Equal(t, 200, srv.call(t, "POST", "/verify-eligibility", keyA, req).status)
		require.Equal(t, 200, srv.call(t, "POST", "/verify-eligibility", "", req).status)
		require.Equal(t, 200, srv.call(t, "POST", "/verify-eligibility", keyB, req).status)
		n, err := disp.RunOnce(ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		rc.mu.Lock()
		require.Len(t, rc.got, 1)
		ev, err := client.ParseWebhook(secret, rc.got[0].Header, rc.bod[0])
		rc.mu.Unlock()
		require.NoError(t, err)
		assert.Equal(t, "eligibility.verified", ev.Event)
		var data map[string]any
		require.NoError(t, json.Unmarshal(ev.Data, &data))
		assert.Len(t, data["patient_id"], 64)
		assert.NotContains(t, string(ev.Data), "PT-000123")
		assert.Contains(t, data, "coverage_percentage")
		assert.Contains(t, data, "requires_auth")

		r = srv.call(t, "GET", "/webhooks/"+id+"/deliveries", keyA, nil)
		require.Equal(t, 200, r.status)
		atts := r.body["attempts"].([]any)
		require.Len(t, atts, 1)
		assert.Equal(t, "delivered", atts[0].(map[string]any)["result"])
		assert.Equal(t, ev.ID, atts[0].(map[string]any)["message_id"])

		assert.Equal(t, 404, srv.call(t, "DELETE", "/webhooks/"+id, keyB, nil).status)
		assert.Equal(t, 200, srv.call(t, "DELETE", "/webhooks/"+id, keyA, nil).status)
		assert.Equal(t, 404, srv.call(t, "GET", "/webhooks/"+id, keyA, nil).status)
	})
}

func TestWebhookRoutesWithoutARegistryAnswer503(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)})
	ks := newKeyServer(t, db, keyServerOpts{noLimiter: true})
	key, _ := ks.create(t, api.CreateKeyRequest{})
	assert.Equal(t, 503, ks.call(t, "GET", "/webhooks", key, nil).status)
}

func mustRecord(t *testing.T) []byte {
	t.Helper()
	b, err := baseRecord().Marshal()
	require.NoError(t, err)
	return b
}

// webhookServer is a server with a webhook registry over db whose clock
// moves a millisecond per reading, so endpoints have distinct creation
// times.
func webhookServer(t *testing.T, db *store.DB) *keyServer {
	t.Helper()
	ws, err := store.NewWebhookStore(db)
	require.NoError(t, err)
	var mu sync.Mutex
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	reg, err := webhook.NewRegistry(ws, webhook.AllowHTTP(), webhook.AllowLoopback(), webhook.WithClock(func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Millisecond)
		return now
	}))
	require.NoError(t, err)
	return newKeyServer(t, db, keyServerOpts{noLimiter: true, webhooks: reg})
}

// GET /webhooks pages through more endpoints than fit on one page: each
// page holds the next ones in creation order, total counts them all, and
// the pages together hold each endpoint once.
func TestWebhookListPages(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, _ storetest.Backend, db *store.DB) {
		srv := webhookServer(t, db)
		key, _ := srv.create(t, api.CreateKeyRequest{Organization: "clinic-pages"})
		other, _ := srv.create(t, api.CreateKeyRequest{Organization: "clinic-other"})
		var created []string
		for i := range 5 {
			r := srv.call(t, "POST", "/webhooks", key, map[string]any{"url": "http://127.0.0.1:9/" + strconv.Itoa(i), "events": []string{"eligibility.verified"}})
			require.Equal(t, 201, r.status, r.body)
			created = append(created, r.body["id"].(string))
		}
		require.Equal(t, 201, srv.call(t, "POST", "/webhooks", other, map[string]any{"url": "http://127.0.0.1:9/x", "events": []string{"eligibility.verified"}}).status)

		var paged []string
		for _, p := range []struct{ offset, want int }{{0, 2}, {2, 2}, {4, 1}, {5, 0}, {9, 0}} {
			r := srv.call(t, "GET", "/webhooks?offset="+strconv.Itoa(p.offset)+"&limit=2", key, nil)
			require.Equal(t, 200, r.status, r.body)
			assert.EqualValues(t, 5, r.body["total"], "offset %d", p.offset)
			assert.EqualValues(t, p.offset, r.body["offset"])
			assert.EqualValues(t, 2, r.body["limit"])
			page := r.body["webhooks"].([]any)
			require.Len(t, page, p.want, "offset %d", p.offset)
			for _, e := range page {
				paged = append(paged, e.(map[string]any)["id"].(string))
			}
		}
		assert.Equal(t, created, paged, "the pages, in order, are the endpoints oldest first")

		c, err := client.New(srv.url, client.WithAPIKey(key))
		require.NoError(t, err)
		page, err := c.ListWebhooksPage(t.Context(), 3, 2)
		require.NoError(t, err)
		assert.Equal(t, 5, page.Total)
		require.Len(t, page.Items, 2)
		assert.Equal(t, created[3:5], []string{page.Items[0].ID, page.Items[1].ID})
	})
}

// A retried POST /webhooks with the same Idempotency-Key, from the same
// key, replays the first answer, secret included (documented in
// docs/decisions/webhooks.md): one endpoint is created, not two.
func TestWebhookCreateReplayReturnsTheSameSecret(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, storetest.Backend{Name: "sqlite", DSN: storetest.SQLiteDSN(t)})
	srv := webhookServer(t, db)
	key, _ := srv.create(t, api.CreateKeyRequest{Organization: "clinic-idem"})
	body := map[string]any{"url": "http://127.0.0.1:9/h", "events": []string{"eligibility.verified"}}
	first := srv.call(t, "POST", "/webhooks", key, body, "Idempotency-Key: create-hook-1")
	require.Equal(t, 201, first.status, first.body)
	again := srv.call(t, "POST", "/webhooks", key, body, "Idempotency-Key: create-hook-1")
	require.Equal(t, 201, again.status, again.body)
	assert.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
	assert.Equal(t, first.body["id"], again.body["id"])
	assert.Equal(t, first.body["secret"], again.body["secret"])
	assert.EqualValues(t, 1, srv.call(t, "GET", "/webhooks", key, nil).body["total"])
}
