package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/healthagents/healthagents/app"
)

// httpLimits are the limits of the binary's HTTP server: bounded so slow
// or idle clients cannot hold connections forever.
type httpLimits struct {
	readHeader     time.Duration // the request line and headers
	read           time.Duration // the whole request, body included
	write          time.Duration // from the end of the headers to the end of the answer
	idle           time.Duration // a keep-alive connection between requests
	maxHeaderBytes int
}

// defaultHTTPLimits: 5 s for the headers (a slowloris client is cut off
// then), 30 s for a whole request (the clients' request timeout), 60 s to
// answer, 75 s idle. The idle timeout stays above the 60 s that common
// load balancers keep pooled connections open, so they, not we, close
// them; idle connections no longer need a short timeout to make room, the
// connection limiter closes the idlest at the cap.
func defaultHTTPLimits() httpLimits {
	return httpLimits{readHeader: 5 * time.Second, read: 30 * time.Second, write: 60 * time.Second, idle: 75 * time.Second, maxHeaderBytes: 64 << 10}
}

const shutdownTimeout = 20 * time.Second

// listenCause is the innermost reason of a failed listen ("address already
// in use", "no such host"), without repeating the address.
func listenCause(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}

// newHTTPServer is the binary's http.Server around h, with lim, its error
// log on logger and, with conns, the connection limiter told of every
// connection's state.
func newHTTPServer(h http.Handler, logger *slog.Logger, lim httpLimits, conns *connLimiter) *http.Server {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: lim.readHeader,
		ReadTimeout:       lim.read,
		WriteTimeout:      lim.write,
		IdleTimeout:       lim.idle,
		MaxHeaderBytes:    lim.maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		// TLS 1.2 is the floor (NIST SP 800-52r2, which HIPAA guidance
		// points to), stated here so no GODEBUG setting can lower it.
		TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12},
	}
	if conns != nil {
		srv.ConnState = conns.track
	}
	return srv
}

// serve runs the service until ctx is cancelled (SIGTERM/SIGINT), then shuts
// down gracefully. If ready is not nil, the listening address is sent on it.
func serve(ctx context.Context, cfg app.Config, logger *slog.Logger, ready chan<- string) error {
	// The listening socket first: a bad HOST or a busy port fails before
	// keys, chain, database or a bootstrap token are made. Connections
	// that arrive while the service opens wait in the kernel's backlog.
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)))
	if err != nil {
		return fmt.Errorf("HOST, PORT: cannot listen on %s: %w", net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)), listenCause(err))
	}
	defer ln.Close()
	a, err := app.Open(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer a.Close()
	maxConns := cfg.MaxConnections
	if maxConns == 0 {
		maxConns = defaultMaxConnections
	}
	conns := limitConnections(ln, maxConns)
	srv := newHTTPServer(a.Handler, logger, defaultHTTPLimits(), conns)
	ln = conns
	scheme := "http"
	if cfg.TLSCertFile != "" {
		scheme = "https"
	}
	logger.Info("healthagents listening", "addr", scheme+"://"+ln.Addr().String())
	// The one-time bootstrap token (first start, no ADMIN_TOKEN, no key),
	// shown to the operator once the API is reachable.
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok {
		if err := a.WriteBootstrap(os.Stderr, fmt.Sprintf("%s://localhost:%d", scheme, tcp.Port)); err != nil {
			return err
		}
	}
	if ready != nil {
		ready <- ln.Addr().String()
	}
	errc := make(chan error, 1)
	go func() {
		if cfg.TLSCertFile != "" {
			errc <- srv.ServeTLS(ln, cfg.TLSCertFile, cfg.TLSKeyFile)
		} else {
			errc <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
