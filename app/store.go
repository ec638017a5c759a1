package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/healthagents/healthagents/apikey"
	"github.com/healthagents/healthagents/ratelimit"
	"github.com/healthagents/healthagents/ratelimit/redisstore"
	"github.com/healthagents/healthagents/store"
)

// databaseFile is the embedded default database under DATA_DIR.
const databaseFile = "healthagents.db"

// DSN returns the database the service uses: DATABASE_URL, else the SQLite
// file under DATA_DIR.
func (c Config) DSN() string {
	if c.DatabaseURL != "" {
		return c.DatabaseURL
	}
	return filepath.Join(c.DataDir, databaseFile)
}

// OpenStore opens the database (migrating it) — what the service and the
// offline `healthagents keys` command share.
func OpenStore(ctx context.Context, cfg Config) (*store.DB, error) {
	db, err := store.Open(ctx, cfg.DSN())
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	return db, nil
}

// openAccess builds the key service and the rate limiter on db.
func (a *App) openAccess(ctx context.Context, logger *slog.Logger) error {
	ks, err := store.NewKeyStore(a.DB)
	if err != nil {
		return err
	}
	a.Keys, err = apikey.New(ks, apikey.WithAdminToken(a.Config.AdminToken), apikey.WithLogger(logger))
	if err != nil {
		return err
	}
	a.closers = append(a.closers, closerFunc(func() error { return a.Keys.Close(context.Background()) }))
	limiter, closeLimiter, err := redisstore.FromURL(a.Config.RedisURL, ratelimit.WithLogger(logger))
	if err != nil {
		return err
	}
	a.Limiter = limiter
	a.closers = append(a.closers, closerFunc(closeLimiter))
	if a.Config.AdminToken == "" && a.Config.Production {
		// Production prints no bootstrap token: without ADMIN_TOKEN, a key
		// made offline (`healthagents keys create`) is the only way in.
		n, err := ks.CountKeys(ctx)
		if err != nil {
			return fmt.Errorf("database: counting keys: %w", err)
		}
		if n == 0 {
			return productionRefusal([]string{noFirstKey})
		}
	}
	if a.Config.AdminToken == "" && !a.Config.Production {
		tok, err := a.Keys.IssueBootstrapToken(ctx)
		if err != nil {
			return err
		}
		// Kept for the program that serves the API to print once
		// (WriteBootstrap); opening the library prints nothing.
		a.bootstrapToken = tok
	}
	return nil
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

var _ io.Closer = closerFunc(nil)

// redactDSN hides a password in a database URL for logs.
func redactDSN(dsn string) string {
	if i := strings.Index(dsn, "://"); i >= 0 {
		if j := strings.LastIndex(dsn, "@"); j > i {
			return dsn[:i+3] + "…" + dsn[j:]
		}
	}
	return dsn
}

// BootstrapToken is the one-time bootstrap token issued by this Open (valid
// 24 h, it creates one API key), or "" when none was: ADMIN_TOKEN is set, a
// key exists, or production. Open prints nothing; the program serving the
// API shows it to its operator (WriteBootstrap).
func (a *App) BootstrapToken() string { return a.bootstrapToken }

// WriteBootstrap writes the bootstrap token, when one was issued, to w with
// the curl line that trades it for a key at base (the API's base URL, e.g.
// http://localhost:8000). It writes nothing when no token was issued. The
// one place a secret is shown: once, to the operator, at first start.
func (a *App) WriteBootstrap(w io.Writer, base string) error {
	if a.bootstrapToken == "" {
		return nil
	}
	_, err := fmt.Fprintf(w, "\nNo API key exists yet. One-time bootstrap token (valid 24 h, creates one key):\n\n    %s\n\n"+
		"    curl -s -X POST %s/auth/keys -H 'Authorization: Bearer %s'\n\n", a.bootstrapToken, strings.TrimSuffix(base, "/"), a.bootstrapToken)
	return err
}
