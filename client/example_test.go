package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/client"
	"github.com/healthagents/healthagents/record"
)

// exampleServer stands in for a running healthagents server.
func exampleServer() *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, `{"status":"healthy","version":"0.1.0","message":"Healthcare agents service is running"}`)
	})
	mux.HandleFunc("POST /verify-eligibility", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, `{"detail":"Procedure code PROC999 not found"}`)
	})
	return httptest.NewServer(mux)
}

func ExampleNew() {
	srv := exampleServer()
	defer srv.Close()

	c, err := client.New(srv.URL, // e.g. "http://localhost:8000"
		client.WithAPIKey("sk_dev_..."), // optional on the root family
		client.WithTimeout(10*time.Second),
		client.WithMaxAttempts(5),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	h, err := c.Health(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(h.Status, h.Version)
	// Output: healthy 0.1.0
}

func ExampleSealRecord() {
	key, _ := cipher.GenerateKey() // in practice: the server's FERNET_KEY
	env, err := client.SealRecord(&record.Record{
		PatientID: "PT-000123",
		Coverage: &record.Coverage{
			MemberID: "W123456789", Status: "active", Start: "2026-01-01", End: "2026-12-31",
		},
	}, key)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(env.PatientID, len(env.DataHash), env.IPFSCID[:7])
	// Output: PT-000123 64 bafkrei
}

func ExampleIsNotFound() {
	srv := exampleServer()
	defer srv.Close()
	c, _ := client.New(srv.URL)

	env := &healthagents.PatientData{ /* from client.SealRecord */ }
	_, err := c.VerifyEligibility(context.Background(), env, "PROC999")

	fmt.Println(client.IsNotFound(err))
	var ce *client.Error
	if errors.As(err, &ce) {
		fmt.Println(ce.StatusCode, ce.Code, ce.Detail)
	}
	// The same check works for errors of the in-process service.
	fmt.Println(healthagents.ErrorCode(err) == healthagents.CodeNotFound)
	// Output:
	// true
	// 404 not_found Procedure code PROC999 not found
	// true
}

func ExampleClient_With() {
	srv := exampleServer()
	defer srv.Close()
	c, _ := client.New(srv.URL)

	var info client.ResponseInfo
	call := c.With(
		client.WithIdempotencyKey("order-2026-000042"), // a key of your own: safe to repeat across restarts
		client.WithTimeout(5*time.Second),
		client.WithResponseInfo(&info),
	)
	_, err := call.VerifyEligibility(context.Background(), &healthagents.PatientData{}, "PROC999")
	fmt.Println(info.StatusCode, info.Attempts, info.IdempotencyKey, err != nil)
	// Output: 404 1 order-2026-000042 true
}

func ExamplePaginate() {
	// A list endpoint's method wraps its page fetch in Paginate; here a
	// fetch over a slice stands in for one.
	names := []string{"a", "b", "c", "d", "e"}
	fetch := func(_ context.Context, offset, limit int) (client.Page[string], error) {
		end := min(offset+limit, len(names))
		return client.Page[string]{Items: names[min(offset, end):end], Total: len(names)}, nil
	}
	for name, err := range client.Paginate(context.Background(), 2, fetch) {
		if err != nil {
			fmt.Println(err)
			break
		}
		fmt.Print(name, " ")
	}
	fmt.Println()
	// Output: a b c d e
}

func ExampleRateLimitOf() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Limit", "10")
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("Retry-After", "120") // longer than the client waits on its own (60 s)
		writeJSON(w, http.StatusTooManyRequests, `{"detail":"Rate limit exceeded. Try again in 60 seconds."}`)
	}))
	defer srv.Close()
	c, _ := client.New(srv.URL)

	_, err := c.Status(context.Background())
	if client.IsRateLimited(err) {
		rl := client.RateLimitOf(err)
		fmt.Printf("rate limited (%d/%d left); retry after %s\n", rl.Remaining, rl.Limit, rl.RetryAfter)
	}
	// Output: rate limited (0/10 left); retry after 2m0s
}
