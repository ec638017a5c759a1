// Command webhook-receiver receives healthagents webhook deliveries and
// verifies each one with the Go SDK (client.ParseWebhook) before printing
// it. Deliveries are at least once, so it acknowledges a webhook-id it has
// seen before without printing it again.
//
// Either give it the secret of an endpoint registered earlier:
//
//	go run ./examples/webhook-receiver -addr 127.0.0.1:9000 -secret whsec_...
//
// or let it register itself with a running server (the key needs the
// webhooks scope; a development server must allow http and loopback URLs):
//
//	go run ./examples/webhook-receiver -addr 127.0.0.1:9000 \
//	    -register http://localhost:8000 -api-key sk_dev_...
//
// It prints one line per event: the webhook-id, the event name and its data.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	"github.com/healthagents/healthagents/client"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "webhook-receiver:", err)
		os.Exit(1)
	}
}

// maxBody bounds a delivery's body; the service's payloads are far smaller.
const maxBody = 1 << 20

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("webhook-receiver", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addr := fs.String("addr", "127.0.0.1:9000", "address to listen on")
	path := fs.String("path", "/webhook", "path deliveries are POSTed to")
	secret := fs.String("secret", os.Getenv("WEBHOOK_SECRET"), "the endpoint's whsec_ secret (or WEBHOOK_SECRET)")
	register := fs.String("register", "", "base URL of a healthagents server to register this receiver with")
	apiKey := fs.String("api-key", os.Getenv("HEALTHAGENTS_API_KEY"), "bearer key for -register (or HEALTHAGENTS_API_KEY)")
	events := fs.String("events", "eligibility.verified,prescription.validated,prescription.approved", "events to subscribe to with -register")
	tolerance := fs.Duration("tolerance", client.DefaultWebhookTolerance, "how old a delivery's timestamp may be")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *tolerance <= 0 {
		// The SDK refuses a zero tolerance rather than skip the replay check.
		return errors.New("-tolerance must be positive")
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	url := "http://" + ln.Addr().String() + *path
	fmt.Fprintf(stdout, "listening on %s\n", url)

	if *register != "" {
		c, err := client.New(*register, client.WithAPIKey(*apiKey))
		if err != nil {
			return err
		}
		ep, err := c.CreateWebhook(ctx, url, strings.Split(*events, ","))
		if err != nil {
			return fmt.Errorf("registering: %w", err)
		}
		*secret = ep.Secret
		fmt.Fprintf(stdout, "registered endpoint %s for %s\n", ep.ID, strings.Join(ep.Events, ", "))
	}
	if *secret == "" {
		return errors.New("give -secret, WEBHOOK_SECRET or -register")
	}

	h := &handler{secret: *secret, tolerance: *tolerance, out: stdout, seen: map[string]bool{}}
	mux := http.NewServeMux()
	mux.Handle("POST "+*path, h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}

type handler struct {
	secret    string
	tolerance time.Duration
	mu        sync.Mutex
	out       io.Writer
	seen      map[string]bool
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	ev, err := client.ParseWebhook(h.secret, r.Header, body, client.WithWebhookTolerance(h.tolerance))
	if err != nil {
		// Never act on an unverified body; 401 makes the sender retry,
		// which is right if our secret is the stale one.
		http.Error(w, "invalid signature", http.StatusUnauthorized)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seen[ev.ID] {
		w.WriteHeader(http.StatusNoContent) // a retry of what we already have
		return
	}
	h.seen[ev.ID] = true // a real receiver records ids durably, with the work they triggered
	fmt.Fprintf(h.out, "%s %s %s\n", ev.ID, ev.Event, ev.Data)
	w.WriteHeader(http.StatusNoContent)
}
