package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	_ "modernc.org/sqlite"             // registers the "sqlite" database/sql driver
)

// Dialect names the SQL engine behind a DB.
type Dialect string

// The supported engines.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// DefaultFile is the SQLite file name used when Open gets an empty DSN; the
// binary joins it to DATA_DIR.
const DefaultFile = "healthagents.db"

// ErrNotFound is returned when a row asked for by its identifier is absent.
var ErrNotFound = errors.New("store: not found")

// DB is an open database with its schema migrated.
type DB struct {
	db      *sql.DB
	dialect Dialect
}

type options struct {
	busyTimeout  time.Duration
	maxOpenConns int
	migrations   []Migration
}

// Option configures Open.
type Option func(*options) error

// WithBusyTimeout sets how long a SQLite writer waits for the write lock
// before failing with SQLITE_BUSY (default 5 s). Ignored for PostgreSQL.
func WithBusyTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d < 0 {
			return errors.New("store: negative busy timeout")
		}
		o.busyTimeout = d
		return nil
	}
}

// WithMaxOpenConns bounds the connection pool (default: 8 for SQLite, 20
// for PostgreSQL).
func WithMaxOpenConns(n int) Option {
	return func(o *options) error {
		if n <= 0 {
			return errors.New("store: max open connections must be positive")
		}
		o.maxOpenConns = n
		return nil
	}
}

// WithMigrations replaces the embedded migration list. It exists for tests of
// the migration machinery; the service uses the embedded list.
func WithMigrations(ms []Migration) Option {
	return func(o *options) error { o.migrations = ms; return nil }
}

// Open opens the database named by dsn and applies pending migrations.
//
// A dsn starting with postgres:// or postgresql:// opens PostgreSQL through
// pgx (any pgx connection parameter works, e.g. search_path or
// sslmode). Anything else is a SQLite file path (an optional "sqlite:" or
// "file:" prefix is removed); "" means DefaultFile in the working directory.
// SQLite runs in WAL mode with foreign keys on, a busy timeout, and every
// transaction started with BEGIN IMMEDIATE so writers queue instead of
// failing on lock upgrades.
func Open(ctx context.Context, dsn string, opts ...Option) (*DB, error) {
	o := options{busyTimeout: 5 * time.Second}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	if o.migrations == nil {
		ms, err := embeddedMigrations()
		if err != nil {
			return nil, err
		}
		o.migrations = ms
	}
	var (
		d   *DB
		err error
	)
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		d, err = openPostgres(dsn, o)
	} else {
		d, err = openSQLite(dsn, o)
	}
	if err != nil {
		return nil, err
	}
	if err := d.firstPing(ctx, o.busyTimeout); err != nil {
		d.db.Close()
		return nil, err
	}
	if err := d.migrate(ctx, o.migrations); err != nil {
		d.db.Close()
		return nil, err
	}
	return d, nil
}

func openPostgres(dsn string, o options) (*DB, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: opening PostgreSQL: %w", redactErr(err))
	}
	n := o.maxOpenConns
	if n == 0 {
		n = 20
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	db.SetConnMaxIdleTime(5 * time.Minute)
	return &DB{db: db, dialect: Postgres}, nil
}

func openSQLite(dsn string, o options) (*DB, error) {
	path := strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite:"), "file:")
	if i := strings.IndexByte(path, '?'); i >= 0 {
		return nil, errors.New("store: SQLite DSN takes a file path without query parameters")
	}
	if path == "" {
		path = DefaultFile
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("store: creating the database directory: %w", err)
		}
	}
	if err := ownerOnly(path); err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", o.busyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	u := url.URL{Scheme: "file", Opaque: path, RawQuery: q.Encode()}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, fmt.Errorf("store: opening SQLite: %w", err)
	}
	n := o.maxOpenConns
	if n == 0 {
		n = 8
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	return &DB{db: db, dialect: SQLite}, nil
}

// SQL returns the connection pool, for packages that run their own queries.
// Write queries with ? placeholders and pass them through Rebind.
func (d *DB) SQL() *sql.DB { return d.db }

// Dialect reports the engine.
func (d *DB) Dialect() Dialect { return d.dialect }

// Ping checks that the database answers; /health uses it.
func (d *DB) Ping(ctx context.Context) error {
	if err := d.db.PingContext(ctx); err != nil {
		return fmt.Errorf("store: ping: %w", redactErr(err))
	}
	return nil
}

// firstPing pings, retrying while SQLite reports the database busy: a new
// connection switches the file to WAL, which needs a lock the busy timeout
// does not cover, so replicas opening a fresh file together can collide.
func (d *DB) firstPing(ctx context.Context, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for delay := 5 * time.Millisecond; ; delay = min(delay*2, 200*time.Millisecond) {
		err := d.Ping(ctx)
		if err == nil || d.dialect != SQLite || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
	}
}

func isBusy(err error) bool {
	var sc sqliteCoder
	return errors.As(err, &sc) && sc.Code()&0xff == sqliteBusy
}

// Close closes the pool.
func (d *DB) Close() error { return d.db.Close() }

// Rebind rewrites ? placeholders into the engine's form ($1, $2, … for
// PostgreSQL). Question marks inside single-quoted literals, double-quoted
// identifiers and comments are left alone.
func (d *DB) Rebind(query string) string {
	if d.dialect != Postgres {
		return query
	}
	return rebindDollar(query)
}

func rebindDollar(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	n := 0
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(q) && q[j] != c {
				j++
			}
			if j >= len(q) {
				j = len(q) - 1
			}
			b.WriteString(q[i : j+1])
			i = j
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				j = len(q) - i - 1
			}
			b.WriteString(q[i : i+j+1])
			i += j
		case c == '?':
			n++
			fmt.Fprintf(&b, "$%d", n)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// redactErr drops a DSN's password from driver errors that may echo it.
func redactErr(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if i := strings.Index(msg, "://"); i >= 0 {
		if at := strings.IndexByte(msg[i:], '@'); at >= 0 {
			return errors.New(msg[:i+3] + "…" + msg[i+at:])
		}
	}
	return err
}

// Micros converts a time to the stored form, Unix microseconds. The zero
// time is stored as NULL by callers that use NullMicros.
func Micros(t time.Time) int64 { return t.UnixMicro() }

// FromMicros converts a stored Unix-microsecond value back to a UTC time.
func FromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// NullMicros stores the zero time as NULL.
func NullMicros(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMicro(), Valid: true}
}

// FromNullMicros reads a nullable time; NULL gives the zero time.
func FromNullMicros(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return FromMicros(v.Int64)
}

// ownerOnly creates the SQLite file (and makes it and its WAL and shared
// memory files) readable and writable by the service's user alone,
// whatever the umask or an earlier mode: the database holds keys' hashes,
// sealed secrets and patient registry envelopes.
func ownerOnly(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("store: creating the database file: %w", err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Chmod(p, 0o600); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("store: database file mode: %w", err)
		}
	}
	return nil
}
