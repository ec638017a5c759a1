package webhook_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/store"
	"github.com/healthagents/healthagents/webhook"
)

// A registry takes the service's events into the outbox; a dispatcher
// delivers them, signed.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "webhook-example")
	defer os.RemoveAll(dir)
	db, err := store.Open(ctx, filepath.Join(dir, "db.sqlite"))
	if err != nil {
		panic(err)
	}
	defer db.Close()
	st, _ := store.NewWebhookStore(db)

	var secret string
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		// A real receiver verifies with client.VerifyWebhook.
		want, _ := webhook.Sign(secret, r.Header.Get("webhook-id"), timeOf(r), body)
		fmt.Println("signature ok:", r.Header.Get("webhook-signature") == want)
	}))
	defer receiver.Close()

	dev := []webhook.Option{webhook.AllowHTTP(), webhook.AllowLoopback()} // development only
	reg, _ := webhook.NewRegistry(st, dev...)
	disp, _ := webhook.NewDispatcher(st, dev...)
	ep, err := reg.Create(ctx, "org:clinic-a", webhook.CreateRequest{URL: receiver.URL, Events: []string{healthagents.EventEligibilityVerified}})
	if err != nil {
		panic(err)
	}
	secret = ep.Secret

	// healthagents.New(keyring, healthagents.WithEvents(reg)) makes the
	// service call Emit after each decision; here we call it directly.
	_ = reg.Emit(ctx, healthagents.Event{Type: healthagents.EventEligibilityVerified, PatientID: "PT-000123",
		Data: map[string]any{"coverage_percentage": 80, "requires_auth": false}})
	n, _ := disp.RunOnce(ctx)
	fmt.Println("attempted:", n)
	// Output:
	// signature ok: true
	// attempted: 1
}
