package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migration is one schema change.
type Migration struct {
	Version int     // unique, increasing; from the file name's NNNN prefix
	Name    string  // file name, for schema_migrations and error messages
	Dialect Dialect // "" for portable SQL applied on both engines
	SQL     string  // statements separated by semicolons at line ends
}

// ParseMigrations reads the migrations of fsys's root directory, named as the
// package documentation says, sorted by version. A version used twice for the
// same engine is an error.
func ParseMigrations(fsys fs.FS) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("store: reading migrations: %w", err)
	}
	var ms []Migration
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".sql") {
			continue
		}
		prefix, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(prefix)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("store: migration %s: name must start with a positive number and _", name)
		}
		m := Migration{Version: v, Name: name}
		switch {
		case strings.HasSuffix(name, ".sqlite.sql"):
			m.Dialect = SQLite
		case strings.HasSuffix(name, ".postgres.sql"):
			m.Dialect = Postgres
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("store: migration %s: %w", name, err)
		}
		m.SQL = string(b)
		ms = append(ms, m)
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for _, d := range []Dialect{SQLite, Postgres} {
		seen := map[int]string{}
		for _, m := range ms {
			if m.Dialect != "" && m.Dialect != d {
				continue
			}
			if prev, dup := seen[m.Version]; dup {
				return nil, fmt.Errorf("store: migrations %s and %s share version %d", prev, m.Name, m.Version)
			}
			seen[m.Version] = m.Name
		}
	}
	return ms, nil
}

func embeddedMigrations() ([]Migration, error) {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	return ParseMigrations(sub)
}

// migrationLockKey is the first half of the PostgreSQL advisory lock key;
// the second is a hash of the current schema, so databases that hold several
// schemas (tests) migrate them independently.
const migrationLockKey = 0x6865616c // "heal"

// migrate applies the pending migrations in one transaction under a lock.
func (d *DB) migrate(ctx context.Context, ms []Migration) (err error) {
	tx, err := d.db.BeginTx(ctx, nil) // SQLite: BEGIN IMMEDIATE (see _txlock)
	if err != nil {
		return fmt.Errorf("store: migration transaction: %w", redactErr(err))
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if d.dialect == Postgres {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))`, migrationLockKey); err != nil {
			return fmt.Errorf("store: migration lock: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version BIGINT PRIMARY KEY,
		name TEXT NOT NULL,
		applied_at BIGINT NOT NULL)`); err != nil {
		return fmt.Errorf("store: creating schema_migrations: %w", err)
	}
	applied := map[int]bool{}
	rows, err := tx.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return fmt.Errorf("store: reading schema_migrations: %w", err)
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return err
		}
		applied[v] = true
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("store: reading schema_migrations: %w", err)
	}
	for _, m := range ms {
		if applied[m.Version] || (m.Dialect != "" && m.Dialect != d.dialect) {
			continue
		}
		for _, stmt := range splitStatements(m.SQL) {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("store: migration %s: %w", m.Name, err)
			}
		}
		if _, err := tx.ExecContext(ctx, d.Rebind(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`),
			m.Version, m.Name, Micros(time.Now())); err != nil {
			return fmt.Errorf("store: recording migration %s: %w", m.Name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: committing migrations: %w", err)
	}
	return nil
}

// AppliedMigrations lists the versions recorded in schema_migrations.
func (d *DB) AppliedMigrations(ctx context.Context) ([]int, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var vs []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	return vs, rows.Err()
}

// splitStatements splits a migration at semicolons that end a line, dropping
// "--" comment lines, so each statement runs alone (drivers differ on
// multi-statement Exec). A statement that needs an inner ";" at a line end
// (a function body) belongs in a dialect-specific file written with the
// semicolon mid-line.
func splitStatements(src string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(src, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(t, ";") {
			if s := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(cur.String()), ";")); s != "" {
				out = append(out, s)
			}
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}

// inTx runs fn in a transaction, committing when it returns nil.
func (d *DB) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}
