// Package storetest opens throwaway databases for tests: a SQLite file in
// t.TempDir() always, and PostgreSQL when HEALTHAGENTS_TEST_POSTGRES holds a
// connection URL, each test in its own fresh schema that is dropped when the
// test ends, so parallel tests and packages never see each other's rows.
package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/healthagents/healthagents/store"
)

// PostgresEnv names the environment variable holding the PostgreSQL URL.
const PostgresEnv = "HEALTHAGENTS_TEST_POSTGRES"

// Backend is one database a test runs against.
type Backend struct {
	Name string // "sqlite" or "postgres"
	// DSN opens the same database again (a second replica, a restart).
	DSN string
}

// Backends returns the backends available to t, each freshly created and
// cleaned up with t: SQLite always, PostgreSQL when PostgresEnv is set.
func Backends(t testing.TB) []Backend {
	t.Helper()
	bs := []Backend{{Name: "sqlite", DSN: SQLiteDSN(t)}}
	if os.Getenv(PostgresEnv) != "" {
		bs = append(bs, Backend{Name: "postgres", DSN: PostgresDSN(t)})
	}
	return bs
}

// SQLiteDSN returns the path of a new SQLite file under t.TempDir().
func SQLiteDSN(t testing.TB) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "test.db")
}

var schemaSeq atomic.Uint64

// PostgresDSN creates a fresh schema in the database named by PostgresEnv
// and returns a URL whose search_path selects it; the schema is dropped in
// t.Cleanup. It skips t when PostgresEnv is unset.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv(PostgresEnv)
	if base == "" {
		t.Skipf("%s is not set", PostgresEnv)
	}
	schema := fmt.Sprintf("t_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, schemaSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("storetest: %v", err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, `CREATE SCHEMA `+schema); err != nil {
		t.Fatalf("storetest: creating schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		db, err := sql.Open("pgx", base)
		if err != nil {
			t.Errorf("storetest: %v", err)
			return
		}
		defer db.Close()
		if _, err := db.ExecContext(ctx, `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			t.Errorf("storetest: dropping schema: %v", err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("storetest: %s is not a URL", PostgresEnv)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Open opens b, migrated, and closes it in t.Cleanup.
func Open(t testing.TB, b Backend, opts ...store.Option) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), b.DSN, opts...)
	if err != nil {
		t.Fatalf("storetest: opening %s: %v", b.Name, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// ForEach runs fn as a parallel subtest per backend, with the database
// open and migrated.
func ForEach(t *testing.T, fn func(t *testing.T, b Backend, db *store.DB)) {
	t.Helper()
	for _, b := range Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, b, Open(t, b))
		})
	}
}

// IsPostgres reports whether a DSN names PostgreSQL.
func IsPostgres(dsn string) bool { return strings.HasPrefix(dsn, "postgres") }
