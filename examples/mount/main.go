// Command mount serves the whole healthagents service inside a program's own
// http.ServeMux, under a path prefix, beside the program's own routes.
// app.Open assembles what `healthagents serve` runs (database, API keys and
// rate limits, ZK proofs verified on the chain, webhooks, the v1 registry)
// from the same environment settings, and returns its http.Handler without
// opening a listener: the program keeps its server, middleware and
// shutdown.
//
//	go run ./examples/mount -addr 127.0.0.1:8080
//	curl http://127.0.0.1:8080/hello
//	curl http://127.0.0.1:8080/healthagents/health
//	open http://127.0.0.1:8080/healthagents/docs
//
// ADDR sets the default address; every other setting is the service's own
// (docs/decisions.md#settings): DATA_DIR (default ./data) keeps the database,
// the embedded chain, the ZK keys and, without FERNET_KEY, a generated
// Fernet key that `healthagents seal` uses too. The first start prints a
// one-time bootstrap token for the first API key. A client reaches the
// mounted API with client.New("http://127.0.0.1:8080/healthagents").
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/healthagents/healthagents/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mount:", err)
		os.Exit(1)
	}
}

// run serves until ctx ends, then shuts down gracefully. The first line it
// prints is "listening on http://<addr>".
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("mount", flag.ContinueOnError)
	fs.SetOutput(stdout)
	addr := fs.String("addr", or(getenv("ADDR"), "127.0.0.1:8080"), "address to listen on")
	prefix := fs.String("prefix", "/healthagents", "path prefix of the healthagents API")
	if err := fs.Parse(args); err != nil {
		return err
	}
	p := "/" + strings.Trim(*prefix, "/")
	if p == "/" {
		return errors.New("-prefix must name a path such as /healthagents")
	}

	cfg, err := app.ConfigFromEnv(getenv)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	svc, err := app.Open(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer svc.Close()
	api := svc.Handler

	// The program's own mux: its routes, and the API under the prefix.
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "hello from the host program")
	})
	mux.Handle(p+"/", http.StripPrefix(p, api))

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	fmt.Fprintf(stdout, "listening on http://%s (API under %s/)\n", ln.Addr(), p)
	// The one-time bootstrap token of a first start, once the API is reachable.
	if err := svc.WriteBootstrap(stdout, "http://"+ln.Addr().String()+p); err != nil {
		return err
	}

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	fmt.Fprintln(stdout, "stopped")
	return nil
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
