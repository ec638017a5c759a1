// Command mount serves the healthagents HTTP API inside a program's own
// http.ServeMux, under a path prefix, beside the program's own routes.
// server.New returns an http.Handler and opens no listener: the program
// keeps its server, middleware and shutdown.
//
//	go run ./examples/mount -addr 127.0.0.1:8080
//	curl http://127.0.0.1:8080/hello
//	curl http://127.0.0.1:8080/healthagents/health
//
// ADDR sets the default address. FERNET_KEY is the key patient envelopes are
// sealed with; without it a fresh key is generated for this run (and not
// shown), so only this process's callers could seal for it. A client reaches
// the mounted API with client.New("http://127.0.0.1:8080/healthagents").
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

	"github.com/healthagents/healthagents"
	"github.com/healthagents/healthagents/cipher"
	"github.com/healthagents/healthagents/server"
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

	kr, err := keyring(getenv("FERNET_KEY"))
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stdout, &slog.HandlerOptions{Level: slog.LevelWarn}))
	svc, err := healthagents.New(kr, healthagents.WithLogger(logger))
	if err != nil {
		return err
	}
	api, err := server.New(server.Deps{Service: svc}, server.WithLogger(logger))
	if err != nil {
		return err
	}

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

func keyring(key string) (*cipher.Keyring, error) {
	if key == "" {
		var err error
		if key, err = cipher.GenerateKey(); err != nil {
			return nil, err
		}
	}
	kr, err := cipher.ParseKeyring(key)
	if err != nil {
		return nil, fmt.Errorf("FERNET_KEY: %w", err)
	}
	return kr, nil
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
