package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/healthagents/healthagents/app"
)

// Server timeouts: bounded so slow clients cannot hold connections forever.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 60 * time.Second
	idleTimeout       = 120 * time.Second
	shutdownTimeout   = 20 * time.Second
)

// serve runs the service until ctx is cancelled (SIGTERM/SIGINT), then shuts
// down gracefully. If ready is not nil, the listening address is sent on it.
func serve(ctx context.Context, cfg app.Config, logger *slog.Logger, ready chan<- string) error {
	a, err := app.Open(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer a.Close()

	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)))
	if err != nil {
		return err
	}
	maxConns := cfg.MaxConnections
	if maxConns == 0 {
		maxConns = defaultMaxConnections
	}
	ln = limitConnections(ln, maxConns)
	srv := &http.Server{
		Handler:           a.Handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		// TLS 1.2 is the floor (NIST SP 800-52r2, which HIPAA guidance
		// points to), stated here so no GODEBUG setting can lower it.
		TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12},
	}
	scheme := "http"
	if cfg.TLSCertFile != "" {
		scheme = "https"
	}
	logger.Info("healthagents listening", "addr", scheme+"://"+ln.Addr().String())
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
